// Encodes one record batch v2 (layout in layout.ts, record format in
// record-cursor.ts). Sizes are computed exactly first (one pass, body sizes
// kept for the writing pass), then the batch is written into one allocation (plus one temporary for the uncompressed
// records when a codec is used), then the CRC-32C over [21, end) is filled in.
// Inputs are trusted (built by seglog or its tests): violations are asserts.
import { assert } from '@seglog/common';
import { compress, type CodecId } from '../compression.js';
import { crc32c } from '../crc32c.js';
import { writeInt64 } from './int64.js';
import * as L from './layout.js';
import { putVarint, varintSize, varlongSize, writeVarlong } from './varint.js';

export type Bytes = Uint8Array | string;

export interface HeaderSpec {
  readonly key: string;
  /** undefined is written as null. */
  readonly value?: Bytes | null | undefined;
}

/**
 * A record as the builders pass it: the caller's object itself (buildBatch
 * hands its RecordInputs through, no per-record copy). Deltas are resolved
 * here: timestampDelta = timestamp - baseTimestamp when `timestamp` is given,
 * else `timestampDelta` (default 0); offsetDelta defaults to the index.
 */
export interface RecordSpec {
  readonly key?: Bytes | null | undefined;
  readonly value?: Bytes | null | undefined;
  readonly headers?: readonly HeaderSpec[] | undefined;
  readonly timestamp?: number | undefined;
  readonly timestampDelta?: number | undefined;
  readonly offsetDelta?: number | undefined;
}

export interface BatchSpec {
  readonly baseOffset: number;
  readonly partitionLeaderEpoch: number;
  readonly attributes: number;
  /** undefined: the last record's offsetDelta (0 for no records). */
  readonly lastOffsetDelta: number | undefined;
  readonly baseTimestamp: number;
  /** undefined: the largest record timestamp (-1 for no records). */
  readonly maxTimestamp: number | undefined;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly baseSequence: number;
  readonly records: readonly RecordSpec[];
  readonly compressionLevel: number | undefined;
}

/**
 * What the sizing pass found, for the header; one module-level instance
 * (writeBatch is synchronous and never re-entered).
 */
const sized = { recordsBytes: 0, maxTimestamp: L.NO_TIMESTAMP, lastOffsetDelta: 0 };
/** Body size of record i from the sizing pass, reused by the writing pass (grown, never shrunk). */
let bodySizes = new Int32Array(1024);

export function writeBatch(spec: BatchSpec): Buffer {
  checkSpec(spec);
  sizeRecords(spec);
  const lastOffsetDelta = spec.lastOffsetDelta ?? sized.lastOffsetDelta;
  checkLastOffsetDelta(spec, lastOffsetDelta);
  const codec = (spec.attributes & L.COMPRESSION_CODEC_MASK) as CodecId;
  const recordsBytes = sized.recordsBytes;
  let out: Buffer;
  if (codec === 0) {
    out = allocBatch(recordsBytes);
    const end = writeRecords(out, L.RECORDS_OFFSET, spec, lastOffsetDelta);
    assert(end === out.length, 'record sizes computed and written differ');
  } else {
    // allocUnsafe is safe here: every byte is overwritten (checked), and only the compressed form is kept.
    const plain = Buffer.allocUnsafe(recordsBytes);
    const end = writeRecords(plain, 0, spec, lastOffsetDelta);
    assert(end === recordsBytes, 'record sizes computed and written differ');
    const packed = compress(codec, plain, spec.compressionLevel === undefined ? {} : { level: spec.compressionLevel });
    out = allocBatch(packed.length);
    out.set(packed, L.RECORDS_OFFSET);
  }
  writeHeader(out, spec, lastOffsetDelta, spec.maxTimestamp ?? sized.maxTimestamp);
  return out;
}

/**
 * Not zero-filled: writeHeader writes every byte of [0, 61) and the records
 * (or the compressed payload) every byte after it — writeRecords' end is
 * asserted equal to the buffer's length. Zero-filling was 18% of an append
 * loop's profile (issue 18).
 */
