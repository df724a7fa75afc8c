// RecordBatch: a zero-copy view over one Kafka record batch v2 inside a Buffer.
//
// Format (reference/kafka-storage.md §2, offsets relative to the batch start):
//   0 baseOffset int64 | 8 batchLength int32 | 12 partitionLeaderEpoch int32 |
//  16 magic int8 (2)   | 17 crc uint32      | 21 attributes int16 |
//  23 lastOffsetDelta int32 | 27 baseTimestamp int64 | 35 maxTimestamp int64 |
//  43 producerId int64 | 51 producerEpoch int16 | 53 baseSequence int32 |
//  57 recordsCount int32 | 61 records (or one compressed stream of them)
// Invariants a view guarantees once constructed: magic == 2, 61 <= sizeInBytes
// == batchLength + 12, and every byte of the batch lies inside the buffer, so
// no getter can read out of bounds. The CRC is NOT checked on construction
// (call isValid(); validateBatch and validateFollowerBatch do). Header fields
// are read on demand; int64 fields are read as two 32-bit halves and must be
// safe integers (else a typed error).
//
// In-place patches follow Kafka: baseOffset and partitionLeaderEpoch lie
// outside the CRC (no recompute); setMaxTimestamp rewrites attributes and
// maxTimestamp and recomputes the CRC.
import { assert } from '@seglog/common';
import type { CodecId } from './compression.js';
import { crc32c } from './crc32c.js';
import * as L from './internal/layout.js';
import { readInt64, writeInt64 } from './internal/int64.js';
import { RecordsError } from './records-error.js';
import type { BatchSource, TimestampType } from './batch-source.js';
import { RecordCursor, type LogRecord, type RecordReadOptions } from './record-cursor.js';

export type { TimestampType } from './batch-source.js';

export class RecordBatch implements BatchSource {
  private buf: Buffer;
  private begin: number;
  private size: number;
  private ixRecords: Int32Array | null = null;
  private ixFirst = 0;

  /**
   * A view of the batch starting at `start` in `buffer`. Throws RecordsError
   * (CORRUPT / UNSUPPORTED_MAGIC) when the bytes there are not a complete v2
   * batch of at least 61 bytes.
   */
  constructor(buffer: Uint8Array, start = 0) {
    this.buf = EMPTY;
    this.begin = 0;
    this.size = 0;
    this.reset(buffer, start);
  }

  /** Re-points this view at another batch (recovery scans reuse one view). */
  reset(buffer: Uint8Array, start = 0): this {
    assert(Number.isInteger(start) && start >= 0, 'batch start must be a non-negative integer');
    assert(start <= buffer.length, 'batch start beyond the buffer');
    const buf = Buffer.isBuffer(buffer) ? buffer : Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    const available = buf.length - start;
    if (available < L.LOG_OVERHEAD) throw truncated(start, L.LOG_OVERHEAD, available);
    const batchLength = buf.readInt32BE(start + L.BATCH_LENGTH_OFFSET);
    if (batchLength < L.MIN_BATCH_LENGTH) {
      throw new RecordsError('SEGLOG_ERR_RECORDS_CORRUPT', 'batch-length',
        `batchLength ${batchLength} is below the minimum ${L.MIN_BATCH_LENGTH}`,
        { position: start + L.BATCH_LENGTH_OFFSET, expected: L.MIN_BATCH_LENGTH, actual: batchLength });
    }
    const size = batchLength + L.LOG_OVERHEAD;
    if (size > available) throw truncated(start, size, available);
    checkMagic(buf, start);
    if (size < L.RECORD_BATCH_OVERHEAD) {
      throw new RecordsError('SEGLOG_ERR_RECORDS_CORRUPT', 'size',
        `batch size ${size} is below the v2 header size ${L.RECORD_BATCH_OVERHEAD}`,
        { position: start, expected: L.RECORD_BATCH_OVERHEAD, actual: size });
    }
    this.buf = buf;
    this.begin = start;
    this.size = size;
    this.ixRecords = null;
    return this;
  }

  /**
   * Record entries of this batch (see BatchSource.recordIndex); cleared by
   * reset(). Only BatchWindowIndex.apply sets them, after matching the
   * buffer, the position and the record count to what it indexed.
   * @internal
   */
  attachRecordIndex(records: Int32Array, first: number): void {
    assert(Number.isInteger(first) && first >= 0 && (first + this.recordsCount) * 8 <= records.length,
      'attachRecordIndex: entries outside the table');
    this.ixRecords = records;
    this.ixFirst = first;
  }

