// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as used by Kafka
// record batches v2 and iSCSI. Two implementations of one function:
//   - software: slicing-by-8 tables, any CPU;
//   - hardware: the SSE4.2 crc32 instruction, 3-way interleaved for long
//     buffers, used only when the CPU reports SSE4.2 at run time.
//
// The "register" functions work on the raw CRC register (no pre/post
// inversion), so a buffer may be processed in pieces. The public convention
// (Crc32cValue) matches crc-32/crc32c.js and Kafka: seed is the previous
// result, 0 for a fresh CRC, so crc(b, crc(a, 0)) == crc(a ++ b, 0).
#ifndef SEGLOG_CRC32C_H_
#define SEGLOG_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace seglog {

constexpr uint32_t kCrc32cPoly = 0x82F63B78u;

uint32_t Crc32cRegisterSoftware(uint32_t reg, const uint8_t* data, size_t len);

// True when this build has a hardware path and the CPU supports it.
bool Crc32cHardwareAvailable();

// Precondition: Crc32cHardwareAvailable().
uint32_t Crc32cRegisterHardware(uint32_t reg, const uint8_t* data, size_t len);

// GF(2) polynomial arithmetic modulo P in the reflected representation (bit
// 31 is the coefficient of x^0). Bitwise and slow: used to build tables.
// The register after feeding n zero bytes is
// Crc32cMultiplyModP(reg, Crc32cXPow8n(n)).
uint32_t Crc32cXPow8n(size_t n);
uint32_t Crc32cMultiplyModP(uint32_t a, uint32_t b);

inline uint32_t Crc32cValue(uint32_t seed, const uint8_t* data, size_t len, bool hardware) {
  uint32_t reg = ~seed;
  reg = hardware ? Crc32cRegisterHardware(reg, data, len) : Crc32cRegisterSoftware(reg, data, len);
  return ~reg;
}

}  // namespace seglog

#endif  // SEGLOG_CRC32C_H_
