// JS bindings of the CRC-32C functions (see crc32c.h):
//   crc32c(buf: Uint8Array, seed: number): number            best available path
//   crc32cSoftware(buf, seed), crc32cHardware(buf, seed)     one path each (tests)
//   crc32cHardwareAvailable: boolean
// seed is converted with ToUint32, so a signed result of crc-32/crc32c.js
// chains too; the result is an unsigned 32-bit number.
#include "common.h"
#include "crc32c.h"

namespace seglog {
namespace {

enum class Path { kBest, kSoftware, kHardware };

// Raw N-API rather than node-addon-api wrappers: the call overhead (~100 ns
// per call on the 2-vCPU VM) dominates for the small buffers records hash,
// and four N-API calls are the minimum (arguments, view, seed, result).
template <Path path>
napi_value Crc32cBinding(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok) return nullptr;
  size_t length = 0;
  void* data = nullptr;
  if (argc < 2 || !RawTypedArray(env, argv[0], napi_uint8_array, &data, &length)) {
    napi_throw_type_error(env, nullptr, "crc32c: buf must be a Uint8Array");
    return nullptr;
  }
  uint32_t seed = 0;  // ToUint32 of a number; napi_number_expected otherwise
  if (napi_get_value_uint32(env, argv[1], &seed) != napi_ok) {
    napi_throw_type_error(env, nullptr, "crc32c: seed must be a number");
    return nullptr;
  }
  bool hardware = Crc32cHardwareAvailable();
  if (path == Path::kHardware && !hardware) {
    napi_throw_error(env, nullptr, "crc32cHardware: this CPU or build has no hardware CRC-32C");
    return nullptr;
  }
  if (path == Path::kSoftware) hardware = false;
  const uint8_t* bytes = length == 0 ? nullptr : static_cast<const uint8_t*>(data);
  napi_value result = nullptr;
  napi_create_uint32(env, Crc32cValue(seed, bytes, length, hardware), &result);
  return result;
}

void Define(Napi::Env env, Napi::Object exports, const char* name, napi_callback callback) {
  napi_value fn = nullptr;
  NAPI_THROW_IF_FAILED_VOID(env, napi_create_function(env, name, NAPI_AUTO_LENGTH, callback,
                                                     nullptr, &fn));
  exports.Set(name, Napi::Value(env, fn));
}

}  // namespace

void InitCrc32c(Napi::Env env, Napi::Object exports) {
  Define(env, exports, "crc32c", Crc32cBinding<Path::kBest>);
  Define(env, exports, "crc32cSoftware", Crc32cBinding<Path::kSoftware>);
  Define(env, exports, "crc32cHardware", Crc32cBinding<Path::kHardware>);
  exports.Set("crc32cHardwareAvailable", Napi::Boolean::New(env, Crc32cHardwareAvailable()));
}

}  // namespace seglog
