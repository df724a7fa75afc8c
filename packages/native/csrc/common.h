// Shared helpers for the N-API bindings: argument checks that throw a
// TypeError (never crash) and errno errors. Built without C++ exceptions
// (NODE_ADDON_API_DISABLE_CPP_EXCEPTIONS): a binding throws by setting a
// pending JavaScript exception and returning.
#ifndef SEGLOG_COMMON_H_
#define SEGLOG_COMMON_H_

#include <napi.h>

#include <cstddef>
#include <cstdint>

namespace seglog {

// Largest integer a JS number holds exactly (Number.MAX_SAFE_INTEGER).
constexpr int64_t kMaxSafeInteger = 9007199254740991LL;

// Throws a TypeError "<what>" and returns false.
bool ThrowType(Napi::Env env, const char* what);

// info[i] is an integer number in [min, max]; else throws TypeError.
bool ArgInt64(const Napi::CallbackInfo& info, size_t i, int64_t min, int64_t max, const char* what,
              int64_t* out);

// info[i] is a Uint8Array (Buffer included); data/length are of its view.
bool ArgBytes(const Napi::CallbackInfo& info, size_t i, const char* what, uint8_t** data,
              size_t* length);

// Raw N-API (no wrappers, for bindings whose per-call cost matters): the
// data (adjusted by the view's byte offset) and element count of `value` when
// it is a typed array of type `want`; false otherwise (nothing thrown).
inline bool RawTypedArray(napi_env env, napi_value value, napi_typedarray_type want, void** data,
                          size_t* length) {
  napi_typedarray_type type;
  return napi_get_typedarray_info(env, value, &type, length, data, nullptr, nullptr) == napi_ok &&
         type == want;
}

// An Error object with `errno` (positive number) and `syscall`; the JS
// layer adds the errno name. Message: "<syscall>: <strerror>".
Napi::Object ErrnoError(Napi::Env env, int err, const char* syscall);

// A feature of one function: exports[name] = fn and features[name] = true.
inline void ExportFeature(Napi::Env env, Napi::Object exports, Napi::Object features, const char* name,
                          Napi::Value (*fn)(const Napi::CallbackInfo&)) {
  exports.Set(name, Napi::Function::New(env, fn, name));
  features.Set(name, Napi::Boolean::New(env, true));
}

// Registration hooks, one per source file.
void InitCrc32c(Napi::Env env, Napi::Object exports);
// Linux only (defined under __linux__; addon.cc calls them there).
void InitFsOps(Napi::Env env, Napi::Object exports, Napi::Object features);
void InitSendfile(Napi::Env env, Napi::Object exports, Napi::Object features);
void InitPwritevDatasync(Napi::Env env, Napi::Object exports, Napi::Object features);
void InitPwritevMany(Napi::Env env, Napi::Object exports, Napi::Object features);
// Every platform.
void InitAlignedAlloc(Napi::Env env, Napi::Object exports);
void InitBatchIndex(Napi::Env env, Napi::Object exports);
void InitBatchScan(Napi::Env env, Napi::Object exports);

}  // namespace seglog

#endif  // SEGLOG_COMMON_H_
