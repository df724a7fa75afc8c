// The write path's seam between Log and a segment's .log file. The Log
// assigns each accepted batch its position (the segment's logical size) and
// queues its bytes here; the writer puts them in the file and reports, in
// order, how far the file is complete. DirectSegmentWriter
// (direct-segment-writer.ts: aligned staging chunks, tail page rewrites) is the
// O_DIRECT writer behind the same interface.
//
// Invariants of every SegmentWriter:
// - enqueue() positions are contiguous: each starts where the previous ended
//   (the first at the segment's size when the writer was made).
// - writtenPosition only grows, and every byte below it is in the file
//   (page cache for buffered writes); onWritten is called with the new
//   writtenPosition and the last offset of the last batch it covers, in
//   enqueue order.
// - After the first failure nothing more is written or reported written;
//   onWriteError is called once and drain() rejects with the failure.
// - A queued buffer is not modified or reused by the writer; the Log owns it
//   until it is written.
// - A write may carry the file's fdatasync in the same operation
//   (IoFile.pwritevDatasync: one threadpool job) when the listener's
//   wantsSync(lastOffset) says a durable() waiter (or the flush policy) wants
//   bytes it covers; onWritten then reports the last offset that sync made
//   durable (every byte below it was in the file when the sync ran), else -1.
//   The decision is taken when the write is issued, so writes are issued
//   from a microtask after enqueue(), or earlier by issueQueued() (the Log
//   calls it from durable(), after registering the waiter): a durable() call
//   made right after the append, in the same synchronous step, is seen, and
//   the write still leaves at once (with many producers it overlaps their
//   next batches' building instead of waiting for all of them).

import { assert } from '@seglog/common';
import type { IoFile } from '@seglog/io';

export interface SegmentWriterListener {
  /**
   * Bytes below `writtenPosition` are in the file; `lastOffset` is the last
   * offset they hold. `syncedLastOffset` ≥ 0: a completed fdatasync, issued
   * after every byte up to that offset's batch end was in the file, made them
   * durable (the write carried the sync); -1: nothing synced.
   */
  onWritten(writtenPosition: number, lastOffset: number, syncedLastOffset: number): void;
  onWriteError(error: unknown): void;
  /** Asked as a write is issued: should it carry an fdatasync (a waiter wants offsets up to `lastOffset` durable)? */
  wantsSync(lastOffset: number): boolean;
}

export interface SegmentWriter {
  readonly writtenPosition: number;
  /** Position after the last enqueued byte. */
  readonly enqueuedPosition: number;
  enqueue(buffer: Buffer, position: number, lastOffset: number): void;
  /** Resolves when every enqueued byte is written; rejects with the first write failure. */
  drain(): Promise<void>;
  /** Issues now what a scheduled pump (microtask) would issue; nothing when none is scheduled. */
  issueQueued(): void;
  /** fdatasync of the file: makes durable every byte written before it started. */
  sync(): Promise<void>;
  /** Whether `bytes` more can be queued now without exceeding the writer's bound (the Log's caller path). */
  hasRoom(bytes: number): boolean;
  /** Resolves when the writer's queue is below its bound again; rejects with the first write failure. */
  whenRoom(): Promise<void>;
  /** Drains and releases the writer's resources (the file stays open). Idempotent. */
  close(): Promise<void>;
}

export interface BufferedWriterLimits {
  /** Bytes one pwritev may carry (a single larger batch is written alone). */
  readonly maxWriteBytes: number;
  /** Buffers one pwritev may carry (below IOV_MAX = 1024). */
  readonly maxIovecs: number;
  /** Bytes queued but not yet written before hasRoom() says no (one larger batch is still accepted into an empty queue). Default 64 MiB. */
  readonly maxQueuedBytes?: number;
  /**
   * Every time this many bytes have been written since the last hint, the
   * writer asks the file to start their writeback (IoFile.startWriteback:
   * sync_file_range WRITE), so a later fdatasync finds them on their way to
   * the disk instead of all dirty at once (RocksDB's bytes_per_sync). A hint
   * only: durability still comes from fdatasync alone. 0 turns it off.
   * Default: the log's LogConfig.writebackBytes (a writer made alone: 1 MiB).
   */
  readonly writebackBytes?: number;
}

