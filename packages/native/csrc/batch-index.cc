// One call for a window of record batches (any platform):
//   indexBatches(buf: Uint8Array, from, to, batches: Int32Array, records: Int32Array): number
//   indexBatchesAsync(same arguments): Promise<number>   the same walk as a threadpool job
// Walks the whole v2 batches of buf[from, to) and, for each, writes one entry
// of 4 int32s to `batches`:
//   [0] start (position in buf)   [1] size (batchLength + 12)
//   [2] flags: bit 0 the CRC-32C of bytes [21, size) equals the stored CRC,
//              bit 1 the records are indexed
//   [3] the batch's first record entry (entry number, not int32 index) in `records`
// and, for an uncompressed batch whose every record has the form
// RecordCursor's fast path accepts (varints of at most 3 bytes, no headers,
// each record's length exact, the payload used up exactly by recordsCount
// records), one entry of 8 int32s per record:
//   [recordStart, attributes, timestampDelta, offsetDelta, keyPosition,
//    keyLength, valuePosition, valueLength]
// (the record ends at valuePosition + max(valueLength, 0) + 1). A batch that
// is compressed, has another record form or does not fit the records left is
// entered without bit 1: the cursor decodes it in JavaScript, which decides
// everything it throws. Returns the number of entries written; it stops
// before a partial batch, a size below the 61-byte v2 header, a magic other
// than 2, or a full `batches` array, and the caller handles what is left.
//
// Why: RecordCursor's per-record decode was ~23 ns a record in JavaScript,
// the largest item of a sequential read (issue 18); the per-call N-API cost
// (~1 us) is paid once per window here, not per batch.
#include <vector>

#include "batch-layout.h"
#include "common.h"
#include "crc32c.h"
#include "promise-worker.h"

