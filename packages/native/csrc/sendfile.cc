// sendfile(2) from a file to a socket, off the event loop (Linux only).
//   sendfile(socketFd, fileFd, position, length, idleTimeoutMs): Promise<number>
// resolves with the bytes sent: `length`, or fewer when the file ends first
// (a transfer that starts at or beyond EOF resolves 0 instead of spinning).
// The socket is non-blocking (libuv opens it so): EAGAIN waits in poll(POLLOUT)
// for at most idleTimeoutMs of no progress, then fails with ETIMEDOUT; EINTR
// is retried; partial sends continue from the kernel-updated offset. A
// failure rejects with an errno error carrying `bytesSent` (bytes already on
// the wire: the stream is no longer in a known state, close the socket).
//
// Both fds are dup()ed on the JS thread, so if the caller (or libuv, on a
// reset) closes them meanwhile, the worker still refers to the same socket
// and file, never to a reused fd number. A consequence: the TCP connection
// stays open until the worker ends, even if JS destroyed the socket.
//
// The caller must not write to the socket while a sendfile is in flight and
// must drain its own write queue first (socket.writableLength === 0).
// Each in-flight call holds one libuv threadpool thread, longest while it
// waits for a slow reader: bound the number of concurrent sendfiles.
#include "common.h"
#include "promise-worker.h"

#ifdef __linux__
#include <poll.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#endif

namespace seglog {

#ifdef __linux__
namespace {

// Test hooks: prove that a test exercised the EAGAIN path.
std::atomic<uint64_t> gSendfileCalls{0};
std::atomic<uint64_t> gSendfileWaits{0};

// Linux moves at most 0x7ffff000 bytes per call; stay well below.
constexpr int64_t kMaxChunkBytes = int64_t{1} << 30;

int64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

class SendfileWorker : public PromiseWorker {
 public:
  SendfileWorker(Napi::Env env, int socketFd, int fileFd, int64_t position, int64_t length,
                 int64_t idleTimeoutMs)
      : PromiseWorker(env, "seglog:sendfile"),
        socket_(socketFd),
        file_(fileFd),
        position_(position),
        length_(length),
        idleTimeoutMs_(idleTimeoutMs) {}

  void Execute() override {
    Transfer();
    close(socket_);
    close(file_);
  }

 protected:
  Napi::Value Result(Napi::Env env) override {
    return Napi::Number::New(env, static_cast<double>(sent_));
  }
  void Decorate(Napi::Object error) override {
    error.Set("bytesSent", Napi::Number::New(error.Env(), static_cast<double>(sent_)));
  }

 private:
  void Transfer() {
    off_t offset = static_cast<off_t>(position_);
    while (sent_ < length_) {
      size_t chunk = static_cast<size_t>(std::min(length_ - sent_, kMaxChunkBytes));
      gSendfileCalls.fetch_add(1, std::memory_order_relaxed);
      ssize_t n = ::sendfile(socket_, file_, &offset, chunk);
      if (n > 0) {
        sent_ += n;
        continue;
      }
      if (n == 0) return;  // end of file: report what was sent
      int err = errno;
      if (err == EINTR) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) {
        gSendfileWaits.fetch_add(1, std::memory_order_relaxed);
        err = WaitWritable();
        if (err == 0) continue;
        Fail(err, err == ETIMEDOUT ? "sendfile" : "poll");
        return;
      }
      Fail(err, "sendfile");
      return;
    }
  }

  // 0 when the socket may accept more bytes; else an errno.
  int WaitWritable() {
    const int64_t deadline = NowMs() + idleTimeoutMs_;
    for (;;) {
      int64_t remaining = deadline - NowMs();
      if (remaining <= 0) return ETIMEDOUT;
      pollfd p{socket_, POLLOUT, 0};
      int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(remaining, INT32_MAX)));
      if (r < 0) {
        if (errno == EINTR) continue;
        return errno;
      }
      if (r == 0) return ETIMEDOUT;
      if (p.revents & POLLNVAL) return EBADF;
      if (p.revents & POLLERR) {
        int soError = 0;
        socklen_t size = sizeof soError;
        if (getsockopt(socket_, SOL_SOCKET, SO_ERROR, &soError, &size) == 0 && soError != 0) {
          return soError;
        }
        return EPIPE;
      }
      if (p.revents & POLLOUT) return 0;
      if (p.revents & POLLHUP) return EPIPE;  // hung up and not writable: do not spin
    }
  }

  void Fail(int err, const char* syscall) {
    err_ = err;
    syscall_ = syscall;
  }

  int socket_;
  int file_;
  int64_t position_;
  int64_t length_;
  int64_t idleTimeoutMs_;
  int64_t sent_ = 0;
};

Napi::Value Sendfile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int64_t socketFd, fileFd, position, length, idleTimeoutMs;
  if (!ArgInt64(info, 0, 0, INT32_MAX, "sendfile: socketFd must be an integer >= 0", &socketFd) ||
      !ArgInt64(info, 1, 0, INT32_MAX, "sendfile: fileFd must be an integer >= 0", &fileFd) ||
      !ArgInt64(info, 2, 0, kMaxSafeInteger, "sendfile: position must be an integer >= 0",
                &position) ||
      !ArgInt64(info, 3, 0, kMaxSafeInteger, "sendfile: length must be an integer >= 0", &length) ||
      !ArgInt64(info, 4, 1, INT32_MAX, "sendfile: idleTimeoutMs must be an integer >= 1",
                &idleTimeoutMs)) {
    return env.Undefined();
  }
  int socketCopy = DupFd(static_cast<int>(socketFd));
  if (socketCopy < 0) return RejectedErrno(env, errno, errno == EBADF ? "sendfile" : "dup");
  int fileCopy = DupFd(static_cast<int>(fileFd));
  if (fileCopy < 0) {
    int err = errno;
    close(socketCopy);
    return RejectedErrno(env, err, err == EBADF ? "sendfile" : "dup");
  }
  SendfileWorker* worker =
      new SendfileWorker(env, socketCopy, fileCopy, position, length, idleTimeoutMs);
  return worker->Start();
}

Napi::Value DebugCounters(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object counters = Napi::Object::New(env);
  counters.Set("sendfileCalls",
               Napi::Number::New(env, static_cast<double>(gSendfileCalls.load())));
  counters.Set("sendfileWaits",
               Napi::Number::New(env, static_cast<double>(gSendfileWaits.load())));
  return counters;
}

}  // namespace

void InitSendfile(Napi::Env env, Napi::Object exports, Napi::Object features) {
  exports.Set("sendfile", Napi::Function::New(env, Sendfile, "sendfile"));
  exports.Set("debugCounters", Napi::Function::New(env, DebugCounters, "debugCounters"));
  features.Set("sendfile", Napi::Boolean::New(env, true));
}

#endif  // __linux__: elsewhere addon.cc marks these features false

}  // namespace seglog
