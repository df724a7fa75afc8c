// Encodes one record batch v2 (layout in layout.ts, record format in
// record-cursor.ts). Sizes are computed exactly first, then the batch is
// written into one allocation (plus one temporary for the uncompressed
// records when a codec is used), then the CRC-32C over [21, end) is filled in.
// Inputs are trusted (built by seglog or its tests): violations are asserts.
import { assert } from '@seglog/common';
import { compress, type CodecId } from '../compression.js';
import { crc32c } from '../crc32c.js';
import { writeInt64 } from './int64.js';
import * as L from './layout.js';
import { varintSize, varlongSize, writeVarint, writeVarlong } from './varint.js';

export type Bytes = Uint8Array | string;

export interface HeaderSpec {
  readonly key: string;
  /** undefined is written as null. */
  readonly value?: Bytes | null | undefined;
}

/** A record with its deltas resolved. */
export interface RecordSpec {
  readonly timestampDelta: number;
  readonly offsetDelta: number;
  readonly key: Bytes | null;
  readonly value: Bytes | null;
  readonly headers: readonly HeaderSpec[];
}

export interface BatchSpec {
  readonly baseOffset: number;
  readonly partitionLeaderEpoch: number;
  readonly attributes: number;
  readonly lastOffsetDelta: number;
  readonly baseTimestamp: number;
  readonly maxTimestamp: number;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly baseSequence: number;
  readonly records: readonly RecordSpec[];
  readonly compressionLevel: number | undefined;
}

export function writeBatch(spec: BatchSpec): Buffer {
  checkSpec(spec);
  const codec = (spec.attributes & L.COMPRESSION_CODEC_MASK) as CodecId;
  let recordsBytes = 0;
  for (const record of spec.records) recordsBytes += recordSize(record);
  let out: Buffer;
  if (codec === 0) {
    out = allocBatch(recordsBytes);
    const end = writeRecords(out, L.RECORDS_OFFSET, spec.records);
    assert(end === out.length, 'record sizes computed and written differ');
  } else {
    // allocUnsafe is safe here: every byte is overwritten (checked), and only the compressed form is kept.
    const plain = Buffer.allocUnsafe(recordsBytes);
    const end = writeRecords(plain, 0, spec.records);
    assert(end === recordsBytes, 'record sizes computed and written differ');
    const packed = compress(codec, plain, spec.compressionLevel === undefined ? {} : { level: spec.compressionLevel });
    out = allocBatch(packed.length);
    out.set(packed, L.RECORDS_OFFSET);
  }
  writeHeader(out, spec);
  return out;
}

function allocBatch(payloadBytes: number): Buffer {
  const size = L.RECORDS_OFFSET + payloadBytes;
  assert(size - L.LOG_OVERHEAD <= L.INT32_MAX, 'batch larger than int32 batchLength');
  return Buffer.alloc(size);
}

function writeHeader(out: Buffer, spec: BatchSpec): void {
  writeInt64(out, L.BASE_OFFSET_OFFSET, spec.baseOffset);
  out.writeInt32BE(out.length - L.LOG_OVERHEAD, L.BATCH_LENGTH_OFFSET);
  out.writeInt32BE(spec.partitionLeaderEpoch, L.PARTITION_LEADER_EPOCH_OFFSET);
  out.writeInt8(L.MAGIC_V2, L.MAGIC_OFFSET);
  out.writeUInt16BE(spec.attributes, L.ATTRIBUTES_OFFSET);
  out.writeInt32BE(spec.lastOffsetDelta, L.LAST_OFFSET_DELTA_OFFSET);
  writeInt64(out, L.BASE_TIMESTAMP_OFFSET, spec.baseTimestamp);
  writeInt64(out, L.MAX_TIMESTAMP_OFFSET, spec.maxTimestamp);
  writeInt64(out, L.PRODUCER_ID_OFFSET, spec.producerId);
  out.writeInt16BE(spec.producerEpoch, L.PRODUCER_EPOCH_OFFSET);
  out.writeInt32BE(spec.baseSequence, L.BASE_SEQUENCE_OFFSET);
  out.writeInt32BE(spec.records.length, L.RECORDS_COUNT_OFFSET);
  out.writeUInt32BE(crc32c(out.subarray(L.ATTRIBUTES_OFFSET)), L.CRC_OFFSET);
}

function checkSpec(spec: BatchSpec): void {
  assert(Number.isSafeInteger(spec.baseOffset) && spec.baseOffset >= 0, 'baseOffset must be a non-negative safe integer');
  assert(isInt32(spec.partitionLeaderEpoch), 'partitionLeaderEpoch must be an int32');
  assert(isInt32(spec.lastOffsetDelta) && spec.lastOffsetDelta >= 0, 'lastOffsetDelta must be a non-negative int32');
  assert(Number.isSafeInteger(spec.baseOffset + spec.lastOffsetDelta), 'last offset must be a safe integer');
  assert(Number.isSafeInteger(spec.baseTimestamp), 'baseTimestamp must be a safe integer');
  assert(Number.isSafeInteger(spec.maxTimestamp), 'maxTimestamp must be a safe integer');
  assert(Number.isSafeInteger(spec.producerId) && spec.producerId >= -1, 'producerId must be -1 or a non-negative safe integer');
  assert(Number.isInteger(spec.producerEpoch) && spec.producerEpoch >= L.INT16_MIN && spec.producerEpoch <= L.INT16_MAX, 'producerEpoch must be an int16');
  assert(isInt32(spec.baseSequence) && spec.baseSequence >= -1, 'baseSequence must be -1 or a non-negative int32');
  assert((spec.attributes & ~L.KNOWN_ATTRIBUTES_MASK) === 0, 'undefined attribute bits');
  assert((spec.attributes & L.COMPRESSION_CODEC_MASK) <= 4, 'codec must be 0..4');
  for (const record of spec.records) {
    assert(isInt32(record.offsetDelta) && record.offsetDelta >= 0, 'offsetDelta must be a non-negative int32');
    assert(record.offsetDelta <= spec.lastOffsetDelta, 'offsetDelta beyond lastOffsetDelta');
    assert(Number.isSafeInteger(record.timestampDelta), 'timestampDelta must be a safe integer');
  }
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

function bodySize(record: RecordSpec): number {
  let size = 1 + varlongSize(record.timestampDelta) + varintSize(record.offsetDelta);
  size += fieldSize(record.key) + fieldSize(record.value) + varintSize(record.headers.length);
  for (const header of record.headers) size += fieldSize(header.key) + fieldSize(header.value ?? null);
  return size;
}

function recordSize(record: RecordSpec): number {
  const body = bodySize(record);
  return varintSize(body) + body;
}

function writeRecords(out: Buffer, position: number, records: readonly RecordSpec[]): number {
  let p = position;
  for (const record of records) {
    p = writeVarint(out, p, bodySize(record));
    out[p++] = 0; // attributes: none defined
    p = writeVarlong(out, p, record.timestampDelta);
    p = writeVarint(out, p, record.offsetDelta);
    p = writeField(out, p, record.key);
    p = writeField(out, p, record.value);
    p = writeVarint(out, p, record.headers.length);
    for (const header of record.headers) {
      p = writeField(out, p, header.key);
      p = writeField(out, p, header.value ?? null);
    }
  }
  return p;
}

function writeField(out: Buffer, position: number, bytes: Bytes | null): number {
  if (bytes === null) return writeVarint(out, position, -1);
  const n = byteLength(bytes);
  const p = writeVarint(out, position, n);
  if (typeof bytes === 'string') out.write(bytes, p, n, 'utf8');
  else out.set(bytes, p);
  return p + n;
}