  get recordIndex(): Int32Array | null { return this.ixRecords; }
  get recordIndexFirst(): number { return this.ixFirst; }

  /** The buffer this view reads (and patches). */
  get buffer(): Buffer { return this.buf; }
  /** Byte position of the batch inside `buffer`. */
  get start(): number { return this.begin; }
  /** The batch's bytes (a view, no copy). */
  bytes(): Buffer { return this.buf.subarray(this.begin, this.begin + this.size); }

  get baseOffset(): number { return readInt64(this.buf, this.begin + L.BASE_OFFSET_OFFSET, 'baseOffset'); }
  get batchLength(): number { return this.size - L.LOG_OVERHEAD; }
  /** Total bytes of the batch: batchLength + 12. */
  get sizeInBytes(): number { return this.size; }
  get partitionLeaderEpoch(): number { return this.buf.readInt32BE(this.begin + L.PARTITION_LEADER_EPOCH_OFFSET); }
  get magic(): number { return this.buf.readInt8(this.begin + L.MAGIC_OFFSET); }
  /** The stored CRC-32C (unsigned). */
  get crc(): number { return this.buf.readUInt32BE(this.begin + L.CRC_OFFSET); }
  get attributes(): number { return this.buf.readUInt16BE(this.begin + L.ATTRIBUTES_OFFSET); }
  /** Codec id from attribute bits 0..2; ids 5..7 throw UNSUPPORTED_CODEC. */
  get compression(): CodecId {
    const codec = this.attributes & L.COMPRESSION_CODEC_MASK;
    if (codec > 4) throw unsupportedCodec(codec, this.begin + L.ATTRIBUTES_OFFSET);
    return codec as CodecId;
  }
  get timestampType(): TimestampType {
    return (this.attributes & L.TIMESTAMP_TYPE_MASK) === 0 ? 'CreateTime' : 'LogAppendTime';
  }
  get isTransactional(): boolean { return (this.attributes & L.TRANSACTIONAL_FLAG_MASK) !== 0; }
  get isControl(): boolean { return (this.attributes & L.CONTROL_FLAG_MASK) !== 0; }
  get hasDeleteHorizon(): boolean { return (this.attributes & L.DELETE_HORIZON_FLAG_MASK) !== 0; }
  /** baseTimestamp when the delete-horizon bit is set (set by a log cleaner), else -1. */
  get deleteHorizonMs(): number { return this.hasDeleteHorizon ? this.baseTimestamp : L.NO_TIMESTAMP; }
  get lastOffsetDelta(): number { return this.buf.readInt32BE(this.begin + L.LAST_OFFSET_DELTA_OFFSET); }
  get lastOffset(): number {
    const last = this.baseOffset + this.lastOffsetDelta;
    if (!Number.isSafeInteger(last)) {
      throw new RecordsError('SEGLOG_ERR_RECORDS_INVALID_RECORD', 'unsafe-integer',
        'baseOffset + lastOffsetDelta is outside the safe integer range', { field: 'lastOffset', position: this.begin });
    }
    return last;
  }
  get nextOffset(): number { return this.lastOffset + 1; }
  get baseTimestamp(): number { return readInt64(this.buf, this.begin + L.BASE_TIMESTAMP_OFFSET, 'baseTimestamp'); }
  get maxTimestamp(): number { return readInt64(this.buf, this.begin + L.MAX_TIMESTAMP_OFFSET, 'maxTimestamp'); }
  get producerId(): number { return readInt64(this.buf, this.begin + L.PRODUCER_ID_OFFSET, 'producerId'); }
  get hasProducerId(): boolean { return this.producerId > L.NO_PRODUCER_ID; }
  get producerEpoch(): number { return this.buf.readInt16BE(this.begin + L.PRODUCER_EPOCH_OFFSET); }
  get baseSequence(): number { return this.buf.readInt32BE(this.begin + L.BASE_SEQUENCE_OFFSET); }
  /** baseSequence + lastOffsetDelta, wrapping past Int32.MAX to 0; -1 when baseSequence is -1. */
  get lastSequence(): number { return incrementSequence(this.baseSequence, this.lastOffsetDelta); }
  get recordsCount(): number { return this.buf.readInt32BE(this.begin + L.RECORDS_COUNT_OFFSET); }

  /** CRC-32C of bytes [21, end) as they are now. */
  computeCrc(): number {
    return crc32c(this.buf.subarray(this.begin + L.ATTRIBUTES_OFFSET, this.begin + this.size));
  }