function allocBatch(payloadBytes: number): Buffer {
  const size = L.RECORDS_OFFSET + payloadBytes;
  assert(size - L.LOG_OVERHEAD <= L.INT32_MAX, 'batch larger than int32 batchLength');
  return Buffer.allocUnsafe(size);
}

function timestampDeltaOf(record: RecordSpec, baseTimestamp: number): number {
  return record.timestamp !== undefined ? record.timestamp - baseTimestamp : record.timestampDelta ?? 0;
}

/** The one sizing pass: body sizes into bodySizes, the payload size, maxTimestamp and the last offsetDelta into `sized`. */
function sizeRecords(spec: BatchSpec): void {
  const records = spec.records;
  if (bodySizes.length < records.length) bodySizes = new Int32Array(Math.max(records.length, bodySizes.length * 2));
  const base = spec.baseTimestamp;
  let total = 0;
  let maxTimestamp = L.NO_TIMESTAMP;
  let offsetDelta = 0;
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    assert(record.timestamp === undefined || record.timestampDelta === undefined, 'give timestamp or timestampDelta, not both');
    const timestampDelta = timestampDeltaOf(record, base);
    assert(Number.isSafeInteger(timestampDelta), 'timestampDelta must be a safe integer');
    offsetDelta = record.offsetDelta ?? i;
    assert(isInt32(offsetDelta) && offsetDelta >= 0, 'offsetDelta must be a non-negative int32');
    if (base + timestampDelta > maxTimestamp) maxTimestamp = base + timestampDelta;
    const body = bodySize(record, timestampDelta, offsetDelta);
    bodySizes[i] = body;
    total += varintSize(body) + body;
  }
  sized.recordsBytes = total;
  sized.maxTimestamp = maxTimestamp;
  sized.lastOffsetDelta = offsetDelta;
}

function writeHeader(out: Buffer, spec: BatchSpec, lastOffsetDelta: number, maxTimestamp: number): void {
  writeInt64(out, L.BASE_OFFSET_OFFSET, spec.baseOffset);
  out.writeInt32BE(out.length - L.LOG_OVERHEAD, L.BATCH_LENGTH_OFFSET);
  out.writeInt32BE(spec.partitionLeaderEpoch, L.PARTITION_LEADER_EPOCH_OFFSET);
  out.writeInt8(L.MAGIC_V2, L.MAGIC_OFFSET);
  out.writeUInt16BE(spec.attributes, L.ATTRIBUTES_OFFSET);
  out.writeInt32BE(lastOffsetDelta, L.LAST_OFFSET_DELTA_OFFSET);
  writeInt64(out, L.BASE_TIMESTAMP_OFFSET, spec.baseTimestamp);
  assert(Number.isSafeInteger(maxTimestamp), 'maxTimestamp must be a safe integer');
  writeInt64(out, L.MAX_TIMESTAMP_OFFSET, maxTimestamp);
  writeInt64(out, L.PRODUCER_ID_OFFSET, spec.producerId);
  out.writeInt16BE(spec.producerEpoch, L.PRODUCER_EPOCH_OFFSET);
  out.writeInt32BE(spec.baseSequence, L.BASE_SEQUENCE_OFFSET);
  out.writeInt32BE(spec.records.length, L.RECORDS_COUNT_OFFSET);
  out.writeUInt32BE(crc32c(out.subarray(L.ATTRIBUTES_OFFSET)), L.CRC_OFFSET);
}