namespace seglog {
namespace {

// The v2 header offsets and readers.
using namespace batch;  // NOLINT(build/namespaces): an internal header of these walkers
constexpr int32_t kFlagCrcOk = 1;
constexpr int32_t kFlagIndexed = 2;
constexpr size_t kBatchStride = 4;
constexpr size_t kRecordStride = 8;

// RecordCursor's shortVarint: a varint of at most 3 bytes, all before
// `limit`. Sets *value (zig-zag decoded) and returns its byte count, or 0.
inline size_t ShortVarint(const uint8_t* buf, size_t p, size_t limit, int32_t* value) {
  if (p >= limit) return 0;
  uint32_t u = buf[p];
  size_t n = 1;
  if (u >= 0x80) {
    if (p + 1 >= limit) return 0;
    uint32_t b1 = buf[p + 1];
    if (b1 < 0x80) {
      u = (b1 << 7) | (u & 0x7f);
      n = 2;
    } else {
      if (p + 2 >= limit) return 0;
      uint32_t b2 = buf[p + 2];
      if (b2 >= 0x80) return 0;
      u = (b2 << 14) | ((b1 & 0x7f) << 7) | (u & 0x7f);
      n = 3;
    }
  }
  *value = static_cast<int32_t>((u >> 1) ^ (0u - (u & 1)));
  return n;
}

// A key or value at *p: its length varint (-1 for null, the fast form), then
// its bytes, all before `limit`. Sets *length and *position (of the bytes)
// and moves *p past them; false for anything else.
inline bool Field(const uint8_t* buf, size_t* p, size_t limit, int32_t* length, size_t* position) {
  const size_t n = ShortVarint(buf, *p, limit, length);
  if (n == 0 || *length < -1) return false;
  *position = *p + n;
  if (*length > 0 && static_cast<size_t>(*length) > limit - *position) return false;
  *p = *position + (*length > 0 ? static_cast<size_t>(*length) : 0);
  return true;
}

// Writes `count` record entries for the payload buf[p, end); false (entries
// written so far are garbage) unless every record has the fast form and the
// records use the payload exactly.
bool IndexRecords(const uint8_t* buf, size_t p, size_t end, int32_t count, int32_t* out) {
  for (int32_t i = 0; i < count; i++) {
    const size_t start = p;
    int32_t length, tsDelta, offDelta, keyLen, valueLen;
    size_t n = ShortVarint(buf, p, end, &length);
    if (n == 0) return false;
    p += n;
    if (length <= 0 || static_cast<size_t>(length) > end - p) return false;
    const size_t limit = p + static_cast<size_t>(length);
    const int32_t attrs = buf[p++];
    if ((n = ShortVarint(buf, p, limit, &tsDelta)) == 0) return false;
    p += n;
    if ((n = ShortVarint(buf, p, limit, &offDelta)) == 0) return false;
    p += n;
    size_t keyPos, valuePos;
    if (!Field(buf, &p, limit, &keyLen, &keyPos) || !Field(buf, &p, limit, &valueLen, &valuePos)) return false;
    // headersCount: 0 in its one-byte form, the record's last byte.
    if (p + 1 != limit || buf[p] != 0) return false;
    p++;
    int32_t* e = out + static_cast<size_t>(i) * kRecordStride;
    e[0] = static_cast<int32_t>(start);
    e[1] = attrs;
    e[2] = tsDelta;
    e[3] = offDelta;
    e[4] = static_cast<int32_t>(keyPos);
    e[5] = keyLen;
    e[6] = static_cast<int32_t>(valuePos);
    e[7] = valueLen;
  }
  return p == end;
}

bool ArgInt32Array(napi_env env, napi_value value, int32_t** data, size_t* length) {
  void* raw = nullptr;
  if (!RawTypedArray(env, value, napi_int32_array, &raw, length)) return false;
  *data = static_cast<int32_t*>(raw);
  return true;
}

// The walk itself (see the top of the file); returns the batch entries written.
size_t IndexWindow(const uint8_t* buf, size_t from, size_t to, int32_t* batches, size_t batchCapacity,
                   int32_t* records, size_t recordCapacity) {
  const bool hardware = Crc32cHardwareAvailable();
  size_t used = 0;  // record entries
  size_t count = 0;
  size_t p = from;
  while (count < batchCapacity && to - p >= kLogOverhead) {
    const int32_t batchLength = static_cast<int32_t>(ReadU32BE(buf + p + kBatchLengthOffset));
    if (batchLength < static_cast<int32_t>(kHeaderBytes - kLogOverhead)) break;
    const size_t size = static_cast<size_t>(batchLength) + kLogOverhead;
    if (size > to - p || buf[p + kMagicOffset] != 2) break;
    const uint8_t* b = buf + p;
    int32_t flags = 0;
    if (Crc32cValue(0, b + kAttributesOffset, size - kAttributesOffset, hardware) == ReadU32BE(b + kCrcOffset)) {
      flags |= kFlagCrcOk;
    }
    const bool uncompressed = (b[kAttributesOffset + 1] & 0x07) == 0;
    const int32_t recordsCount = static_cast<int32_t>(ReadU32BE(b + kRecordsCountOffset));
    int32_t first = 0;
    if (uncompressed && recordsCount > 0 && static_cast<size_t>(recordsCount) <= recordCapacity - used &&
        IndexRecords(buf, p + kHeaderBytes, p + size, recordsCount, records + used * kRecordStride)) {
      flags |= kFlagIndexed;
      first = static_cast<int32_t>(used);
      used += static_cast<size_t>(recordsCount);
    }
    int32_t* e = batches + count * kBatchStride;
    e[0] = static_cast<int32_t>(p);
    e[1] = static_cast<int32_t>(size);
    e[2] = flags;
    e[3] = first;
    count++;
    p += size;
  }
  return count;
}

struct WindowArgs {
  uint8_t* buf;
  size_t from;
  size_t to;
  int32_t* batches;
  size_t batchCapacity;
  int32_t* records;
  size_t recordCapacity;
};

// argv: buf, from, to, batches, records. Throws a TypeError and returns false on bad arguments.
bool ParseWindowArgs(napi_env env, const napi_value* argv, size_t argc, WindowArgs* out) {
  size_t length = 0;
  void* data = nullptr;
  if (argc < 5 || !RawTypedArray(env, argv[0], napi_uint8_array, &data, &length)) {
    napi_throw_type_error(env, nullptr, "indexBatches: buf must be a Uint8Array");
    return false;
  }
  int64_t from = 0, to = 0;
  if (napi_get_value_int64(env, argv[1], &from) != napi_ok ||
      napi_get_value_int64(env, argv[2], &to) != napi_ok || from < 0 || to < from ||
      static_cast<uint64_t>(to) > length || to > INT32_MAX) {
    napi_throw_type_error(env, nullptr, "indexBatches: need 0 <= from <= to <= buf.length < 2^31");
    return false;
  }
  size_t batchesLength = 0, recordsLength = 0;
  if (!ArgInt32Array(env, argv[3], &out->batches, &batchesLength) ||
      !ArgInt32Array(env, argv[4], &out->records, &recordsLength)) {
    napi_throw_type_error(env, nullptr, "indexBatches: batches and records must be Int32Arrays");
    return false;
  }
  out->buf = static_cast<uint8_t*>(data);
  out->from = static_cast<size_t>(from);
  out->to = static_cast<size_t>(to);
  out->batchCapacity = batchesLength / kBatchStride;
  out->recordCapacity = recordsLength / kRecordStride;
  return true;
}

// Raw N-API (see crc32c-binding.cc): five arguments, one result.
napi_value IndexBatches(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok) return nullptr;
  WindowArgs a;
  if (!ParseWindowArgs(env, argv, argc, &a)) return nullptr;
  size_t count = IndexWindow(a.buf, a.from, a.to, a.batches, a.batchCapacity, a.records, a.recordCapacity);
  napi_value result = nullptr;
  napi_create_uint32(env, static_cast<uint32_t>(count), &result);
  return result;
}

// The same walk as one threadpool job: the three arrays are referenced until
// it ends, and the caller must not touch them before the promise settles.
class IndexBatchesWorker : public PromiseWorker {
 public:
  IndexBatchesWorker(Napi::Env env, const WindowArgs& args, const napi_value* argv)
      : PromiseWorker(env, "seglog:indexBatches"), args_(args) {
    for (size_t i : {0, 3, 4}) refs_.push_back(Napi::Persistent(Napi::Value(env, argv[i]).As<Napi::Object>()));
  }

