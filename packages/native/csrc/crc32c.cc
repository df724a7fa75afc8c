// Software CRC-32C: slicing-by-8 (eight 256-entry tables, 8 KiB, built at
// compile time), one table lookup per input byte but eight independent
// lookups per 8-byte word, so the loads overlap. See crc32c.h.
#include "crc32c.h"

#include <array>
#include <cstring>

namespace seglog {
namespace {

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t n = 0; n < 256; n++) {
    uint32_t c = n;
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ kCrc32cPoly : c >> 1;
    t[0][n] = c;
  }
  // t[k][n]: the register contribution of byte n followed by k zero bytes.
  for (uint32_t n = 0; n < 256; n++) {
    for (int k = 1; k < 8; k++) {
      uint32_t prev = t[k - 1][n];
      t[k][n] = (prev >> 8) ^ t[0][prev & 0xff];
    }
  }
  return t;
}

constexpr Tables kTables = MakeTables();
static_assert(kTables[0][1] == 0xF26B8303u, "CRC-32C table entry 1");
static_assert(kTables[0][128] == kCrc32cPoly, "CRC-32C table entry 128");

inline uint32_t LoadLe32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

}  // namespace

uint32_t Crc32cRegisterSoftware(uint32_t reg, const uint8_t* data, size_t len) {
  const uint8_t* p = data;
  while (len > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    reg = (reg >> 8) ^ kTables[0][(reg ^ *p++) & 0xff];
    len--;
  }
  while (len >= 8) {
    uint32_t lo = reg ^ LoadLe32(p);
    uint32_t hi = LoadLe32(p + 4);
    reg = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^ kTables[5][(lo >> 16) & 0xff] ^
          kTables[4][lo >> 24] ^ kTables[3][hi & 0xff] ^ kTables[2][(hi >> 8) & 0xff] ^
          kTables[1][(hi >> 16) & 0xff] ^ kTables[0][hi >> 24];
    p += 8;
    len -= 8;
  }
  while (len > 0) {
    reg = (reg >> 8) ^ kTables[0][(reg ^ *p++) & 0xff];
    len--;
  }
  return reg;
}

uint32_t Crc32cXPow8n(size_t n) {
  uint32_t xpow = 0x80000000u;  // x^0
  for (size_t i = 0; i < n * 8; i++) xpow = (xpow & 1) ? (xpow >> 1) ^ kCrc32cPoly : xpow >> 1;
  return xpow;
}

uint32_t Crc32cMultiplyModP(uint32_t a, uint32_t b) {
  // Add b * x^j for every coefficient x^j set in a.
  uint32_t product = 0;
  for (int j = 0; j < 32; j++) {
    if (a & (0x80000000u >> j)) product ^= b;
    b = (b & 1) ? (b >> 1) ^ kCrc32cPoly : b >> 1;
  }
  return product;
}

}  // namespace seglog
