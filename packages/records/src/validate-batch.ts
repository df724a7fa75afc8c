// Leader-side validation of one record batch from a producer (Kafka's
// appendAsLeader, origin CLIENT; reference/kafka-storage.md §2, §3, §11).
//
// Order of checks — the first failure wins:
//  1. size: the declared batch size (batchLength + 12) > maxMessageBytes
//     → TOO_LARGE (MESSAGE_TOO_LARGE). Before anything else is read or allocated.
//  2. framing → CORRUPT (CORRUPT_MESSAGE): fewer than 12 bytes, batchLength < 14,
//     magic outside 0..2 (0/1 → UNSUPPORTED_MAGIC), fewer bytes than the
//     declared size ('truncated'), size < 61.
//  3. CRC-32C of bytes [21, end) → CRC_MISMATCH (CORRUPT_MESSAGE).
//  4. header rules → INVALID_RECORD unless noted: baseOffset 0; exactly one
//     batch (buffer length == size); attribute bits 7..15 zero; lastOffsetDelta
//     + 1 > 0; recordsCount > 0; lastOffsetDelta + 1 == recordsCount; codec
//     <= 4 (UNSUPPORTED_CODEC); not a control batch; producerId >= 0 ⇒
//     baseSequence >= 0; int64 fields safe integers.
//  5. one pass over the records (decompressing first, capped): any malformed
//     record → INVALID_RECORD at once (codec errors propagate as the codec
//     raises them).
//  6. per-record errors collected in that pass, as Kafka's LogValidator does:
//     a timestamp error anywhere → INVALID_TIMESTAMP; else a null key on a
//     compacted topic → INVALID_RECORD. Timestamp rules: a producer batch
//     claiming LogAppendTime is rejected; on a CreateTime topic a record
//     timestamp other than -1 must satisfy now - ts <= timestampBeforeMaxMs
//     and ts - now <= timestampAfterMaxMs.
//
// Deviations from Kafka, all stricter: Kafka checks baseOffset != 0 before
// size and CRC (seglog checks size first and trusts no field of a corrupt
// batch); Kafka stores legacy magic 0/1 batches (seglog rejects them); Kafka
// ignores undefined attribute bits; Kafka lets a LogAppendTime batch through
// on a CreateTime topic when its timestamp passes the bounds.
//
// Nothing is allocated per record: the pass uses one module-level cursor
// (validation is synchronous, so it cannot be re-entered). Uncompressed
// CreateTime batches take a cursor-free walk (internal/fast-scan.ts) that
// accepts exactly what the cursor accepts or hands the batch to it. With the
// addon, @seglog/native's scanBatch computes the CRC (3) and runs that same
// walk in one call, before the header rules (4); its findings are used only
// once they pass, so the order of the errors is unchanged.
import { assert } from '@seglog/common';
import { SCAN_BATCH, scanBatch } from '@seglog/native';
import type { CodecId } from './compression.js';
import { checkCrc, crcMismatch } from './internal/check-crc.js';
import { fastScanRecords, fastScanResult } from './internal/fast-scan.js';
import * as L from './internal/layout.js';
import { RecordBatch, unsupportedCodec, type TimestampType } from './record-batch.js';
import { RecordCursor } from './record-cursor.js';
import { RecordsError } from './records-error.js';

export interface ValidateBatchOptions {
  /** max.message.bytes: the largest batch (as sent, i.e. compressed) accepted. */
  readonly maxMessageBytes: number;
  /** The topic's message.timestamp.type. Default 'CreateTime'. */
  readonly messageTimestampType?: TimestampType;
  /** Current time in ms; required when a timestamp bound is given. */
  readonly now?: number;
  /** message.timestamp.before.max.ms; default: unbounded. */
  readonly timestampBeforeMaxMs?: number;
  /** message.timestamp.after.max.ms; default: unbounded. */
  readonly timestampAfterMaxMs?: number;
  /** cleanup.policy includes compact: records need a key. */
  readonly compacted?: boolean;
  /** Cap on a compressed batch's decompressed payload. Default 64 MiB. */
  readonly maxDecompressedBytes?: number;
}

/** What the log needs from a validated batch, so it never re-parses it. */
export interface BatchSummary {
  /** A view of the batch over the caller's buffer (patch offsets/epoch/timestamps through it). */
  readonly batch: RecordBatch;
  readonly sizeInBytes: number;
  readonly recordsCount: number;
  readonly lastOffsetDelta: number;
  readonly compression: CodecId;
  /** Bytes of the concatenated records (after decompression). */
  readonly recordsBytes: number;
  /** Largest record timestamp, -1 when every record has timestamp -1. */
  readonly maxTimestamp: number;
  /** 0-based index of the first record holding maxTimestamp, -1 if none. */
  readonly maxTimestampIndex: number;
  /** Every record's offsetDelta equals its index (Kafka re-encodes compressed batches otherwise). */
  readonly offsetDeltasConsecutive: boolean;
  readonly timestampType: TimestampType;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly baseSequence: number;
  readonly lastSequence: number;
  readonly isTransactional: boolean;
}