  void Execute() override {
    count_ = IndexWindow(args_.buf, args_.from, args_.to, args_.batches, args_.batchCapacity, args_.records,
                         args_.recordCapacity);
  }

 protected:
  Napi::Value Result(Napi::Env env) override { return Napi::Number::New(env, static_cast<double>(count_)); }

 private:
  WindowArgs args_;
  std::vector<Napi::ObjectReference> refs_;
  size_t count_ = 0;
};

Napi::Value IndexBatchesAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  napi_value argv[5];
  size_t argc = info.Length() < 5 ? info.Length() : 5;
  for (size_t i = 0; i < argc; i++) argv[i] = info[i];
  WindowArgs a;
  if (!ParseWindowArgs(env, argv, argc, &a)) return env.Undefined();
  auto* worker = new IndexBatchesWorker(env, a, argv);
  return worker->Start();
}

}  // namespace

void InitBatchIndex(Napi::Env env, Napi::Object exports) {
  napi_value fn = nullptr;
  NAPI_THROW_IF_FAILED_VOID(env, napi_create_function(env, "indexBatches", NAPI_AUTO_LENGTH,
                                                     IndexBatches, nullptr, &fn));
  exports.Set("indexBatches", Napi::Value(env, fn));
  exports.Set("indexBatchesAsync", Napi::Function::New(env, IndexBatchesAsync, "indexBatchesAsync"));
}

}  // namespace seglog