export const DEFAULT_WRITER_LIMITS: BufferedWriterLimits = { maxWriteBytes: 1024 * 1024, maxIovecs: 256 };
const DEFAULT_MAX_QUEUED_BYTES = 64 * 1024 * 1024;
/**
 * Measured (bench/hotpath-append.ts, 1 M records of 100 B, buffered, issue
 * 18): the closing flush (the last writes + fdatasync of ~100 MB) took 64-88
 * ms without hints and 27-34 ms with them; 256 KiB, 1 MiB and 4 MiB hints
 * measured alike.
 */
const DEFAULT_WRITEBACK_BYTES = 1024 * 1024;

interface DrainWaiter {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Page-cache writes: coalesces the queued contiguous batches into one
 * pwritev (bounded by maxWriteBytes and maxIovecs), one write in flight at a
 * time, so completions arrive in order without reordering logic.
 */
export class BufferedSegmentWriter implements SegmentWriter {
  private readonly file: IoFile;
  private readonly listener: SegmentWriterListener;
  private readonly limits: BufferedWriterLimits;
  private readonly queue: (Buffer | undefined)[];
  private readonly queueLastOffsets: number[];
  private head: number;
  private readonly iov: Buffer[];
  private inFlight: boolean;
  private inFlightCount: number;
  private inFlightBytes: number;
  private inFlightLastOffset: number;
  /** The write in flight carries the fdatasync. */
  private inFlightSync: boolean;
  /** A pump is queued as a microtask (writes are issued after the enqueuing step). */
  private pumpScheduled: boolean;
  private writtenPositionValue: number;
  private enqueuedPositionValue: number;
  private failure: unknown;
  private failed: boolean;
  private readonly drainWaiters: DrainWaiter[];
  private readonly roomWaiters: DrainWaiter[];
  private readonly maxQueuedBytes: number;
  private readonly writebackBytes: number;
  /** Start of the written bytes not yet hinted for writeback. */
  private writebackFrom: number;
  private readonly onDone: () => void;
  private readonly onFail: (error: unknown) => void;
  private readonly onPump: () => void;
  /** pwritev calls issued (metrics); writeSyncs: those that carried the fdatasync. */
  writes: number;
  writeSyncs: number;

  constructor(file: IoFile, startPosition: number, listener: SegmentWriterListener, limits: BufferedWriterLimits = DEFAULT_WRITER_LIMITS) {
    assert(Number.isInteger(startPosition) && startPosition >= 0, 'BufferedSegmentWriter: startPosition must be a non-negative integer');
    assert(limits.maxIovecs >= 1 && limits.maxWriteBytes >= 1, 'BufferedSegmentWriter: limits must be positive');
    this.file = file;
    this.listener = listener;
    this.limits = limits;
    this.queue = [];
    this.queueLastOffsets = [];
    this.head = 0;
    this.iov = [];
    this.inFlight = false;
    this.inFlightCount = 0;
    this.inFlightBytes = 0;
    this.inFlightLastOffset = -1;
    this.inFlightSync = false;
    this.pumpScheduled = false;
    this.writtenPositionValue = startPosition;
    this.enqueuedPositionValue = startPosition;
    this.failure = undefined;
    this.failed = false;
    this.drainWaiters = [];
    this.roomWaiters = [];
    this.maxQueuedBytes = limits.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
    this.writebackBytes = limits.writebackBytes ?? DEFAULT_WRITEBACK_BYTES;
    assert(Number.isSafeInteger(this.writebackBytes) && this.writebackBytes >= 0, 'BufferedSegmentWriter: writebackBytes must be a non-negative integer');
    this.writebackFrom = startPosition;
    this.onDone = () => this.completed();
    this.onFail = (error: unknown) => this.failedWrite(error);
    this.onPump = () => {
      if (!this.pumpScheduled) return; // issueQueued() ran it already
      this.pumpScheduled = false;
      this.pump();
    };
    this.writes = 0;
    this.writeSyncs = 0;
  }

  get writtenPosition(): number {
    return this.writtenPositionValue;
  }

  get enqueuedPosition(): number {
    return this.enqueuedPositionValue;
  }

