// The record batch v2 header as the batch walkers read it (batch-index.cc,
// batch-scan.cc): field offsets from the batch start and big-endian readers.
// Layout: @seglog/records internal/layout.ts (Kafka's DefaultRecordBatch).
#ifndef SEGLOG_BATCH_LAYOUT_H_
#define SEGLOG_BATCH_LAYOUT_H_

#include <cstddef>
#include <cstdint>

namespace seglog {
namespace batch {

constexpr size_t kBaseOffsetOffset = 0;
constexpr size_t kLogOverhead = 12;  // baseOffset + batchLength: size = batchLength + 12
constexpr size_t kBatchLengthOffset = 8;
constexpr size_t kMagicOffset = 16;
constexpr size_t kCrcOffset = 17;
constexpr size_t kAttributesOffset = 21;  // the CRC covers [21, size)
constexpr size_t kBaseTimestampOffset = 27;
constexpr size_t kRecordsCountOffset = 57;
constexpr size_t kHeaderBytes = 61;  // the records start here

inline uint32_t ReadU32BE(const uint8_t* p) {
  return (static_cast<uint32_t>(p[0]) << 24) | (static_cast<uint32_t>(p[1]) << 16) |
         (static_cast<uint32_t>(p[2]) << 8) | static_cast<uint32_t>(p[3]);
}

inline int64_t ReadI64BE(const uint8_t* p) {
  return static_cast<int64_t>((static_cast<uint64_t>(ReadU32BE(p)) << 32) | ReadU32BE(p + 4));
}

}  // namespace batch
}  // namespace seglog

#endif  // SEGLOG_BATCH_LAYOUT_H_
