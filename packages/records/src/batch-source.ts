// BatchSource: the header fields of one record batch v2 that a RecordCursor
// reads to iterate its records. RecordBatch implements it; the cursor depends
// on this shape, not on RecordBatch, so record-batch.ts (which opens cursors)
// and record-cursor.ts (which reads batches) do not import each other.
// The fields mean what RecordBatch's header comment says: `start` is the
// batch's byte position in `buffer`, `sizeInBytes` == batchLength + 12.
import type { CodecId } from './compression.js';

/** Kafka's message.timestamp.type values. */
export type TimestampType = 'CreateTime' | 'LogAppendTime';

export interface BatchSource {
  readonly buffer: Buffer;
  readonly start: number;
  readonly sizeInBytes: number;
  readonly baseOffset: number;
  readonly baseTimestamp: number;
  readonly maxTimestamp: number;
  readonly baseSequence: number;
  readonly recordsCount: number;
  readonly compression: CodecId;
  readonly timestampType: TimestampType;
  /**
   * Record entries BatchWindowIndex wrote for exactly these bytes (8 int32s
   * per record from entry `recordIndexFirst`), or null/absent: the cursor then
   * steps through them instead of decoding the records.
   */
  readonly recordIndex?: Int32Array | null;
  readonly recordIndexFirst?: number;
}
