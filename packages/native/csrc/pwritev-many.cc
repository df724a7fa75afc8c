// Several pwritev(2)s, to any files, in ONE threadpool job (Linux only;
// features.pwritevMany is false elsewhere and the name is absent).
//   pwritevMany(fds, positions, vectors): Promise<Array<Error | null>>
// Entry i writes every byte of vectors[i] (an array of 1..IOV_MAX
// Uint8Arrays) to fds[i] at positions[i]; the entries run in order, each to
// its end or its first error, and a failed entry does not stop the others.
// The promise resolves (never rejects) with one slot per entry: null when
// every byte was written, else an errno error (syscall 'pwritev',
// `bytesWritten`; a call that made no progress is errno EIO with
// `noProgress: true`).
//
// Why one job: every node:fs write is a threadpool job of its own, a worker
// wake-up and an event-loop completion each. A broker's produce request
// appends to many partitions in one turn; their writes gathered into one job
// cost one wake-up (issue 18: the writes' dispatch was the storing broker's
// largest item).
//
// The fds are NOT dup()ed (one syscall per entry would cost what this saves):
// the caller keeps every fd open until the promise settles (NodeIo counts its
// handles' in-flight operations and closes only after them). Every buffer is
// held by a reference until the job ends, so the caller may reuse the arrays,
// not the bytes.
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

struct Entry {
  int fd;
  int64_t position;
  size_t first;  // index of its first iovec
  size_t count;  // iovecs
  int64_t total;
  int64_t written;
  int err;
  bool noProgress;
};

class PwritevManyWorker : public PromiseWorker {
 public:
  explicit PwritevManyWorker(Napi::Env env) : PromiseWorker(env, "seglog:pwritevMany") {}

  void AddEntry(int fd, int64_t position) {
    entries_.push_back(Entry{fd, position, iov_.size(), 0, 0, 0, 0, false});
  }

  // Called on the JS thread before Queue(): a buffer of the last entry, kept alive.
  void AddBuffer(Napi::Object buffer, uint8_t* data, size_t length) {
    iov_.push_back(iovec{data, length});
    refs_.push_back(Napi::Persistent(buffer));
    Entry& e = entries_.back();
    e.count++;
    e.total += static_cast<int64_t>(length);
  }

  void Execute() override {
    for (Entry& e : entries_) Write(e);
  }

 protected:
  Napi::Value Result(Napi::Env env) override {
    Napi::Array out = Napi::Array::New(env, entries_.size());
    for (size_t i = 0; i < entries_.size(); i++) {
      const Entry& e = entries_[i];
      if (e.err == 0) {
        out.Set(static_cast<uint32_t>(i), env.Null());
        continue;
      }
      Napi::Object error = ErrnoError(env, e.err, "pwritev");
      error.Set("bytesWritten", Napi::Number::New(env, static_cast<double>(e.written)));
      if (e.noProgress) error.Set("noProgress", Napi::Boolean::New(env, true));
      out.Set(static_cast<uint32_t>(i), error);
    }
    return out;
  }

 private:
  void Write(Entry& e) {
    size_t first = e.first;
    const size_t end = e.first + e.count;
    while (e.written < e.total) {
      int count = static_cast<int>(end - first);
      ssize_t n = ::pwritev(e.fd, &iov_[first], count, static_cast<off_t>(e.position + e.written));
      if (n < 0) {
        if (errno == EINTR) continue;
        e.err = errno;
        return;
      }
      if (n == 0) {
        e.err = EIO;
        e.noProgress = true;
        return;
      }
      e.written += n;
      size_t left = static_cast<size_t>(n);
      while (first < end && left >= iov_[first].iov_len) {
        left -= iov_[first].iov_len;
        first++;
      }
      if (left > 0) {
        iov_[first].iov_base = static_cast<uint8_t*>(iov_[first].iov_base) + left;
        iov_[first].iov_len -= left;
      }
    }
  }

  std::vector<Entry> entries_;
  std::vector<iovec> iov_;
  std::vector<Napi::ObjectReference> refs_;
};

