// pwritev(2) then fdatasync(2) of the same file in ONE threadpool job (Linux
// only; features.pwritevDatasync is false elsewhere and the name is absent).
//   pwritevDatasync(fd, buffers, position): Promise<void>
// resolves once every byte of `buffers` (Uint8Arrays, 1..IOV_MAX of them) is
// written at `position` and an fdatasync issued after the write completed has
// returned success: every byte written to the file before the call, by any
// handle, is then durable too. Why one job: a durable append otherwise pays
// two threadpool round trips (a write job, then a sync job), each a worker
// wake-up plus a completion on the event loop (issue 18).
//
// Short writes continue from where they stopped; EINTR is retried; a call
// that makes no progress fails (errno EIO, `noProgress: true`). A failed
// write rejects with syscall 'pwritev' and never syncs; a failed sync rejects
// with syscall 'fdatasync' (the write happened; nothing may be acknowledged:
// the caller fails stop, never retries the sync). Both reject with
// `bytesWritten`.
//
// The fd is dup()ed on the JS thread (a concurrent close cannot make the job
// touch a reused fd number); the iovecs are copied and every buffer is held
// by a reference until the job ends, so the caller may reuse its array.
#include "common.h"
#include "promise-worker.h"

#ifdef __linux__
#include <limits.h>
#include <sys/uio.h>
#include <unistd.h>

#include <vector>
#endif

namespace seglog {

#ifdef __linux__
namespace {

class PwritevDatasyncWorker : public PromiseWorker {
 public:
  PwritevDatasyncWorker(Napi::Env env, int fd, int64_t position)
      : PromiseWorker(env, "seglog:pwritevDatasync"), fd_(fd), position_(position) {}

  // Called on the JS thread before Queue(): one iovec per buffer, each buffer kept alive.
  void Add(Napi::Object buffer, uint8_t* data, size_t length) {
    iov_.push_back(iovec{data, length});
    refs_.push_back(Napi::Persistent(buffer));
    total_ += static_cast<int64_t>(length);
  }

  void Execute() override {
    if (Write()) Sync();
    close(fd_);
  }

 protected:
  Napi::Value Result(Napi::Env env) override { return env.Undefined(); }
  void Decorate(Napi::Object error) override {
    error.Set("bytesWritten", Napi::Number::New(error.Env(), static_cast<double>(written_)));
    if (noProgress_) error.Set("noProgress", Napi::Boolean::New(error.Env(), true));
  }

 private:
  // True when every byte is written.
  bool Write() {
    size_t first = 0;
    while (written_ < total_) {
      int count = static_cast<int>(iov_.size() - first);
      ssize_t n = ::pwritev(fd_, &iov_[first], count, static_cast<off_t>(position_ + written_));
      if (n < 0) {
        if (errno == EINTR) continue;
        return Fail(errno, "pwritev");
      }
      if (n == 0) {
        noProgress_ = true;
        return Fail(EIO, "pwritev");
      }
      written_ += n;
      // Skip the iovecs this call finished; trim the one it stopped inside.
      size_t left = static_cast<size_t>(n);
      while (first < iov_.size() && left >= iov_[first].iov_len) {
        left -= iov_[first].iov_len;
        first++;
      }
      if (left > 0) {
        iov_[first].iov_base = static_cast<uint8_t*>(iov_[first].iov_base) + left;
        iov_[first].iov_len -= left;
      }
    }
    return true;
  }

  void Sync() {
    int r;
    do {
      r = ::fdatasync(fd_);
    } while (r < 0 && errno == EINTR);
    if (r < 0) Fail(errno, "fdatasync");
  }

  bool Fail(int err, const char* syscall) {
    err_ = err;
    syscall_ = syscall;
    return false;
  }

  int fd_;
  int64_t position_;
  int64_t total_ = 0;
  int64_t written_ = 0;
  bool noProgress_ = false;
  std::vector<iovec> iov_;
  std::vector<Napi::ObjectReference> refs_;
};

Napi::Value PwritevDatasync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int64_t fd, position;
  if (!ArgInt64(info, 0, 0, INT32_MAX, "pwritevDatasync: fd must be an integer >= 0", &fd)) {
    return env.Undefined();
  }
  if (info.Length() < 2 || !info[1].IsArray()) {
    ThrowType(env, "pwritevDatasync: buffers must be an array of Uint8Arrays");
    return env.Undefined();
  }
  Napi::Array buffers = info[1].As<Napi::Array>();
  uint32_t count = buffers.Length();
  if (count == 0 || count > IOV_MAX) {
    ThrowType(env, "pwritevDatasync: buffers must hold 1..IOV_MAX Uint8Arrays");
    return env.Undefined();
  }
  if (!ArgInt64(info, 2, 0, kMaxSafeInteger, "pwritevDatasync: position must be an integer >= 0",
                &position)) {
    return env.Undefined();
  }
  // Checked before the dup, so a TypeError never leaks a descriptor.
  std::vector<std::pair<uint8_t*, size_t>> views(count);
  int64_t total = 0;
  for (uint32_t i = 0; i < count; i++) {
    Napi::Value item = buffers[i];
    bool isTypedArray = false;
    napi_typedarray_type type;
    void* raw = nullptr;
    size_t length = 0;
    if (napi_is_typedarray(env, item, &isTypedArray) != napi_ok || !isTypedArray ||
        napi_get_typedarray_info(env, item, &type, &length, &raw, nullptr, nullptr) != napi_ok ||
        type != napi_uint8_array) {
      ThrowType(env, "pwritevDatasync: buffers must be an array of Uint8Arrays");
      return env.Undefined();
    }
    views[i] = {static_cast<uint8_t*>(raw), length};
    total += static_cast<int64_t>(length);
  }
  if (total > kMaxSafeInteger - position) {
    ThrowType(env, "pwritevDatasync: position + length must be a safe integer");
    return env.Undefined();
  }
  int copy = DupFd(static_cast<int>(fd));
  if (copy < 0) return RejectedErrno(env, errno, errno == EBADF ? "pwritev" : "dup");
  PwritevDatasyncWorker* worker = new PwritevDatasyncWorker(env, copy, position);
  for (uint32_t i = 0; i < count; i++) {
    Napi::Value item = buffers[i];
    worker->Add(item.As<Napi::Object>(), views[i].first, views[i].second);
  }
  return worker->Start();
}

}  // namespace

void InitPwritevDatasync(Napi::Env env, Napi::Object exports, Napi::Object features) {
  ExportFeature(env, exports, features, "pwritevDatasync", PwritevDatasync);
}

#endif  // __linux__: elsewhere addon.cc marks these features false

}  // namespace seglog
