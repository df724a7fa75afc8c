// A Napi::AsyncWorker that settles a Promise. Execute() runs on the libuv
// threadpool (shared with node:fs, so every in-flight worker holds one of its
// UV_THREADPOOL_SIZE threads); it records an errno in err_ instead of
// throwing, and OnOK() on the JS thread resolves with Result() or rejects
// with an errno error. Subclasses own the fds they are given (dup()ed on the
// JS thread so a concurrent close() by the caller cannot make the worker
// touch an unrelated, reused fd number) and close them at the end of Execute.
#ifndef SEGLOG_PROMISE_WORKER_H_
#define SEGLOG_PROMISE_WORKER_H_

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "common.h"

namespace seglog {

class PromiseWorker : public Napi::AsyncWorker {
 public:
  PromiseWorker(Napi::Env env, const char* name)
      : Napi::AsyncWorker(env, name), deferred_(Napi::Promise::Deferred::New(env)) {}

  Napi::Promise Promise() { return deferred_.Promise(); }

  // Queues the job and returns its promise. Nothing may touch the worker
  // after this: it deletes itself once settled.
  Napi::Value Start() {
    Napi::Promise promise = Promise();
    Queue();
    return promise;
  }

 protected:
  void OnOK() override {
    Napi::Env env = Env();
    if (err_ != 0) {
      Napi::Object error = ErrnoError(env, err_, syscall_);
      Decorate(error);
      deferred_.Reject(error);
    } else {
      deferred_.Resolve(Result(env));
    }
  }

  virtual Napi::Value Result(Napi::Env env) = 0;
  // Adds operation-specific fields to an error (e.g. bytesSent).
  virtual void Decorate(Napi::Object error) { (void)error; }

  int err_ = 0;
  const char* syscall_ = "";

 private:
  Napi::Promise::Deferred deferred_;
};

// dup() with close-on-exec; on failure returns -1 with errno set.
inline int DupFd(int fd) {
  int copy;
  do {
    copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  } while (copy < 0 && errno == EINTR);
  return copy;
}

// A promise already rejected with an errno error (e.g. dup() failed).
inline Napi::Value RejectedErrno(Napi::Env env, int err, const char* syscall) {
  Napi::Promise::Deferred deferred = Napi::Promise::Deferred::New(env);
  deferred.Reject(ErrnoError(env, err, syscall));
  return deferred.Promise();
}

}  // namespace seglog

#endif  // SEGLOG_PROMISE_WORKER_H_
