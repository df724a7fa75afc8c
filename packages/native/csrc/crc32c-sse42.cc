// Hardware CRC-32C with the SSE4.2 crc32 instruction. Only the functions
// below carry target("sse4.2"); the rest of the addon is built for the
// baseline x86-64 ISA, and the dispatcher checks __builtin_cpu_supports at
// run time, so the addon loads and works on CPUs without SSE4.2.
//
// One crc32 instruction has a latency of 3 cycles and a throughput of 1 per
// cycle, so a single dependency chain uses a third of the unit. Long buffers
// are split into three adjacent streams whose CRCs run interleaved; the three
// partial registers are then joined with the linear "shift by n zero bytes"
// operator: crc(A ++ B) = shift(crc(A), |B|) ^ crc0(B), where crc0 starts
// from a zero register. The shift operators for the two block sizes are
// applied through 4 x 256-entry tables built once.
#include "crc32c.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SEGLOG_HAVE_SSE42_PATH 1
#include <nmmintrin.h>
#endif

#include <cstring>

namespace seglog {

#ifdef SEGLOG_HAVE_SSE42_PATH
namespace {

constexpr size_t kLongBytes = 8192;  // per stream: 24 KiB per interleaved block
constexpr size_t kShortBytes = 256;  // per stream: 768 B per interleaved block

struct ShiftTable {
  uint32_t t[4][256];
};

void BuildShiftTable(ShiftTable* table, size_t zeroBytes) {
  // The operator is linear: build the images of the 32 basis bits, then
  // every byte value at every byte position as a XOR of those images.
  const uint32_t xpow = Crc32cXPow8n(zeroBytes);
  uint32_t basis[32];
  for (int bit = 0; bit < 32; bit++) basis[bit] = Crc32cMultiplyModP(1u << bit, xpow);
  for (int k = 0; k < 4; k++) {
    for (uint32_t n = 0; n < 256; n++) {
      uint32_t v = 0;
      for (int b = 0; b < 8; b++) {
        if (n & (1u << b)) v ^= basis[8 * k + b];
      }
      table->t[k][n] = v;
    }
  }
}

struct ShiftTables {
  ShiftTable longShift;
  ShiftTable shortShift;
  ShiftTables() {
    BuildShiftTable(&longShift, kLongBytes);
    BuildShiftTable(&shortShift, kShortBytes);
  }
};

const ShiftTables& Tables() {
  static const ShiftTables tables;  // thread-safe one-time initialisation
  return tables;
}

inline uint32_t Shift(const ShiftTable& s, uint32_t reg) {
  return s.t[0][reg & 0xff] ^ s.t[1][(reg >> 8) & 0xff] ^ s.t[2][(reg >> 16) & 0xff] ^
         s.t[3][reg >> 24];
}

inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

__attribute__((target("sse4.2"))) inline uint64_t Interleave3(uint64_t c0, const uint8_t* p,
                                                              size_t streamBytes,
                                                              const ShiftTable& shift) {
  uint64_t c1 = 0;
  uint64_t c2 = 0;
  const uint8_t* end = p + streamBytes;
  do {
    c0 = _mm_crc32_u64(c0, Load64(p));
    c1 = _mm_crc32_u64(c1, Load64(p + streamBytes));
    c2 = _mm_crc32_u64(c2, Load64(p + 2 * streamBytes));
    p += 8;
  } while (p < end);
  uint32_t reg = Shift(shift, static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
  return Shift(shift, reg) ^ static_cast<uint32_t>(c2);
}

}  // namespace

bool Crc32cHardwareAvailable() {
  static const bool available = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") != 0;
  }();
  return available;
}

__attribute__((target("sse4.2"))) uint32_t Crc32cRegisterHardware(uint32_t reg,
                                                                   const uint8_t* data,
                                                                   size_t len) {
  const uint8_t* p = data;
  while (len > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    reg = _mm_crc32_u8(reg, *p++);
    len--;
  }
  uint64_t c = reg;
  if (len >= 3 * kShortBytes) {
    const ShiftTables& tables = Tables();
    while (len >= 3 * kLongBytes) {
      c = Interleave3(c, p, kLongBytes, tables.longShift);
      p += 3 * kLongBytes;
      len -= 3 * kLongBytes;
    }
    while (len >= 3 * kShortBytes) {
      c = Interleave3(c, p, kShortBytes, tables.shortShift);
      p += 3 * kShortBytes;
      len -= 3 * kShortBytes;
    }
  }
  while (len >= 8) {
    c = _mm_crc32_u64(c, Load64(p));
    p += 8;
    len -= 8;
  }
  reg = static_cast<uint32_t>(c);
  while (len > 0) {
    reg = _mm_crc32_u8(reg, *p++);
    len--;
  }
  return reg;
}

#else  // no hardware path in this build

bool Crc32cHardwareAvailable() { return false; }

uint32_t Crc32cRegisterHardware(uint32_t reg, const uint8_t* data, size_t len) {
  return Crc32cRegisterSoftware(reg, data, len);
}

#endif

}  // namespace seglog