bool TypedBytes(Napi::Env env, Napi::Value item, uint8_t** data, size_t* length) {
  bool isTypedArray = false;
  napi_typedarray_type type;
  void* raw = nullptr;
  if (napi_is_typedarray(env, item, &isTypedArray) != napi_ok || !isTypedArray ||
      napi_get_typedarray_info(env, item, &type, length, &raw, nullptr, nullptr) != napi_ok ||
      type != napi_uint8_array) {
    return false;
  }
  *data = static_cast<uint8_t*>(raw);
  return true;
}

Napi::Value PwritevMany(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsArray() || !info[1].IsArray() || !info[2].IsArray()) {
    ThrowType(env, "pwritevMany: fds, positions and vectors must be arrays");
    return env.Undefined();
  }
  Napi::Array fds = info[0].As<Napi::Array>();
  Napi::Array positions = info[1].As<Napi::Array>();
  Napi::Array vectors = info[2].As<Napi::Array>();
  uint32_t n = fds.Length();
  if (n == 0 || positions.Length() != n || vectors.Length() != n) {
    ThrowType(env, "pwritevMany: fds, positions and vectors must have the same length >= 1");
    return env.Undefined();
  }
  // Everything is checked before the worker exists, so a TypeError leaves nothing behind.
  std::vector<int64_t> fdOf(n), positionOf(n);
  std::vector<std::pair<uint8_t*, size_t>> views;
  for (uint32_t i = 0; i < n; i++) {
    Napi::Value fd = fds[i];
    Napi::Value position = positions[i];
    Napi::Value vector = vectors[i];
    if (!fd.IsNumber() || !position.IsNumber() || !vector.IsArray()) {
      ThrowType(env, "pwritevMany: entry i is (fd number, position number, array of Uint8Arrays)");
      return env.Undefined();
    }
    double f = fd.As<Napi::Number>().DoubleValue();
    double p = position.As<Napi::Number>().DoubleValue();
    if (!(f >= 0 && f <= INT32_MAX && f == static_cast<double>(static_cast<int64_t>(f)))) {
      ThrowType(env, "pwritevMany: fds must be integers >= 0");
      return env.Undefined();
    }
    if (!(p >= 0 && p <= static_cast<double>(kMaxSafeInteger) &&
          p == static_cast<double>(static_cast<int64_t>(p)))) {
      ThrowType(env, "pwritevMany: positions must be safe integers >= 0");
      return env.Undefined();
    }
    Napi::Array items = vector.As<Napi::Array>();
    uint32_t count = items.Length();
    if (count == 0 || count > IOV_MAX) {
      ThrowType(env, "pwritevMany: every vector must hold 1..IOV_MAX Uint8Arrays");
      return env.Undefined();
    }
    int64_t total = 0;
    for (uint32_t j = 0; j < count; j++) {
      uint8_t* data = nullptr;
      size_t length = 0;
      if (!TypedBytes(env, items[j], &data, &length)) {
        ThrowType(env, "pwritevMany: every vector must hold 1..IOV_MAX Uint8Arrays");
        return env.Undefined();
      }
      views.emplace_back(data, length);
      total += static_cast<int64_t>(length);
    }
    if (total > kMaxSafeInteger - static_cast<int64_t>(p)) {
      ThrowType(env, "pwritevMany: position + length must be a safe integer");
      return env.Undefined();
    }
    fdOf[i] = static_cast<int64_t>(f);
    positionOf[i] = static_cast<int64_t>(p);
  }
  PwritevManyWorker* worker = new PwritevManyWorker(env);
  size_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    worker->AddEntry(static_cast<int>(fdOf[i]), positionOf[i]);
    Napi::Array items = vectors.Get(i).As<Napi::Array>();
    uint32_t count = items.Length();
    for (uint32_t j = 0; j < count; j++, k++) {
      Napi::Value item = items[j];
      worker->AddBuffer(item.As<Napi::Object>(), views[k].first, views[k].second);
    }
  }
  return worker->Start();
}

}  // namespace

void InitPwritevMany(Napi::Env env, Napi::Object exports, Napi::Object features) {
  ExportFeature(env, exports, features, "pwritevMany", PwritevMany);
}

#endif  // __linux__: elsewhere addon.cc marks these features false

}  // namespace seglog
