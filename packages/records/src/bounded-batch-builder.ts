// Builds one producer record batch v2 bounded by its COMPRESSED size (the
// whole batch, 61-byte header included, at most `maxBytes`), by streaming
// records through the codec (franz-go's design, PR #1366; CODECS.md has the
// per-codec flush plans, src/internal/streaming/ the compressors).
//
// State: the compressor's committed output (exact size, `outputBytes`) plus a
// pending buffer of encoded records accepted since the last flush. Invariant:
// every byte in the compressor or in `pending` is an accepted record, in
// order, so sealing is a clean close and nothing has to be taken back.
//
// tryAppend(record):
//   1. worst case: 61 + compressor.bound(pending + record) <= maxBytes
//      (bound = committed output + the codec's incompressible expansion of
//      the span + stream end) -> accept without compressing anything;
//   2. else flush pending (now exact) and re-check with the record alone;
//   3. still no fit -> false (the caller seals and starts a new batch). An
//      EMPTY builder first measures the record itself (a trial flush), so a
//      large compressible record still fits; if even that does not fit it
//      returns false and the caller decides: send it alone uncompressed if
//      61 + its size <= maxBytes (buildBatch, codec none), else reject it
//      (MESSAGE_TOO_LARGE).
// seal(): finishes the stream, checks the sealed size against maxBytes again,
// and returns the batch. Any codec error, or a sealed size above maxBytes (a
// codec that broke its bound), demotes the builder to the plain path: the
// accepted records are rebuilt uncompressed with buildBatch, split into as
// many batches as maxBytes needs. So seal() returns an array: one batch
// normally, several only after a demotion. No record is lost either way.
// Sequences: baseSequence stays -1 unless given to seal(); producers assign it
// at the first send (assignBaseSequence) so unsent batches can be merged.
import { AssertionError, SeglogError, assert } from '@seglog/common';
import type { RecordInput } from './build-batch.js';
import { Codec, type CodecId } from './compression.js';
import { crc32c } from './crc32c.js';
import { incrementSequence } from './record-batch.js';
import { writeInt64 } from './internal/int64.js';
import * as L from './internal/layout.js';
import { encodedRecordSize, writeRecord } from './internal/streaming/encode-record.js';
import { streamFaults } from './internal/streaming/fault-hook.js';
import { buildPlainBatches, type PlainBatchOptions } from './internal/streaming/plain-batches.js';
import { createStreamCompressor } from './internal/streaming/create-stream-compressor.js';
import type { StreamCompressor } from './internal/streaming/stream-compressor.js';
import { assignBaseSequence } from './assign-base-sequence.js';

export interface BoundedBatchBuilderOptions {
  readonly codec: CodecId;
  /** Limit on the whole sealed batch, 61-byte header included (the broker's max.message.bytes). */
  readonly maxBytes: number;
  /** Codec level; undefined means the codec's default. */
  readonly level?: number;
  /** Default: the first record's timestamp. Records may give timestampDelta only if this is set. */
  readonly baseTimestamp?: number;
  /** Default -1 (no producer). */
  readonly producerId?: number;
  /** Default -1. */
  readonly producerEpoch?: number;
  readonly transactional?: boolean;
}

export interface SealOptions {
  /** Sequence of the first record; consecutive batches (after a demotion) continue from it. Default -1. */
  readonly baseSequence?: number;
}

export const CODEC_BOUND_EXCEEDED = 'SEGLOG_ERR_RECORDS_CODEC_BOUND_EXCEEDED';
const PENDING_BYTES_MIN = 16 * 1024;
/** Whole lz4 (64 KiB) and snappy (32 KiB) blocks: what maybeFlushBlocks compresses early. */
const EARLY_FLUSH_BYTES = 64 * 1024;

export class BoundedBatchBuilder {
  readonly codec: CodecId;
  readonly maxBytes: number;
  /** Times the compressor was flushed to measure (stats; a benchmark reports it). */
  flushCount: number;
  private readonly level: number | undefined;
  private readonly baseTimestampOption: number | undefined;
  private readonly producerId: number;
  private readonly producerEpoch: number;
  private readonly transactional: boolean;
  private compressor: StreamCompressor | null;
  private pending: Buffer;
  private pendingBytes: number;
  private readonly accepted: RecordInput[];
  private readonly timestamps: number[];
  private baseTimestamp: number;
  private maxTimestamp: number;
  private sealed: boolean;
  private cause: unknown;

