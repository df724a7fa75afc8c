// Aligned, zero-filled memory for O_DIRECT I/O.
//   alignedAlloc(size, alignment): Buffer   posix_memalign + memset(0); the
//     zero fill also pre-touches every page (first touch on a VM is ~0.3
//     GB/s). Freed by a finalizer when the Buffer is collected; the size is
//     reported to V8 as external memory so GC pressure sees it.
//   bufferAddressMod(buf, modulus): number  address of buf's first byte mod
//     modulus: lets tests and the arena check alignment of any Uint8Array.
#include <cstdlib>
#include <cstring>

#include "common.h"

namespace seglog {
namespace {

// 2^32 is Node 20's buffer.constants.MAX_LENGTH; alignment up to 1 GiB.
constexpr int64_t kMaxAllocBytes = int64_t{1} << 32;
constexpr int64_t kMaxAlignment = int64_t{1} << 30;

void FreeAligned(Napi::Env env, uint8_t* data, void* hint) {
  int64_t size = static_cast<int64_t>(reinterpret_cast<uintptr_t>(hint));
  std::free(data);
  Napi::MemoryManagement::AdjustExternalMemory(env, -size);
}

Napi::Value AlignedAlloc(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int64_t size, alignment;
  if (!ArgInt64(info, 0, 1, kMaxAllocBytes, "alignedAlloc: size must be an integer in [1, 2^32]",
                &size) ||
      !ArgInt64(info, 1, static_cast<int64_t>(sizeof(void*)), kMaxAlignment,
                "alignedAlloc: alignment must be a power of two in [8, 2^30]", &alignment)) {
    return env.Undefined();
  }
  if ((alignment & (alignment - 1)) != 0) {
    ThrowType(env, "alignedAlloc: alignment must be a power of two in [8, 2^30]");
    return env.Undefined();
  }
  void* memory = nullptr;
  int err = posix_memalign(&memory, static_cast<size_t>(alignment), static_cast<size_t>(size));
  if (err != 0) {
    Napi::Error(env, ErrnoError(env, err, "posix_memalign")).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::memset(memory, 0, static_cast<size_t>(size));
  Napi::MemoryManagement::AdjustExternalMemory(env, size);
  void* hint = reinterpret_cast<void*>(static_cast<uintptr_t>(size));
  return Napi::Buffer<uint8_t>::New(env, static_cast<uint8_t*>(memory), static_cast<size_t>(size),
                                    FreeAligned, hint);
}

Napi::Value BufferAddressMod(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint8_t* data = nullptr;
  size_t length = 0;
  int64_t modulus;
  if (!ArgBytes(info, 0, "bufferAddressMod: buf must be a Uint8Array", &data, &length) ||
      !ArgInt64(info, 1, 1, INT32_MAX, "bufferAddressMod: modulus must be an integer >= 1",
                &modulus)) {
    return env.Undefined();
  }
  uintptr_t address = reinterpret_cast<uintptr_t>(data);
  return Napi::Number::New(env, static_cast<double>(address % static_cast<uintptr_t>(modulus)));
}

}  // namespace

void InitAlignedAlloc(Napi::Env env, Napi::Object exports) {
  exports.Set("alignedAlloc", Napi::Function::New(env, AlignedAlloc, "alignedAlloc"));
  exports.Set("bufferAddressMod", Napi::Function::New(env, BufferAddressMod, "bufferAddressMod"));
}

}  // namespace seglog
