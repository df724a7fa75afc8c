// The validation pass of one producer batch in one call (any platform):
//   scanBatch(buf: Uint8Array, start, end, io: Float64Array): number
// For the batch buf[start, end) (end - start >= 61, its size as framed by the
// caller) it computes the CRC-32C of [start + 21, end) and, for an
// uncompressed CreateTime batch, walks its recordsCount records exactly as
// records' internal/fast-scan.ts does: the same accepted forms (varints of at
// most 4 bytes, varlongs of at most 7, bases below 2^52), the same give-ups
// and the same findings. A give-up is not an error: the caller's strict pass
// decides (and words) every rejection.
//   io in:  [0] now  [1] timestampBeforeMaxMs  [2] timestampAfterMaxMs
//           (Infinity when unbounded)  [3] rule bits: 1 bound timestamps
//           (a CreateTime topic), 2 compacted (a null key is an error)
//   io out: [4] the computed CRC  [5] maxTimestamp  [6] maxTimestampIndex
//           [7] offset deltas consecutive (1 or 0)  [8] keyErrorIndex
//           [9] timestampErrorIndex  [10] timestampError
//           ([5, 10] only when bit 2 of the result is set)
// Returns bits: 1 the stored CRC equals the computed one, 2 the walk accepted
// every record (io[5, 10] hold its findings).
//
// Why: the append path's validation was a CRC call (~0.8 us for a 10 KB
// batch of 100 records, ~0.1 us of it N-API) plus the JavaScript walk
// (~2.2 us); here both are one call (issue 18).
#include <cmath>

#include "batch-layout.h"
#include "common.h"
#include "crc32c.h"