  /** Kafka's isValid: size >= 61 (guaranteed by the view) and stored CRC == computed CRC. */
  isValid(): boolean { return this.crc === this.computeCrc(); }

  /** Writes baseOffset (outside the CRC: no recompute). */
  setBaseOffset(offset: number): void {
    assert(Number.isSafeInteger(offset), 'baseOffset must be a safe integer');
    assert(offset >= 0, 'baseOffset must not be negative');
    writeInt64(this.buf, this.begin + L.BASE_OFFSET_OFFSET, offset);
  }

  /** Kafka's setLastOffset: baseOffset = offset - lastOffsetDelta (no CRC recompute). */
  setLastOffset(offset: number): void {
    this.setBaseOffset(offset - this.lastOffsetDelta);
  }

  /** Writes partitionLeaderEpoch (outside the CRC: no recompute). */
  setPartitionLeaderEpoch(epoch: number): void {
    assert(Number.isInteger(epoch) && epoch >= L.INT32_MIN && epoch <= L.INT32_MAX, 'leader epoch must be an int32');
    this.buf.writeInt32BE(epoch, this.begin + L.PARTITION_LEADER_EPOCH_OFFSET);
  }

  /**
   * Kafka's setMaxTimestamp: a no-op when type and timestamp are unchanged;
   * otherwise rewrites the attributes (timestamp-type bit; undefined bits 7..15
   * cleared, as Kafka recomputes attributes from their parts) and maxTimestamp,
   * then recomputes the CRC. baseTimestamp and the records stay untouched.
   */
  setMaxTimestamp(type: TimestampType, timestamp: number): void {
    assert(Number.isSafeInteger(timestamp), 'maxTimestamp must be a safe integer');
    if (this.timestampType === type && this.maxTimestamp === timestamp) return;
    const kept = this.attributes & (L.KNOWN_ATTRIBUTES_MASK & ~L.TIMESTAMP_TYPE_MASK);
    const attributes = type === 'LogAppendTime' ? kept | L.TIMESTAMP_TYPE_MASK : kept;
    this.buf.writeUInt16BE(attributes, this.begin + L.ATTRIBUTES_OFFSET);
    writeInt64(this.buf, this.begin + L.MAX_TIMESTAMP_OFFSET, timestamp);
    this.buf.writeUInt32BE(this.computeCrc(), this.begin + L.CRC_OFFSET);
  }

  /** A cursor over the records (decompressing first if needed). */
  records(options?: RecordReadOptions): RecordCursor {
    return new RecordCursor().open(this, options);
  }

  /** Every record materialised (tests, tools); key/value are views into the payload. */
  toRecords(options?: RecordReadOptions): LogRecord[] {
    return this.records(options).toArray();
  }
}

const EMPTY = Buffer.alloc(0);

/** Kafka's sequence increment: wraps past Int32.MAX to 0; -1 (no sequence) stays -1. */
export function incrementSequence(sequence: number, increment: number): number {
  if (sequence === L.NO_SEQUENCE) return L.NO_SEQUENCE;
  const next = sequence + increment;
  return next > L.INT32_MAX ? next - L.INT32_MAX - 1 : next;
}

function checkMagic(buf: Buffer, start: number): void {
  const magic = buf.readInt8(start + L.MAGIC_OFFSET);
  if (magic === L.MAGIC_V2) return;
  const position = start + L.MAGIC_OFFSET;
  if (magic === 0 || magic === 1) {
    throw new RecordsError('SEGLOG_ERR_RECORDS_UNSUPPORTED_MAGIC', 'magic',
      `legacy message format (magic ${magic}) is not supported`, { position, expected: L.MAGIC_V2, actual: magic });
  }
  throw new RecordsError('SEGLOG_ERR_RECORDS_CORRUPT', 'magic', `invalid magic ${magic}`,
    { position, expected: L.MAGIC_V2, actual: magic });
}

function truncated(start: number, expected: number, actual: number): RecordsError {
  return new RecordsError('SEGLOG_ERR_RECORDS_CORRUPT', 'truncated',
    `batch needs ${expected} bytes but only ${actual} remain`, { position: start, expected, actual });
}

export function unsupportedCodec(codec: number, position: number): RecordsError {
  return new RecordsError('SEGLOG_ERR_RECORDS_UNSUPPORTED_CODEC', 'codec',
    `unknown compression codec id ${codec}`, { position, actual: codec });
}
