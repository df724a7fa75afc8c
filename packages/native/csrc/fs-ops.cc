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

// One syscall on a dup()ed fd, on the threadpool: `op` returns 0 or an errno
// (it retries EINTR itself); the promise resolves undefined or rejects with
// that errno under `syscall`. fallocate and startWriteback are both this.
using FdRangeOp = int (*)(int fd, int64_t mode, int64_t offset, int64_t length);

class FdRangeWorker : public PromiseWorker {
 public:
  FdRangeWorker(Napi::Env env, const char* name, const char* syscall, FdRangeOp op, int fd,
                int64_t mode, int64_t offset, int64_t length)
      : PromiseWorker(env, name), op_(op), fd_(fd), mode_(mode), offset_(offset), length_(length) {
    syscall_ = syscall;
  }

  void Execute() override {
    err_ = op_(fd_, mode_, offset_, length_);
    close(fd_);
  }

 protected:
  Napi::Value Result(Napi::Env env) override { return env.Undefined(); }

 private:
  FdRangeOp op_;
  int fd_;
  int64_t mode_, offset_, length_;
};

// Dups `fd` (a concurrent close by the caller cannot make the job touch a reused fd) and queues `op`.
Napi::Value QueueFdRange(Napi::Env env, const char* name, const char* syscall, FdRangeOp op, int64_t fd,
                         int64_t mode, int64_t offset, int64_t length) {
  int copy = DupFd(static_cast<int>(fd));
  if (copy < 0) return RejectedErrno(env, errno, errno == EBADF ? syscall : "dup");
  FdRangeWorker* worker = new FdRangeWorker(env, name, syscall, op, copy, mode, offset, length);
  return worker->Start();
}

int FallocateOp(int fd, int64_t mode, int64_t offset, int64_t length) {
  return FallocateRetry(fd, static_cast<int>(mode), offset, length);
}

Napi::Value FallocateAsync(const Napi::CallbackInfo& info) {
  FallocateArgs a;
  if (!ParseFallocate(info, &a)) return info.Env().Undefined();
  return QueueFdRange(info.Env(), "seglog:fallocate", "fallocate", FallocateOp, a.fd, a.mode, a.offset, a.length);
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

// sync_file_range(2) SYNC_FILE_RANGE_WRITE: starts the writeback of a range's
// dirty pages without waiting for it. No durability: a hint that spreads the
// disk's work over time (RocksDB's bytes_per_sync).
int WritebackOp(int fd, int64_t mode, int64_t offset, int64_t length) {
  (void)mode;
  int r;
  do {
    r = ::sync_file_range(fd, static_cast<off_t>(offset), static_cast<off_t>(length), SYNC_FILE_RANGE_WRITE);
  } while (r < 0 && errno == EINTR);
  return r < 0 ? errno : 0;
}

Napi::Value StartWriteback(const Napi::CallbackInfo& info) {
  int64_t fd, offset, length;
  if (!ArgInt64(info, 0, 0, INT32_MAX, "startWriteback: fd must be an integer >= 0", &fd) ||
      !ArgInt64(info, 1, 0, kMaxSafeInteger, "startWriteback: offset must be an integer >= 0", &offset) ||
      !ArgInt64(info, 2, 1, kMaxSafeInteger, "startWriteback: length must be an integer >= 1", &length)) {
    return info.Env().Undefined();
  }
  return QueueFdRange(info.Env(), "seglog:startWriteback", "sync_file_range", WritebackOp, fd, 0, offset, length);
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

#endif  // __linux__: elsewhere addon.cc marks these features false

}  // namespace seglog
