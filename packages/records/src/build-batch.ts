// Builds a record batch v2 (data, idempotent or transactional) from records:
// resolves timestamp and offset deltas, computes maxTimestamp, exact sizes,
// compression and the CRC. The result is a fresh Buffer holding exactly one
// batch. See internal/write-batch.ts for the encoding.
//
// Timestamps: a batch whose first record has no absolute timestamp (and no
// baseTimestamp given) is stamped with the clock (`now`, default Date.now),
// as a producer stamps CreateTime: every record without a timestamp gets
// baseTimestamp + its timestampDelta (0).
import { assert } from '@seglog/common';
import type { CodecId } from './compression.js';
import * as L from './internal/layout.js';
import { writeBatch, type Bytes } from './internal/write-batch.js';
import type { TimestampType } from './record-batch.js';

export interface RecordHeaderInput {
  readonly key: string;
  /** null (or omitted) for a null header value. */
  readonly value?: Bytes | null;
}

export interface RecordInput {
  /** null (or omitted) for a null key. Strings are written as UTF-8. */
  readonly key?: Bytes | null;
  /** null (or omitted) for a null value (tombstone). */
  readonly value?: Bytes | null;
  readonly headers?: readonly RecordHeaderInput[];
  /** Absolute timestamp in ms. Give this or timestampDelta; neither means delta 0 (the batch's baseTimestamp, by default now). */
  readonly timestamp?: number;
  /** Timestamp relative to the batch baseTimestamp (may be negative). */
  readonly timestampDelta?: number;
  /** Default: the record's index in `records`. */
  readonly offsetDelta?: number;
}

export interface BuildBatchOptions {
  readonly records: readonly RecordInput[];
  /** Default 0 (what producers send; the leader assigns the real offset). */
  readonly baseOffset?: number;
  /** Default -1 (none). */
  readonly partitionLeaderEpoch?: number;
  /** Default Codec.none. */
  readonly compression?: CodecId;
  readonly compressionLevel?: number;
  /** Default: the first record's absolute timestamp, else now() (a producer's CreateTime); -1 for an empty batch. */
  readonly baseTimestamp?: number;
  /** The clock that stamps a batch whose first record has no timestamp. Default Date.now. */
  readonly now?: () => number;
  /** Default: the largest record timestamp (-1 if none). Required for LogAppendTime (the append time). */
  readonly maxTimestamp?: number;
  /** Default 'CreateTime'. */
  readonly timestampType?: TimestampType;
  /** Default -1 (no producer). */
  readonly producerId?: number;
  /** Default -1. */
  readonly producerEpoch?: number;
  /** Default -1 (no sequence). */
  readonly baseSequence?: number;
  readonly transactional?: boolean;
  /** Default: the last record's offsetDelta (0 for an empty batch). Compacted batches keep their original. */
  readonly lastOffsetDelta?: number;
}

/**
 * The records are handed to the writer as they are (no per-record object):
 * one pass sizes them (and finds maxTimestamp), one writes them.
 */
export function buildBatch(options: BuildBatchOptions): Buffer {
  const baseTimestamp = resolveBaseTimestamp(options);
  const timestampType = options.timestampType ?? 'CreateTime';
  assert(timestampType === 'CreateTime' || options.maxTimestamp !== undefined, 'a LogAppendTime batch needs maxTimestamp (the append time)');
  const codec = options.compression ?? 0;
  let attributes: number = codec;
  if (timestampType === 'LogAppendTime') attributes |= L.TIMESTAMP_TYPE_MASK;
  if (options.transactional === true) attributes |= L.TRANSACTIONAL_FLAG_MASK;
  return writeBatch({
    baseOffset: options.baseOffset ?? 0,
    partitionLeaderEpoch: options.partitionLeaderEpoch ?? L.NO_PARTITION_LEADER_EPOCH,
    attributes,
    lastOffsetDelta: options.lastOffsetDelta,
    baseTimestamp,
    maxTimestamp: options.maxTimestamp,
    producerId: options.producerId ?? L.NO_PRODUCER_ID,
    producerEpoch: options.producerEpoch ?? L.NO_PRODUCER_EPOCH,
    baseSequence: options.baseSequence ?? L.NO_SEQUENCE,
    records: options.records,
    compressionLevel: options.compressionLevel,
  });
}

function resolveBaseTimestamp(options: BuildBatchOptions): number {
  if (options.baseTimestamp !== undefined) return options.baseTimestamp;
  const first = options.records[0];
  if (first === undefined) return L.NO_TIMESTAMP;
  if (first.timestamp !== undefined) return first.timestamp;
  const stamped = (options.now ?? Date.now)();
  assert(Number.isSafeInteger(stamped) && stamped >= 0, 'buildBatch: now() must return a non-negative safe integer (ms)');
  return stamped;
}