const cursor = new RecordCursor();

/** Validates a producer's batch (the whole of `buf`). Throws RecordsError; returns its summary. */
export function validateBatch(buf: Uint8Array, options: ValidateBatchOptions): BatchSummary {
  return validateBatchWith(buf, options, scanBatch === null ? 'js' : 'native');
}

/**
 * How the record pass starts: 'native' the addon's scanBatch (CRC and walk
 * in one call), 'js' the JavaScript walk, 'strict' the cursor alone. Each
 * gives the same answers; the strict pass decides whatever a walk gives up.
 */
export type ValidationWalk = 'native' | 'js' | 'strict';

/** validateBatch with a chosen walk (for the differential test; 'native' needs the addon). */
export function validateBatchWith(buf: Uint8Array, options: ValidateBatchOptions, walk: ValidationWalk): BatchSummary {
  checkOptions(options);
  checkSize(buf, options.maxMessageBytes);
  const batch = frameBatch(buf);
  const native = walk === 'native' ? scanNative(batch, options) : NOT_SCANNED;
  if (native === NOT_SCANNED) checkCrc(batch);
  else if ((native & SCAN_BATCH.RESULT_CRC_OK) === 0) throw crcMismatch(batch, nativeIo[SCAN_BATCH.CRC]!);
  checkHeader(batch, buf.length);
  return checkRecords(batch, options, native, walk === 'js');
}

/** scanNative's answer when the addon's walk was not asked for. */
const NOT_SCANNED = -1;
/** scanBatch's rules and findings (one module-level array: validation is synchronous). */
const nativeIo = new Float64Array(SCAN_BATCH.IO_LENGTH);

/** scanBatch's result bits for `batch`. */
function scanNative(batch: RecordBatch, options: ValidateBatchOptions): number {
  assert(scanBatch !== null, "the 'native' walk needs @seglog/native");
  const io = nativeIo;
  io[SCAN_BATCH.NOW] = options.now ?? 0;
  io[SCAN_BATCH.BEFORE_MAX_MS] = options.timestampBeforeMaxMs ?? Infinity;
  io[SCAN_BATCH.AFTER_MAX_MS] = options.timestampAfterMaxMs ?? Infinity;
  io[SCAN_BATCH.RULES] = ((options.messageTimestampType ?? 'CreateTime') === 'CreateTime' ? SCAN_BATCH.RULE_BOUND_TIMESTAMPS : 0) |
    (options.compacted === true ? SCAN_BATCH.RULE_COMPACTED : 0);
  const start = batch.start;
  return scanBatch(batch.buffer, start, start + batch.sizeInBytes, io);
}

function checkOptions(options: ValidateBatchOptions): void {
  assert(Number.isSafeInteger(options.maxMessageBytes) && options.maxMessageBytes >= 0, 'maxMessageBytes must be a non-negative integer');
  const bounded = options.timestampBeforeMaxMs !== undefined || options.timestampAfterMaxMs !== undefined;
  assert(!bounded || (options.now !== undefined && Number.isSafeInteger(options.now)), 'timestamp bounds need `now`');
}

function checkSize(buf: Uint8Array, maxMessageBytes: number): void {
  if (buf.length < L.LOG_OVERHEAD) return;
  const p = L.BATCH_LENGTH_OFFSET;
  const batchLength = (buf[p]! << 24) | (buf[p + 1]! << 16) | (buf[p + 2]! << 8) | buf[p + 3]!;
  const size = batchLength + L.LOG_OVERHEAD;
  if (size > maxMessageBytes) {
    throw new RecordsError('SEGLOG_ERR_RECORDS_TOO_LARGE', 'max-message-bytes',
      `batch of ${size} bytes exceeds max.message.bytes ${maxMessageBytes}`,
      { position: 0, expected: maxMessageBytes, actual: size });
  }
}

function frameBatch(buf: Uint8Array): RecordBatch {
  return new RecordBatch(buf, 0);
}

