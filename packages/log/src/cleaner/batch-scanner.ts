// BatchScanner: reads the whole batches of one sealed segment's .log in
// order, for the cleaner, through chunked preads of the segment's own handle
// (retained for the scan, so a concurrent deletion cannot close it under us).
//
// Format: a .log is concatenated record batches v2 (segment/segment.ts).
// Every batch is CRC-checked (validateFollowerBatch) before the cleaner uses
// it: a sealed segment's bytes were checked when written or recovered, so a
// bad one here is SEGLOG_ERR_LOG_CORRUPTION and the pass stops, changing
// nothing. Memory: one window of WINDOW_BYTES, grown only for a larger batch.

import { nextBatchSize, validateFollowerBatch } from '@seglog/records';
import type { RecordBatch } from '@seglog/records';
import type { SegmentFileRef } from '../fetch-plan.js';
import { logCorruption } from '../internal/log-errors.js';

// One pread per window: the cleaner's CPU between two reads (filtering a window of batches) is what
// it holds the event loop for, so the window stays small.
const WINDOW_BYTES = 256 * 1024;
const SIZE_FIELD_END = 12;

export class BatchScanner {
  private readonly file: SegmentFileRef;
  private readonly limit: number;
  private window: Buffer;
  private windowStart: number;
  private windowLength: number;
  private view: RecordBatch | undefined;
  /** Position of the next batch. */
  position: number;
  /** Bytes read from the file so far (for the throttle). */
  bytesRead: number;

  /** Scans [0, limit) of `file`, which the caller has retained and releases after. */
  constructor(file: SegmentFileRef, limit: number) {
    this.file = file;
    this.limit = limit;
    this.window = Buffer.allocUnsafe(Math.max(Math.min(WINDOW_BYTES, limit), SIZE_FIELD_END));
    this.windowStart = 0;
    this.windowLength = 0;
    this.view = undefined;
    this.position = 0;
    this.bytesRead = 0;
  }

  /** The next batch (a view valid until the next call), or null at the end. */
  async next(): Promise<RecordBatch | null> {
    const position = this.position;
    if (position >= this.limit) return null;
    if (this.limit - position < SIZE_FIELD_END) throw this.corrupt(position, 'trailing bytes shorter than a batch header');
    let at = await this.ensure(position, SIZE_FIELD_END);
    const size = this.window.readInt32BE(at + 8) + SIZE_FIELD_END;
    if (size < 61 || position + size > this.limit) throw this.corrupt(position, `batch size ${size} runs past the segment end`);
    at = await this.ensure(position, size);
    const frame = this.window.subarray(at, at + size);
    let batch: RecordBatch;
    try {
      if (nextBatchSize(frame, 0, { mode: 'file' }) !== size) throw new Error('framing');
      batch = validateFollowerBatch(frame, 0, this.view);
      this.view = batch;
    } catch (error) {
      throw this.corrupt(position, 'batch fails its CRC or framing', error);
    }
    this.position = position + size;
    return batch;
  }

  private async ensure(position: number, length: number): Promise<number> {
    if (position >= this.windowStart && position + length <= this.windowStart + this.windowLength) return position - this.windowStart;
    if (length > this.window.length) this.window = Buffer.allocUnsafe(length);
    const want = Math.min(this.window.length, this.limit - position);
    const read = await this.file.file.pread(this.window, position, want);
    this.bytesRead += read;
    this.windowStart = position;
    this.windowLength = read;
    if (read < length) throw this.corrupt(position, 'file shorter than the segment size');
    return 0;
  }

  private corrupt(position: number, reason: string, cause?: unknown): Error {
    return logCorruption(this.file.path, `cleaner: ${reason}`, { position, limit: this.limit }, cause);
  }
}
