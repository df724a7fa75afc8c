// fallocate(2), sync_file_range(2) and posix_fadvise(2) bindings (Linux only; on other systems
// features.fallocate / features.fadvise are false and the names are absent).
//   fallocateSync(fd, mode, offset, length): undefined   throws errno error
//   fallocate(fd, mode, offset, length): Promise<void>   on the threadpool
//   startWriteback(fd, offset, length): Promise<void>    sync_file_range(2)
//     SYNC_FILE_RANGE_WRITE on the threadpool (the fd is dup()ed)
//   fadvise(fd, offset, length, advice): undefined       advice 0..5 =
//     NORMAL, RANDOM, SEQUENTIAL, WILLNEED, DONTNEED, NOREUSE (mapped to the
//     platform's POSIX_FADV_* values here, which differ on some arches)
// mode is passed through: FALLOC_FL_* bits are the same on every Linux arch.
#include "common.h"
#include "promise-worker.h"

#ifdef __linux__
#include <fcntl.h>
#include <unistd.h>
#endif

namespace seglog {

#ifdef __linux__
namespace {

int FallocateRetry(int fd, int mode, int64_t offset, int64_t length) {
  int r;
  do {
    r = ::fallocate(fd, mode, static_cast<off_t>(offset), static_cast<off_t>(length));
  } while (r < 0 && errno == EINTR);
  return r < 0 ? errno : 0;
}

struct FallocateArgs {
  int64_t fd, mode, offset, length;
};

bool ParseFallocate(const Napi::CallbackInfo& info, FallocateArgs* a) {
  return ArgInt64(info, 0, 0, INT32_MAX, "fallocate: fd must be an integer >= 0", &a->fd) &&
         ArgInt64(info, 1, 0, 0xff, "fallocate: mode must be FALLOC_FL_* bits", &a->mode) &&
         ArgInt64(info, 2, 0, kMaxSafeInteger, "fallocate: offset must be an integer >= 0",
                  &a->offset) &&
         ArgInt64(info, 3, 1, kMaxSafeInteger, "fallocate: length must be an integer >= 1",
                  &a->length);
}

Napi::Value FallocateSync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  FallocateArgs a;
  if (!ParseFallocate(info, &a)) return env.Undefined();
  int err = FallocateRetry(static_cast<int>(a.fd), static_cast<int>(a.mode), a.offset, a.length);
  if (err != 0) Napi::Error(env, ErrnoError(env, err, "fallocate")).ThrowAsJavaScriptException();
  return env.Undefined();
}

class FallocateWorker : public PromiseWorker {
 public:
  FallocateWorker(Napi::Env env, int fd, const FallocateArgs& a)
      : PromiseWorker(env, "seglog:fallocate"), fd_(fd), args_(a) {}

  void Execute() override {
    err_ = FallocateRetry(fd_, static_cast<int>(args_.mode), args_.offset, args_.length);
    syscall_ = "fallocate";
    close(fd_);
  }

 protected:
  Napi::Value Result(Napi::Env env) override { return env.Undefined(); }

 private:
  int fd_;
  FallocateArgs args_;
};

Napi::Value FallocateAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  FallocateArgs a;
  if (!ParseFallocate(info, &a)) return env.Undefined();
  int fd = DupFd(static_cast<int>(a.fd));
  if (fd < 0) return RejectedErrno(env, errno, errno == EBADF ? "fallocate" : "dup");
  FallocateWorker* worker = new FallocateWorker(env, fd, a);
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

Napi::Value Fadvise(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int64_t fd, offset, length, advice;
  if (!ArgInt64(info, 0, 0, INT32_MAX, "fadvise: fd must be an integer >= 0", &fd) ||
      !ArgInt64(info, 1, 0, kMaxSafeInteger, "fadvise: offset must be an integer >= 0", &offset) ||
      !ArgInt64(info, 2, 0, kMaxSafeInteger, "fadvise: length must be an integer >= 0", &length) ||
      !ArgInt64(info, 3, 0, 5, "fadvise: advice must be 0..5", &advice)) {
    return env.Undefined();
  }
  static const int kAdvice[6] = {POSIX_FADV_NORMAL,   POSIX_FADV_RANDOM,   POSIX_FADV_SEQUENTIAL,
                                 POSIX_FADV_WILLNEED, POSIX_FADV_DONTNEED, POSIX_FADV_NOREUSE};
  // posix_fadvise returns the error number instead of setting errno.
  int err = posix_fadvise(static_cast<int>(fd), static_cast<off_t>(offset),
                          static_cast<off_t>(length), kAdvice[advice]);
  if (err != 0) Napi::Error(env, ErrnoError(env, err, "posix_fadvise")).ThrowAsJavaScriptException();
  return env.Undefined();
}

// sync_file_range(2) on the threadpool: starts (SYNC_FILE_RANGE_WRITE) the
// writeback of a range's dirty pages without waiting for it. No durability:
// a hint that spreads the disk's work over time (RocksDB's bytes_per_sync).
class WritebackWorker : public PromiseWorker {
 public:
  WritebackWorker(Napi::Env env, int fd, int64_t offset, int64_t length)
      : PromiseWorker(env, "seglog:startWriteback"), fd_(fd), offset_(offset), length_(length) {}

  void Execute() override {
    int r;
    do {
      r = ::sync_file_range(fd_, static_cast<off_t>(offset_), static_cast<off_t>(length_),
                            SYNC_FILE_RANGE_WRITE);
    } while (r < 0 && errno == EINTR);
    if (r < 0) {
      err_ = errno;
      syscall_ = "sync_file_range";
    }
    close(fd_);
  }

 protected:
  Napi::Value Result(Napi::Env env) override { return env.Undefined(); }

 private:
  int fd_;
  int64_t offset_;
  int64_t length_;
};

Napi::Value StartWriteback(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int64_t fd, offset, length;
  if (!ArgInt64(info, 0, 0, INT32_MAX, "startWriteback: fd must be an integer >= 0", &fd) ||
      !ArgInt64(info, 1, 0, kMaxSafeInteger, "startWriteback: offset must be an integer >= 0", &offset) ||
      !ArgInt64(info, 2, 1, kMaxSafeInteger, "startWriteback: length must be an integer >= 1", &length)) {
    return env.Undefined();
  }
  int copy = DupFd(static_cast<int>(fd));
  if (copy < 0) return RejectedErrno(env, errno, errno == EBADF ? "sync_file_range" : "dup");
  WritebackWorker* worker = new WritebackWorker(env, copy, offset, length);
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

}  // namespace

void InitFsOps(Napi::Env env, Napi::Object exports, Napi::Object features) {
  exports.Set("fallocateSync", Napi::Function::New(env, FallocateSync, "fallocateSync"));
  exports.Set("fallocate", Napi::Function::New(env, FallocateAsync, "fallocate"));
  exports.Set("fadvise", Napi::Function::New(env, Fadvise, "fadvise"));
  exports.Set("startWriteback", Napi::Function::New(env, StartWriteback, "startWriteback"));
  features.Set("fallocate", Napi::Boolean::New(env, true));
  features.Set("fadvise", Napi::Boolean::New(env, true));
  features.Set("writeback", Napi::Boolean::New(env, true));
}

#else

void InitFsOps(Napi::Env env, Napi::Object exports, Napi::Object features) {
  (void)exports;
  features.Set("fallocate", Napi::Boolean::New(env, false));
  features.Set("fadvise", Napi::Boolean::New(env, false));
  features.Set("writeback", Napi::Boolean::New(env, false));
}

#endif

}  // namespace seglog