function checkHeader(batch: RecordBatch, bufferLength: number): void {
  const baseOffset = batch.baseOffset;
  if (baseOffset !== 0) throw invalid('base-offset', `baseOffset ${baseOffset} from a producer must be 0`, L.BASE_OFFSET_OFFSET, 0, baseOffset);
  const size = batch.sizeInBytes;
  if (bufferLength !== size) {
    throw invalid('batch-count', `exactly one batch expected: ${bufferLength - size} bytes follow it`, 0, size, bufferLength);
  }
  const attributes = batch.attributes;
  if ((attributes & ~L.KNOWN_ATTRIBUTES_MASK) !== 0) {
    throw invalid('attributes', `undefined attribute bits set: 0x${attributes.toString(16)}`, L.ATTRIBUTES_OFFSET, attributes & L.KNOWN_ATTRIBUTES_MASK, attributes);
  }
  const lastOffsetDelta = batch.lastOffsetDelta;
  const count = batch.recordsCount;
  if (lastOffsetDelta + 1 <= 0) throw invalid('last-offset-delta', `lastOffsetDelta ${lastOffsetDelta} is negative`, L.LAST_OFFSET_DELTA_OFFSET, 0, lastOffsetDelta);
  if (count <= 0) throw invalid('records-count', `recordsCount ${count} must be positive`, L.RECORDS_COUNT_OFFSET, 1, count);
  if (lastOffsetDelta + 1 !== count) {
    throw invalid('records-count', `lastOffsetDelta + 1 = ${lastOffsetDelta + 1} differs from recordsCount ${count}`, L.RECORDS_COUNT_OFFSET, lastOffsetDelta + 1, count);
  }
  const codec = attributes & L.COMPRESSION_CODEC_MASK;
  if (codec > 4) throw unsupportedCodec(codec, L.ATTRIBUTES_OFFSET);
  if ((attributes & L.CONTROL_FLAG_MASK) !== 0) throw invalid('control-batch', 'producers may not send control batches', L.ATTRIBUTES_OFFSET, 0, attributes);
  const producerId = batch.producerId;
  const baseSequence = batch.baseSequence;
  if (producerId >= 0 && baseSequence < 0) {
    throw invalid('base-sequence', `producerId ${producerId} with baseSequence ${baseSequence}`, L.BASE_SEQUENCE_OFFSET, 0, baseSequence);
  }
  // Read now so an unsafe int64 fails here, as INVALID_RECORD, not later in the log.
  void batch.baseTimestamp;
  void batch.maxTimestamp;
}

// Results of the record pass; one module-level instance, reset per batch.
class RecordScan {
  recordsBytes = 0;
  maxTimestamp = L.NO_TIMESTAMP;
  maxTimestampIndex = -1;
  consecutive = true;
  keyErrorIndex = -1;
  timestampErrorIndex = -1;
  timestampError = 0;

  reset(): void {
    this.recordsBytes = 0;
    this.maxTimestamp = L.NO_TIMESTAMP;
    this.maxTimestampIndex = -1;
    this.consecutive = true;
    this.keyErrorIndex = -1;
    this.timestampErrorIndex = -1;
    this.timestampError = 0;
  }
}

const scan = new RecordScan();

function checkRecords(batch: RecordBatch, options: ValidateBatchOptions, native: number, jsWalk: boolean): BatchSummary {
  scan.reset();
  // The addon's walk is the JavaScript walk's twin: when it gave up, so would the latter.
  const fast = native !== NOT_SCANNED ? (native & SCAN_BATCH.RESULT_SCANNED) !== 0 && takeNativeScan(batch) : jsWalk && scanUncompressedFast(batch, options);
  if (!fast) {
    scan.reset();
    try {
      scanRecords(batch, options);
    } finally {
      cursor.close();
    }
  }
  if (scan.timestampErrorIndex >= 0) throw timestampRejected(batch, scan.timestampErrorIndex, scan.timestampError, options);
  if (scan.keyErrorIndex >= 0) {
    throw new RecordsError('SEGLOG_ERR_RECORDS_INVALID_RECORD', 'null-key',
      'a compacted topic cannot accept a record without a key', { recordIndex: scan.keyErrorIndex });
  }
  return {
    batch,
    sizeInBytes: batch.sizeInBytes,
    recordsCount: batch.recordsCount,
    lastOffsetDelta: batch.lastOffsetDelta,
    compression: batch.compression,
    recordsBytes: scan.recordsBytes,
    maxTimestamp: scan.maxTimestamp,
    maxTimestampIndex: scan.maxTimestampIndex,
    offsetDeltasConsecutive: scan.consecutive,
    timestampType: batch.timestampType,
    producerId: batch.producerId,
    producerEpoch: batch.producerEpoch,
    baseSequence: batch.baseSequence,
    lastSequence: batch.lastSequence,
    isTransactional: batch.isTransactional,
  };
}

/**
 * The same pass over an uncompressed CreateTime batch without a cursor
 * (internal/fast-scan.ts): false when it leaves the verdict to scanRecords.
 */