  enqueue(buffer: Buffer, position: number, lastOffset: number): void {
    assert(position === this.enqueuedPositionValue, 'SegmentWriter.enqueue: positions must be contiguous');
    assert(buffer.length > 0, 'SegmentWriter.enqueue: empty buffer');
    assert(!this.failed, 'SegmentWriter.enqueue: writer failed');
    this.queue.push(buffer);
    this.queueLastOffsets.push(lastOffset);
    this.enqueuedPositionValue += buffer.length;
    if (!this.inFlight && !this.pumpScheduled) {
      // Issued after this synchronous step, so a durable() call made right
      // after the append rides in the same job as the write (wantsSync).
      this.pumpScheduled = true;
      queueMicrotask(this.onPump);
    }
  }

  drain(): Promise<void> {
    if (this.failed) return Promise.reject(this.failure);
    if (this.writtenPositionValue === this.enqueuedPositionValue) return Promise.resolve();
    return new Promise<void>((resolve, reject) => this.drainWaiters.push({ resolve, reject }));
  }

  sync(): Promise<void> {
    return this.file.fdatasync();
  }

  issueQueued(): void {
    if (!this.pumpScheduled) return;
    this.pumpScheduled = false; // the microtask then finds the write in flight and does nothing
    this.pump();
  }

  hasRoom(bytes: number): boolean {
    if (this.failed) return false;
    const queued = this.enqueuedPositionValue - this.writtenPositionValue;
    return queued === 0 || queued + bytes <= this.maxQueuedBytes;
  }

  whenRoom(): Promise<void> {
    if (this.failed) return Promise.reject(this.failure);
    if (this.enqueuedPositionValue - this.writtenPositionValue < this.maxQueuedBytes) return Promise.resolve();
    return new Promise<void>((resolve, reject) => this.roomWaiters.push({ resolve, reject }));
  }

  close(): Promise<void> {
    return this.drain();
  }

  private pump(): void {
    if (this.inFlight || this.failed || this.head === this.queue.length) return;
    const iov = this.iov;
    iov.length = 0;
    let bytes = 0;
    let index = this.head;
    while (index < this.queue.length && iov.length < this.limits.maxIovecs) {
      const buffer = this.queue[index] as Buffer;
      if (iov.length > 0 && bytes + buffer.length > this.limits.maxWriteBytes) break;
      iov.push(buffer);
      bytes += buffer.length;
      index++;
    }
    this.inFlight = true;
    this.inFlightCount = iov.length;
    this.inFlightBytes = bytes;
    this.inFlightLastOffset = this.queueLastOffsets[index - 1] as number;
    this.writes++;
    this.inFlightSync = this.listener.wantsSync(this.inFlightLastOffset);
    if (this.inFlightSync) {
      this.writeSyncs++;
      this.file.pwritevDatasync(iov, this.writtenPositionValue).then(this.onDone, this.onFail);
    } else {
      this.file.pwritev(iov, this.writtenPositionValue).then(this.onDone, this.onFail);
    }
  }

  private completed(): void {
    this.inFlight = false;
    for (let i = 0; i < this.inFlightCount; i++) this.queue[this.head + i] = undefined;
    this.head += this.inFlightCount;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.queueLastOffsets.splice(0, this.head);
      this.head = 0;
    }
    this.writtenPositionValue += this.inFlightBytes;
    if (this.writebackBytes > 0 && this.writtenPositionValue - this.writebackFrom >= this.writebackBytes) {
      this.file.startWriteback?.(this.writebackFrom, this.writtenPositionValue - this.writebackFrom);
      this.writebackFrom = this.writtenPositionValue;
    }
    this.listener.onWritten(this.writtenPositionValue, this.inFlightLastOffset, this.inFlightSync ? this.inFlightLastOffset : -1);
    if (this.writtenPositionValue === this.enqueuedPositionValue) {
      const waiters = this.drainWaiters.splice(0);
      for (const waiter of waiters) waiter.resolve();
    }
    if (this.roomWaiters.length > 0 && this.enqueuedPositionValue - this.writtenPositionValue < this.maxQueuedBytes) {
      const waiters = this.roomWaiters.splice(0);
      for (const waiter of waiters) waiter.resolve();
    }
    this.pump();
  }

  private failedWrite(error: unknown): void {
    this.inFlight = false;
    this.failed = true;
    this.failure = error;
    this.iov.length = 0;
    this.listener.onWriteError(error);
    const waiters = this.drainWaiters.splice(0).concat(this.roomWaiters.splice(0));
    for (const waiter of waiters) waiter.reject(error);
  }
}