  constructor(options: BoundedBatchBuilderOptions) {
    assert(Number.isInteger(options.codec) && options.codec >= 0 && options.codec <= 4, 'BoundedBatchBuilder: codec must be 0..4');
    assert(Number.isInteger(options.maxBytes), 'BoundedBatchBuilder: maxBytes must be an integer');
    assert(options.maxBytes > L.RECORD_BATCH_OVERHEAD && options.maxBytes <= L.INT32_MAX, 'BoundedBatchBuilder: maxBytes out of range');
    this.codec = options.codec;
    this.maxBytes = options.maxBytes;
    this.flushCount = 0;
    this.level = options.level;
    this.baseTimestampOption = options.baseTimestamp;
    this.producerId = options.producerId ?? L.NO_PRODUCER_ID;
    this.producerEpoch = options.producerEpoch ?? L.NO_PRODUCER_EPOCH;
    this.transactional = options.transactional ?? false;
    this.compressor = createStreamCompressor(options.codec, options.level);
    this.pending = Buffer.allocUnsafe(Math.min(PENDING_BYTES_MIN, options.maxBytes));
    this.pendingBytes = 0;
    this.accepted = [];
    this.timestamps = [];
    this.baseTimestamp = options.baseTimestamp ?? L.NO_TIMESTAMP;
    this.maxTimestamp = L.NO_TIMESTAMP;
    this.sealed = false;
    this.cause = undefined;
  }

  get recordsCount(): number {
    return this.accepted.length;
  }

  /** Upper bound of the sealed size right now (exact for codec none). */
  get estimatedBytes(): number {
    if (this.compressor === null) return this.maxBytes;
    return L.RECORD_BATCH_OVERHEAD + this.compressor.bound(this.pendingBytes);
  }

  /** The accepted records, in order (the caller keeps them for a retry or a merge). */
  get records(): readonly RecordInput[] {
    return this.accepted;
  }

  /** Absolute timestamps of the accepted records. */
  get recordTimestamps(): readonly number[] {
    return this.timestamps;
  }

  /** Why the builder fell back to the plain path (a codec error or a broken bound); undefined if it did not. */
  get demotionCause(): unknown {
    return this.cause;
  }

  get demoted(): boolean {
    return this.cause !== undefined;
  }

  /** Appends the record if the sealed batch is sure to stay within maxBytes; false otherwise (nothing changes). */
  tryAppend(record: RecordInput): boolean {
    assert(!this.sealed, 'tryAppend after seal');
    assert(record.offsetDelta === undefined, 'the builder assigns offsetDelta');
    const compressor = this.compressor;
    if (compressor === null) return false;
    const count = this.accepted.length;
    if (count === L.INT32_MAX) return false;
    const timestamp = this.resolveTimestamp(record);
    const base = count === 0 ? (this.baseTimestampOption ?? timestamp) : this.baseTimestamp;
    const size = encodedRecordSize(record, timestamp - base, count);
    try {
      if (this.fits(compressor, this.pendingBytes + size)) {
        this.accept(record, timestamp, base, size);
        this.maybeFlushBlocks(compressor);
        return true;
      }
      if (this.pendingBytes > 0) {
        this.flushPending(compressor);
        if (this.fits(compressor, size)) return this.accept(record, timestamp, base, size);
      }
      if (count > 0 || this.codec === Codec.none) return false;
      return this.trialAlone(compressor, record, timestamp, base, size);
    } catch (error) {
      this.demote(error);
      return false;
    }
  }