function scanUncompressedFast(batch: RecordBatch, options: ValidateBatchOptions): boolean {
  if (batch.compression !== 0 || batch.timestampType === 'LogAppendTime') return false;
  const start = batch.start + L.RECORDS_OFFSET;
  const end = batch.start + batch.sizeInBytes;
  rules.baseTimestamp = batch.baseTimestamp;
  rules.baseOffset = batch.baseOffset;
  rules.boundTimestamps = (options.messageTimestampType ?? 'CreateTime') === 'CreateTime';
  rules.now = options.now ?? 0;
  rules.beforeMaxMs = options.timestampBeforeMaxMs ?? Infinity;
  rules.afterMaxMs = options.timestampAfterMaxMs ?? Infinity;
  rules.compacted = options.compacted === true;
  if (!fastScanRecords(batch.buffer, start, end, batch.recordsCount, rules)) return false;
  const r = fastScanResult;
  scan.recordsBytes = end - start;
  scan.maxTimestamp = r.maxTimestamp;
  scan.maxTimestampIndex = r.maxTimestampIndex;
  scan.consecutive = r.consecutive;
  scan.keyErrorIndex = r.keyErrorIndex;
  scan.timestampErrorIndex = r.timestampErrorIndex;
  scan.timestampError = r.timestampError;
  return true;
}

/** scanBatch's findings into `scan`; true. */
function takeNativeScan(batch: RecordBatch): boolean {
  const io = nativeIo;
  scan.recordsBytes = batch.sizeInBytes - L.RECORDS_OFFSET;
  scan.maxTimestamp = io[SCAN_BATCH.MAX_TIMESTAMP]!;
  scan.maxTimestampIndex = io[SCAN_BATCH.MAX_TIMESTAMP_INDEX]!;
  scan.consecutive = io[SCAN_BATCH.CONSECUTIVE] === 1;
  scan.keyErrorIndex = io[SCAN_BATCH.KEY_ERROR_INDEX]!;
  scan.timestampErrorIndex = io[SCAN_BATCH.TIMESTAMP_ERROR_INDEX]!;
  scan.timestampError = io[SCAN_BATCH.TIMESTAMP_ERROR]!;
  return true;
}

const rules = { baseTimestamp: 0, baseOffset: 0, boundTimestamps: true, now: 0, beforeMaxMs: Infinity, afterMaxMs: Infinity, compacted: false };

/** One pass: malformed records throw at once; per-record errors are collected in `scan` (Kafka's LogValidator). */
function scanRecords(batch: RecordBatch, options: ValidateBatchOptions): void {
  const logAppendTimeBatch = batch.timestampType === 'LogAppendTime';
  const boundTimestamps = (options.messageTimestampType ?? 'CreateTime') === 'CreateTime';
  const now = options.now ?? 0;
  const beforeMaxMs = options.timestampBeforeMaxMs ?? Infinity;
  const afterMaxMs = options.timestampAfterMaxMs ?? Infinity;
  const compacted = options.compacted === true;
  cursor.open(batch, options);
  scan.recordsBytes = cursor.payloadBytes;
  while (cursor.next()) {
    const index = cursor.index;
    const timestamp = cursor.timestamp;
    if (cursor.offsetDelta !== index) scan.consecutive = false;
    if (timestamp > scan.maxTimestamp) {
      scan.maxTimestamp = timestamp;
      scan.maxTimestampIndex = index;
    }
    if (compacted && cursor.keyLength < 0) {
      // Kafka checks the key first and skips this record's timestamp check.
      if (scan.keyErrorIndex < 0) scan.keyErrorIndex = index;
    } else if (scan.timestampErrorIndex < 0) {
      const outOfBounds = boundTimestamps && timestamp !== L.NO_TIMESTAMP &&
        (now - timestamp > beforeMaxMs || timestamp - now > afterMaxMs);
      if (logAppendTimeBatch || outOfBounds) {
        scan.timestampErrorIndex = index;
        scan.timestampError = timestamp;
      }
    }
  }
}

function timestampRejected(batch: RecordBatch, recordIndex: number, timestamp: number, options: ValidateBatchOptions): RecordsError {
  if (batch.timestampType === 'LogAppendTime') {
    return new RecordsError('SEGLOG_ERR_RECORDS_INVALID_TIMESTAMP', 'log-append-time',
      'a producer must not set timestamp type LogAppendTime', { recordIndex, position: L.ATTRIBUTES_OFFSET });
  }
  return new RecordsError('SEGLOG_ERR_RECORDS_INVALID_TIMESTAMP', 'timestamp-bounds',
    `record timestamp ${timestamp} is out of range for now ${options.now}`,
    { recordIndex, actual: timestamp, now: options.now, beforeMaxMs: options.timestampBeforeMaxMs, afterMaxMs: options.timestampAfterMaxMs });
}

function invalid(rule: string, message: string, position: number, expected: number, actual: number): RecordsError {
  return new RecordsError('SEGLOG_ERR_RECORDS_INVALID_RECORD', rule, message, { position, expected, actual });
}
