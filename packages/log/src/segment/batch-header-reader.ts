// BatchHeaderReader: walks batch headers in a segment's .log file with
// chunked preads (one pread covers many small batches' headers), for offset
// translation, read-range ends, timestamp lookups and the tail scan on open.
//
// Format read (reference/kafka-storage.md §2): baseOffset int64 @0,
// batchLength int32 @8 (size = batchLength + 12), partitionLeaderEpoch @12,
// magic @16 (= 2), attributes @21, lastOffsetDelta int32 @23, maxTimestamp
// int64 @35. Only header fields are read; CRCs are checked by recovery, not
// here.
//
// Invariants: a header is accepted only if magic is 2, size ≥ 61, the batch
// lies inside [position, limit) and its offsets are safe integers; anything
// else is SEGLOG_ERR_LOG_CORRUPTION (these bytes were written by us and are
// below the written position, so damage here is not a torn tail). One reader
// serves one operation; its window buffer is reused across headers. A reader
// may start on a borrowed window (bytes the caller already read, e.g. a
// range read into a PlanBatchReader's buffer): headers inside it cost no
// pread, and a header outside it is read into a window of the reader's own
// (allocated then), never into the borrowed buffer.

import { assert } from '@seglog/common';
import type { IoFile } from '@seglog/io';
import { readInt64BE } from '../internal/int64.js';
import { logCorruption } from '../internal/log-errors.js';

export const BATCH_HEADER_BYTES = 61;
const DEFAULT_CHUNK_BYTES = 16 * 1024;

/** Bytes of the file already in memory: buffer[0, length) holds the file's [position, position + length). */
export interface BorrowedWindow {
  readonly buffer: Buffer;
  readonly position: number;
  readonly length: number;
}

export class BatchHeaderReader {
  private readonly file: IoFile;
  private readonly chunkBytes: number;
  private window: Buffer;
  /** The window is the caller's: never read into it. */
  private borrowed: boolean;
  private windowStart: number;
  private windowLength: number;
  /** Fields of the header read last. */
  position: number;
  size: number;
  baseOffset: number;
  lastOffset: number;
  maxTimestamp: number;
  partitionLeaderEpoch: number;
  attributes: number;

  constructor(file: IoFile, chunkBytes = DEFAULT_CHUNK_BYTES, borrow: BorrowedWindow | null = null) {
    assert(borrow === null || (borrow.length >= 0 && borrow.length <= borrow.buffer.length), 'BatchHeaderReader: borrowed length must fit its buffer');
    this.file = file;
    this.chunkBytes = Math.max(chunkBytes, BATCH_HEADER_BYTES);
    this.window = borrow === null ? Buffer.allocUnsafe(this.chunkBytes) : borrow.buffer;
    this.borrowed = borrow !== null;
    this.windowStart = borrow === null ? 0 : borrow.position;
    this.windowLength = borrow === null ? 0 : borrow.length;
    this.position = -1;
    this.size = 0;
    this.baseOffset = -1;
    this.lastOffset = -1;
    this.maxTimestamp = -1;
    this.partitionLeaderEpoch = -1;
    this.attributes = 0;
  }

  /**
   * Reads the header of the batch at `position`; false when fewer than 61
   * bytes remain before `limit` (end of data). Throws SEGLOG_ERR_LOG_CORRUPTION
   * for a malformed header or a batch running past `limit`.
   */
  async read(position: number, limit: number): Promise<boolean> {
    if (limit - position < BATCH_HEADER_BYTES) return false;
    this.parse(position, limit, await this.ensure(position, limit));
    return true;
  }

  /**
   * read() without waiting, for a walk over a window already in memory: true
   * or false as read() answers, or null when the header is not in the
   * window (call read()).
   */
  readInWindow(position: number, limit: number): boolean | null {
    if (limit - position < BATCH_HEADER_BYTES) return false;
    if (position < this.windowStart || position + BATCH_HEADER_BYTES > this.windowStart + this.windowLength) return null;
    this.parse(position, limit, position - this.windowStart);
    return true;
  }

  /** Checks and keeps the header of the batch at file `position`, at `at` in the window. */
  private parse(position: number, limit: number, at: number): void {
    const w = this.window;
    const batchLength = w.readInt32BE(at + 8);
    const size = batchLength + 12;
    const magic = w.readInt8(at + 16);
    const baseOffset = readInt64BE(w, at);
    const lastOffset = baseOffset + w.readInt32BE(at + 23);
    if (magic !== 2 || size < BATCH_HEADER_BYTES || position + size > limit || !Number.isSafeInteger(baseOffset) || lastOffset < baseOffset) {
      throw logCorruption(this.file.path, 'malformed batch header below the written position', { position, limit, batchLength, magic, baseOffset });
    }
    this.position = position;
    this.size = size;
    this.baseOffset = baseOffset;
    this.lastOffset = lastOffset;
    this.maxTimestamp = readInt64BE(w, at + 35);
    this.partitionLeaderEpoch = w.readInt32BE(at + 12);
    this.attributes = w.readInt16BE(at + 21);
  }

  /** Position in the window of the 61 header bytes at `position`, reading a chunk when needed. */
  private async ensure(position: number, limit: number): Promise<number> {
    const inWindow = position >= this.windowStart && position + BATCH_HEADER_BYTES <= this.windowStart + this.windowLength;
    if (inWindow) return position - this.windowStart;
    if (this.borrowed) {
      this.window = Buffer.allocUnsafe(this.chunkBytes);
      this.borrowed = false;
    }
    const length = Math.min(this.window.length, limit - position);
    const read = await this.file.pread(this.window, position, length);
    this.windowStart = position;
    this.windowLength = read;
    if (read < BATCH_HEADER_BYTES) {
      throw logCorruption(this.file.path, 'file shorter than its written position', { position, limit, read });
    }
    return 0;
  }
}