  /** Closes the batch. One batch normally; several (uncompressed) after a demotion. */
  seal(options: SealOptions = {}): Buffer[] {
    assert(!this.sealed, 'seal twice');
    assert(this.accepted.length > 0, 'seal an empty batch');
    this.sealed = true;
    let batches: Buffer[] | null = null;
    const compressor = this.compressor;
    if (compressor !== null) {
      try {
        batches = [this.finish(compressor)];
      } catch (error) {
        this.demote(error);
      }
    }
    batches ??= buildPlainBatches(this.accepted, this.timestamps, this.plainOptions());
    this.pending = EMPTY;
    if (options.baseSequence !== undefined) {
      let sequence = options.baseSequence;
      for (const batch of batches) {
        assignBaseSequence(batch, sequence);
        sequence = incrementSequence(sequence, batch.readInt32BE(L.RECORDS_COUNT_OFFSET));
      }
    }
    return batches;
  }

  /**
   * For a record an empty builder refused: a batch holding it alone,
   * uncompressed if 61 + its size fits maxBytes, else compressed one-shot if
   * that fits; else throws RecordsError TOO_LARGE (rule 'record-too-large').
   * Does not touch this builder's state.
   */
  buildAlone(record: RecordInput): Buffer {
    const batches = buildPlainBatches([record], [this.resolveTimestamp(record)], this.plainOptions());
    assert(batches.length === 1, 'buildAlone: one record, one batch');
    return batches[0]!;
  }

  private plainOptions(): PlainBatchOptions {
    return {
      codec: this.codec, level: this.level, maxBytes: this.maxBytes,
      producerId: this.producerId, producerEpoch: this.producerEpoch, transactional: this.transactional,
    };
  }

  private resolveTimestamp(record: RecordInput): number {
    assert(record.timestamp === undefined || record.timestampDelta === undefined, 'give timestamp or timestampDelta, not both');
    if (record.timestamp !== undefined) return record.timestamp;
    assert(this.baseTimestampOption !== undefined, 'a record without a timestamp needs the baseTimestamp option');
    return this.baseTimestampOption + (record.timestampDelta ?? 0);
  }

  private fits(compressor: StreamCompressor, pendingBytes: number): boolean {
    return L.RECORD_BATCH_OVERHEAD + compressor.bound(pendingBytes) <= this.maxBytes;
  }

  private accept(record: RecordInput, timestamp: number, base: number, size: number): true {
    this.reserve(size);
    const end = writeRecord(this.pending, this.pendingBytes, record, timestamp - base, this.accepted.length);
    assert(end === this.pendingBytes + size, 'record size computed and written differ');
    this.pendingBytes = end;
    if (this.accepted.length === 0) this.baseTimestamp = base;
    this.accepted.push(record);
    this.timestamps.push(timestamp);
    if (timestamp > this.maxTimestamp) this.maxTimestamp = timestamp;
    return true;
  }

  private reserve(size: number): void {
    const need = this.pendingBytes + size;
    if (need <= this.pending.length) return;
    const grown = Buffer.allocUnsafe(Math.max(need, this.pending.length * 2));
    this.pending.copy(grown, 0, 0, this.pendingBytes);
    this.pending = grown;
  }

  private flushPending(compressor: StreamCompressor): void {
    streamFaults.hook?.(this.codec, 'flush');
    compressor.flush(this.pending.subarray(0, this.pendingBytes));
    this.pendingBytes = 0;
    this.flushCount++;
  }

  /**
   * lz4 and snappy: once pending holds whole 64 KiB blocks' worth, they are
   * compressed now (blocks are independent, so the stream is the same as if
   * they were flushed later) and only the tail stays pending. The bytes are
   * still accepted records in order, a record may straddle the cut. This
   * keeps pending within L2 and the blocks full: a merged 1 MiB lz4 batch
   * otherwise waited for ~900 KiB of pending before its first (measuring)
   * flush. A codec error here demotes the builder; the record stays accepted.
   */
  private maybeFlushBlocks(compressor: StreamCompressor): void {
    if (this.codec !== Codec.lz4 && this.codec !== Codec.snappy) return;
    if (this.pendingBytes < EARLY_FLUSH_BYTES) return;
    const bytes = this.pendingBytes - (this.pendingBytes % EARLY_FLUSH_BYTES);
    try {
      streamFaults.hook?.(this.codec, 'flush');
      compressor.flush(this.pending.subarray(0, bytes));
    } catch (error) {
      this.demote(error);
      return;
    }
    this.pending.copyWithin(0, bytes, this.pendingBytes);
    this.pendingBytes -= bytes;
  }