function checkSpec(spec: BatchSpec): void {
  assert(Number.isSafeInteger(spec.baseOffset) && spec.baseOffset >= 0, 'baseOffset must be a non-negative safe integer');
  assert(isInt32(spec.partitionLeaderEpoch), 'partitionLeaderEpoch must be an int32');
  assert(Number.isSafeInteger(spec.baseTimestamp), 'baseTimestamp must be a safe integer');
  assert(Number.isSafeInteger(spec.producerId) && spec.producerId >= -1, 'producerId must be -1 or a non-negative safe integer');
  assert(Number.isInteger(spec.producerEpoch) && spec.producerEpoch >= L.INT16_MIN && spec.producerEpoch <= L.INT16_MAX, 'producerEpoch must be an int16');
  assert(isInt32(spec.baseSequence) && spec.baseSequence >= -1, 'baseSequence must be -1 or a non-negative int32');
  assert((spec.attributes & ~L.KNOWN_ATTRIBUTES_MASK) === 0, 'undefined attribute bits');
  assert((spec.attributes & L.COMPRESSION_CODEC_MASK) <= 4, 'codec must be 0..4');
}

function checkLastOffsetDelta(spec: BatchSpec, lastOffsetDelta: number): void {
  assert(isInt32(lastOffsetDelta) && lastOffsetDelta >= 0, 'lastOffsetDelta must be a non-negative int32');
  assert(Number.isSafeInteger(spec.baseOffset + lastOffsetDelta), 'last offset must be a safe integer');
  // offsetDelta <= lastOffsetDelta for every record: checked in the writing pass (no third pass).
}

function isInt32(n: number): boolean {
  return Number.isInteger(n) && n >= L.INT32_MIN && n <= L.INT32_MAX;
}

function byteLength(bytes: Bytes): number {
  return typeof bytes === 'string' ? Buffer.byteLength(bytes, 'utf8') : bytes.length;
}

/** Bytes of a nullable length-prefixed field: varint(-1) for null, else varint(n) + n. */
function fieldSize(bytes: Bytes | null): number {
  if (bytes === null) return 1;
  const n = byteLength(bytes);
  return varintSize(n) + n;
}

function bodySize(record: RecordSpec, timestampDelta: number, offsetDelta: number): number {
  const headers = record.headers;
  let size = 1 + varlongSize(timestampDelta) + varintSize(offsetDelta) + fieldSize(record.key ?? null) + fieldSize(record.value ?? null);
  if (headers === undefined) return size + 1; // varint(0) headers
  size += varintSize(headers.length);
  // Indexed loops, not for-of: no iterator per record (the common record has no headers at all).
  for (let h = 0; h < headers.length; h++) {
    const header = headers[h]!;
    size += fieldSize(header.key) + fieldSize(header.value ?? null);
  }
  return size;
}

function writeRecords(out: Buffer, position: number, spec: BatchSpec, lastOffsetDelta: number): number {
  const records = spec.records;
  const base = spec.baseTimestamp;
  let p = position;
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    const offsetDelta = record.offsetDelta ?? i;
    assert(offsetDelta <= lastOffsetDelta, 'offsetDelta beyond lastOffsetDelta');
    // Every number below was range-checked by the sizing pass (or is a length): putVarint, no asserts.
    p = putVarint(out, p, bodySizes[i]!);
    out[p++] = 0; // attributes: none defined
    p = writeVarlong(out, p, timestampDeltaOf(record, base));
    p = putVarint(out, p, offsetDelta);
    p = writeField(out, p, record.key ?? null);
    p = writeField(out, p, record.value ?? null);
    const headers = record.headers;
    if (headers === undefined) {
      out[p++] = 0; // varint(0) headers
      continue;
    }
    p = putVarint(out, p, headers.length);
    for (let h = 0; h < headers.length; h++) {
      const header = headers[h]!;
      p = writeField(out, p, header.key);
      p = writeField(out, p, header.value ?? null);
    }
  }
  return p;
}

function writeField(out: Buffer, position: number, bytes: Bytes | null): number {
  if (bytes === null) {
    out[position] = 1; // zig-zag varint of -1
    return position + 1;
  }
  const n = byteLength(bytes);
  const p = putVarint(out, position, n);
  if (typeof bytes === 'string') out.write(bytes, p, n, 'utf8');
  else out.set(bytes, p);
  return p + n;
}
