// Entry point of seglog_native.node. Exports (the JS loader in
// src/internal/loader.ts checks every name and abiVersion before use):
//   abiVersion, pageSize, features {fallocate, sendfile, fadvise, writeback, pwritevDatasync, pwritevMany},
//   crc32c, crc32cSoftware, crc32cHardware, crc32cHardwareAvailable,
//   fallocateSync, fallocate, startWriteback, fadvise, sendfile, debugCounters,
//   alignedAlloc, bufferAddressMod, pwritevDatasync, pwritevMany, indexBatches, indexBatchesAsync, scanBatch.
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <string>

#include "common.h"

namespace seglog {

// Bump when the exported surface changes, so a stale build is refused.
constexpr int kAbiVersion = 5;

bool ThrowType(Napi::Env env, const char* what) {
  Napi::TypeError::New(env, what).ThrowAsJavaScriptException();
  return false;
}

bool ArgInt64(const Napi::CallbackInfo& info, size_t i, int64_t min, int64_t max, const char* what,
              int64_t* out) {
  if (i >= info.Length() || !info[i].IsNumber()) return ThrowType(info.Env(), what);
  double d = info[i].As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(min) ||
      d > static_cast<double>(max)) {
    return ThrowType(info.Env(), what);
  }
  *out = static_cast<int64_t>(d);
  return true;
}

bool ArgBytes(const Napi::CallbackInfo& info, size_t i, const char* what, uint8_t** data,
              size_t* length) {
  if (i >= info.Length()) return ThrowType(info.Env(), what);
  napi_env env = info.Env();
  napi_value value = info[i];
  bool isTypedArray = false;
  if (napi_is_typedarray(env, value, &isTypedArray) != napi_ok || !isTypedArray) {
    return ThrowType(info.Env(), what);
  }
  napi_typedarray_type type;
  void* raw = nullptr;
  // data is already adjusted by the view's byte offset.
  if (napi_get_typedarray_info(env, value, &type, length, &raw, nullptr, nullptr) != napi_ok ||
      type != napi_uint8_array) {
    return ThrowType(info.Env(), what);
  }
  *data = static_cast<uint8_t*>(raw);
  return true;
}

Napi::Object ErrnoError(Napi::Env env, int err, const char* syscall) {
  std::string message = std::string(syscall) + ": " + std::strerror(err);
  Napi::Object error = Napi::Error::New(env, message).Value();
  error.Set("errno", Napi::Number::New(env, err));
  error.Set("syscall", Napi::String::New(env, syscall));
  return error;
}

namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("abiVersion", Napi::Number::New(env, kAbiVersion));
  long page = sysconf(_SC_PAGESIZE);
  exports.Set("pageSize", Napi::Number::New(env, page > 0 ? static_cast<double>(page) : 4096.0));
  Napi::Object features = Napi::Object::New(env);
  InitCrc32c(env, exports);
#ifdef __linux__
  InitFsOps(env, exports, features);
  InitSendfile(env, exports, features);
  InitPwritevDatasync(env, exports, features);
  InitPwritevMany(env, exports, features);
#else
  // The Linux-only files define no functions elsewhere: their features are false, their names absent.
  for (const char* name : {"fallocate", "fadvise", "writeback", "sendfile", "pwritevDatasync", "pwritevMany"}) {
    features.Set(name, Napi::Boolean::New(env, false));
  }
#endif
  InitAlignedAlloc(env, exports);
  InitBatchIndex(env, exports);
  InitBatchScan(env, exports);
  exports.Set("features", features);
  return exports;
}

}  // namespace
}  // namespace seglog

static Napi::Object InitSeglogNative(Napi::Env env, Napi::Object exports) {
  return seglog::Init(env, exports);
}

NODE_API_MODULE(seglog_native, InitSeglogNative)