  /** Empty builder, worst case too big: compress the record alone and measure. */
  private trialAlone(compressor: StreamCompressor, record: RecordInput, timestamp: number, base: number, size: number): boolean {
    this.accept(record, timestamp, base, size);
    try {
      this.flushPending(compressor);
    } catch (error) {
      this.forgetTrial();
      throw error;
    }
    if (this.fits(compressor, 0)) return true;
    // Does not fit even alone: forget it and start the stream again.
    this.forgetTrial();
    compressor.dispose();
    this.compressor = createStreamCompressor(this.codec, this.level);
    return false;
  }

  private forgetTrial(): void {
    this.pendingBytes = 0;
    this.accepted.length = 0;
    this.timestamps.length = 0;
    this.baseTimestamp = this.baseTimestampOption ?? L.NO_TIMESTAMP;
    this.maxTimestamp = L.NO_TIMESTAMP;
  }

  private finish(compressor: StreamCompressor): Buffer {
    const garbageBytes = streamFaults.hook?.(this.codec, 'finish') ?? 0;
    const chunks = compressor.finish(this.pending.subarray(0, this.pendingBytes));
    this.compressor = null;
    let payloadBytes = garbageBytes;
    for (const chunk of chunks) payloadBytes += chunk.length;
    const size = L.RECORD_BATCH_OVERHEAD + payloadBytes;
    if (size > this.maxBytes) {
      throw new SeglogError(CODEC_BOUND_EXCEEDED, `${this.codec} stream of ${size} bytes broke its bound (maxBytes ${this.maxBytes})`, {
        kafka: 'UNKNOWN_SERVER_ERROR', context: { codec: this.codec, size, maxBytes: this.maxBytes },
      });
    }
    const out = Buffer.alloc(size);
    let at = L.RECORDS_OFFSET;
    for (const chunk of chunks) {
      out.set(chunk, at);
      at += chunk.length;
    }
    this.writeHeader(out);
    return out;
  }

  private writeHeader(out: Buffer): void {
    let attributes: number = this.codec;
    if (this.transactional) attributes |= L.TRANSACTIONAL_FLAG_MASK;
    writeInt64(out, L.BASE_OFFSET_OFFSET, 0);
    out.writeInt32BE(out.length - L.LOG_OVERHEAD, L.BATCH_LENGTH_OFFSET);
    out.writeInt32BE(L.NO_PARTITION_LEADER_EPOCH, L.PARTITION_LEADER_EPOCH_OFFSET);
    out.writeInt8(L.MAGIC_V2, L.MAGIC_OFFSET);
    out.writeUInt16BE(attributes, L.ATTRIBUTES_OFFSET);
    out.writeInt32BE(this.accepted.length - 1, L.LAST_OFFSET_DELTA_OFFSET);
    writeInt64(out, L.BASE_TIMESTAMP_OFFSET, this.baseTimestamp);
    writeInt64(out, L.MAX_TIMESTAMP_OFFSET, this.maxTimestamp);
    writeInt64(out, L.PRODUCER_ID_OFFSET, this.producerId);
    out.writeInt16BE(this.producerEpoch, L.PRODUCER_EPOCH_OFFSET);
    out.writeInt32BE(L.NO_SEQUENCE, L.BASE_SEQUENCE_OFFSET);
    out.writeInt32BE(this.accepted.length, L.RECORDS_COUNT_OFFSET);
    out.writeUInt32BE(crc32c(out.subarray(L.ATTRIBUTES_OFFSET)), L.CRC_OFFSET);
  }

  /** Codec failure or broken bound: from now on the accepted records take the plain path. Assertions are bugs: rethrown. */
  private demote(error: unknown): void {
    if (error instanceof AssertionError) throw error;
    this.cause = error ?? new Error('codec failure');
    this.compressor?.dispose();
    this.compressor = null;
  }
}

const EMPTY = Buffer.alloc(0);