namespace seglog {
namespace {

// The v2 header offsets and readers.
using namespace batch;  // NOLINT(build/namespaces): an internal header of these walkers
constexpr int kResultCrcOk = 1;
constexpr int kResultScanned = 2;
constexpr int kRuleBoundTimestamps = 1;
constexpr int kRuleCompacted = 2;
constexpr int64_t kBaseLimit = int64_t{1} << 52;
constexpr size_t kIoLength = 11;

// fast-scan's varintAt: a zig-zag varint of at most 4 bytes before `limit`
// into *value; the position after it, or 0 (never a valid position here: the
// records start at 61) when it gives up.
inline size_t VarintAt(const uint8_t* buf, size_t p, size_t limit, int32_t* value) {
  if (p >= limit) return 0;
  uint32_t b = buf[p++];
  uint32_t u = b & 0x7f;
  for (int shift = 7; b >= 0x80; shift += 7) {
    if (shift == 28 || p >= limit) return 0;
    b = buf[p++];
    u |= (b & 0x7f) << shift;
  }
  *value = static_cast<int32_t>((u >> 1) ^ (0u - (u & 1)));
  return p;
}

// fast-scan's varlongAt: a zig-zag varlong of at most 7 bytes (|n| < 2^48).
inline size_t VarlongAt(const uint8_t* buf, size_t p, size_t limit, int64_t* value) {
  if (p >= limit) return 0;
  uint64_t b = buf[p++];
  uint64_t u = b & 0x7f;
  for (int i = 1; b >= 0x80; i++) {
    if (i == 7 || p >= limit) return 0;
    b = buf[p++];
    u |= (b & 0x7f) << (7 * i);
  }
  *value = static_cast<int64_t>((u >> 1) ^ (0 - (u & 1)));
  return p;
}

// A length varint of a key, value or header value at *p: -1 (null) up to the
// bytes left before `limit`; moves *p past the varint and the bytes.
inline bool Field(const uint8_t* buf, size_t* p, size_t limit, int32_t min, int32_t* length) {
  const size_t q = VarintAt(buf, *p, limit, length);
  if (q == 0 || *length < min || (*length > 0 && static_cast<size_t>(*length) > limit - q)) return false;
  *p = q + (*length > 0 ? static_cast<size_t>(*length) : 0);
  return true;
}

struct Findings {
  int64_t maxTimestamp = -1;
  int32_t maxTimestampIndex = -1;
  bool consecutive = true;
  int32_t keyErrorIndex = -1;
  int32_t timestampErrorIndex = -1;
  int64_t timestampError = 0;
};

// fastScanRecords: true when all `count` records of buf[p, end) are well
// formed and use the payload exactly; `f` then holds the findings.
bool ScanRecords(const uint8_t* buf, size_t p, size_t end, int32_t count, int64_t baseTimestamp,
                 const double* rules, Findings* f) {
  const double now = rules[0], beforeMaxMs = rules[1], afterMaxMs = rules[2];
  const int bits = static_cast<int>(rules[3]);  // 0..3, checked by ScanBatch
  const bool bound = (bits & kRuleBoundTimestamps) != 0;
  const bool compacted = (bits & kRuleCompacted) != 0;
  for (int32_t index = 0; index < count; index++) {
    int32_t length = 0;
    p = VarintAt(buf, p, end, &length);
    if (p == 0 || length <= 0 || static_cast<size_t>(length) > end - p) return false;
    const size_t limit = p + static_cast<size_t>(length);
    p++;  // attributes
    int64_t timestampDelta = 0;
    int32_t offsetDelta = 0, keyLength = 0, valueLength = 0, headers = 0;
    if ((p = VarlongAt(buf, p, limit, &timestampDelta)) == 0) return false;
    if ((p = VarintAt(buf, p, limit, &offsetDelta)) == 0) return false;
    if (!Field(buf, &p, limit, -1, &keyLength) || !Field(buf, &p, limit, -1, &valueLength)) return false;
    if ((p = VarintAt(buf, p, limit, &headers)) == 0) return false;
    if (headers < 0 || static_cast<size_t>(headers) > limit - p) return false;
    for (int32_t h = 0; h < headers; h++) {
      int32_t keyBytes = 0, valueBytes = 0;
      if (!Field(buf, &p, limit, 0, &keyBytes) || !Field(buf, &p, limit, -1, &valueBytes)) return false;
    }
    if (p != limit) return false;
    const int64_t timestamp = baseTimestamp + timestampDelta;
    if (offsetDelta != index) f->consecutive = false;
    if (timestamp > f->maxTimestamp) {
      f->maxTimestamp = timestamp;
      f->maxTimestampIndex = index;
    }
    if (compacted && keyLength < 0) {
      if (f->keyErrorIndex < 0) f->keyErrorIndex = index;
    } else if (f->timestampErrorIndex < 0 && bound && timestamp != -1) {
      // The same double arithmetic as the JavaScript walk (timestamp is exact: below 2^53).
      const double t = static_cast<double>(timestamp);
      if (now - t > beforeMaxMs || t - now > afterMaxMs) {
        f->timestampErrorIndex = index;
        f->timestampError = timestamp;
      }
    }
  }
  return p == end;
}

// Raw N-API (see crc32c-binding.cc): four arguments, one result.
napi_value ScanBatch(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok) return nullptr;
  void* data = nullptr;
  void* ioData = nullptr;
  size_t length = 0, ioLength = 0;
  int64_t start = 0, end = 0;
  if (argc < 4 || !RawTypedArray(env, argv[0], napi_uint8_array, &data, &length) ||
      !RawTypedArray(env, argv[3], napi_float64_array, &ioData, &ioLength) || ioLength < kIoLength ||
      napi_get_value_int64(env, argv[1], &start) != napi_ok || napi_get_value_int64(env, argv[2], &end) != napi_ok ||
      start < 0 || end - start < static_cast<int64_t>(kHeaderBytes) || static_cast<uint64_t>(end) > length) {
    napi_throw_type_error(env, nullptr,
                          "scanBatch: need a Uint8Array, 0 <= start, start + 61 <= end <= buf.length, and a "
                          "Float64Array of 11");
    return nullptr;
  }
  double* io = static_cast<double*>(ioData);
  const double rules = io[3];
  if (!(rules >= 0 && rules <= (kRuleBoundTimestamps | kRuleCompacted) && rules == static_cast<int>(rules))) {
    napi_throw_type_error(env, nullptr, "scanBatch: io[RULES] must be an integer of rule bits (0..3)");
    return nullptr;
  }
  const uint8_t* b = static_cast<const uint8_t*>(data) + start;
  const size_t size = static_cast<size_t>(end - start);
  const uint32_t crc = Crc32cValue(0, b + kAttributesOffset, size - kAttributesOffset, Crc32cHardwareAvailable());
  int result = crc == ReadU32BE(b + kCrcOffset) ? kResultCrcOk : 0;
  io[4] = crc;
  const uint32_t attributes = (static_cast<uint32_t>(b[kAttributesOffset]) << 8) | b[kAttributesOffset + 1];
  const int64_t baseTimestamp = ReadI64BE(b + kBaseTimestampOffset);
  // fast-scan's preconditions: uncompressed, CreateTime, bases that keep the sums exact.
  if ((attributes & 0x0f) == 0 && baseTimestamp > -kBaseLimit && baseTimestamp < kBaseLimit &&
      ReadI64BE(b + kBaseOffsetOffset) < kBaseLimit) {
    Findings f;
    const int32_t count = static_cast<int32_t>(ReadU32BE(b + kRecordsCountOffset));
    if (ScanRecords(b, kHeaderBytes, size, count, baseTimestamp, io, &f)) {
      result |= kResultScanned;
      io[5] = static_cast<double>(f.maxTimestamp);
      io[6] = f.maxTimestampIndex;
      io[7] = f.consecutive ? 1 : 0;
      io[8] = f.keyErrorIndex;
      io[9] = f.timestampErrorIndex;
      io[10] = static_cast<double>(f.timestampError);
    }
  }
  napi_value out = nullptr;
  napi_create_int32(env, result, &out);
  return out;
}

}  // namespace

void InitBatchScan(Napi::Env env, Napi::Object exports) {
  napi_value fn = nullptr;
  NAPI_THROW_IF_FAILED_VOID(env, napi_create_function(env, "scanBatch", NAPI_AUTO_LENGTH, ScanBatch, nullptr, &fn));
  exports.Set("scanBatch", Napi::Value(env, fn));
}

}  // namespace seglog
