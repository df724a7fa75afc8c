// DirectSegmentWriter: the SegmentWriter for a segment's .log file opened
// with O_DIRECT (ARCHITECTURE.md "The write path", Redpanda's appender in
// reference/redpanda-franz-krabka.md §1.2).
//
// On-disk format: the same bytes BufferedSegmentWriter writes (concatenated
// v2 record batches at their logical positions), written in whole pages of
// `alignment` bytes (io.directAlignment). A write that ends inside a page
// pads the rest of that page with zeros; the next write starts at that page
// and rewrites it with more bytes. So while the writer is open the file may be
// longer than its logical end by less than one page, and every byte past the
// logical end is zero (or a reservation's zeros). trim()/close() ftruncate the
// file to the logical end.
//
// Invariants (beyond those of every SegmentWriter):
// - Staging memory comes from an AlignedArena: a few chunks per writer
//   (`maxChunks`), at least one held for the writer's life so it always makes
//   progress. Within a chunk a "region" maps chunk memory linearly onto a
//   page-aligned file range.
// - Memory an in-flight write covers is never modified: when new bytes belong
//   to a page an in-flight write is reading, the page's valid prefix is copied
//   to memory no write covers (after the frozen end of the same chunk, the
//   start of an idle chunk, or a fresh chunk) and staging continues there
//   (Redpanda #28249, #31306).
// - A write that rewrites a page is not issued while the write that last
//   covered the page is in flight, so overlapping writes never race (the
//   kernel may complete concurrent writes in any order).
// - Up to `maxInFlight` writes run at once; they may complete out of order.
//   writtenPosition advances only over the contiguous prefix of completed
//   writes, and only to batch boundaries (logical positions, never padded
//   ones), with the last offset of the last batch below it.
// - Staged bytes not yet written are merged into the next write: a write
//   covers everything staged in its region when it is issued (up to
//   maxWriteBytes), so queued small batches become one write.
// - A write carries the fdatasync (pwritevDatasync, one pool job) only when
//   no other write is in flight, so every byte below its end is in the file
//   when the sync runs, and the listener's wantsSync says a waiter wants a
//   batch it covers. Writes are issued from a microtask after enqueue() (see
//   segment-writer.ts), unless the batch went to the backlog.
// - Backpressure, never failure: when no staging memory is free, enqueue()
//   keeps the rest of the batch by reference (the Log owns a queued buffer
//   until it is written anyway) and returns false; hasRoom(bytes) answers
//   synchronously whether an enqueue would be staged at once; whenRoom()
//   resolves when the backlog has been staged.
//
// Staging memory (arena chunks, regions, the tail page's copies) is
// DirectStaging's (direct-staging.ts); this class issues the writes, tracks
// their completion and holds the backlog.
//
// Readers: read the file through a separately opened buffered (or O_DIRECT,
// aligned) handle, and only below writtenPosition. On Linux a completed
// O_DIRECT write invalidates the page cache over its range, so a buffered
// read after completion sees the new bytes. A rewrite of the tail page in
// flight does not change the bytes below writtenPosition (the prefix it
// rewrites is identical), so a concurrent buffered read of them sees the same
// bytes whichever version of the page it meets.

import { assert, SeglogError } from '@seglog/common';
import type { AlignedArena, IoFile } from '@seglog/io';
import { DirectStaging } from './direct-staging.js';
import type { StagingChunk, StagingRegion } from './direct-staging.js';
import type { SegmentWriter, SegmentWriterListener } from './segment-writer.js';

export { stagingExhausted } from './direct-staging.js';

export interface DirectWriterOptions {
  /** Staging memory; its chunkBytes must be a multiple of `alignment`. */
  readonly arena: AlignedArena;
  /** O_DIRECT alignment of positions and lengths: io.directAlignment. */
  readonly alignment: number;
  /** Writes in flight at once (1..16). Default 4. */
  readonly maxInFlight?: number;
  /** Arena chunks this writer may hold at once (1..64). Default 4. */
  readonly maxChunks?: number;
  /** Bytes one write may carry, a multiple of `alignment`. Default the chunk size. */
  readonly maxWriteBytes?: number;
  /** While other writes are in flight, a write is issued only with this many whole pages staged. Default 256 KiB (at most a chunk). */
  readonly minWriteBytes?: number;
  /** Batches the backlog may hold; more is a Log bug (it must wait for whenRoom()). Default 1024. */
  readonly maxBacklogBatches?: number;
}

/** One in-flight write; slots are reused, their callbacks bound once. */
class WriteSlot {
  chunk: StagingChunk | null;
  logicalEnd: number;
  done: boolean;
  /** The write carries the fdatasync (issued with nothing else in flight). */
  sync: boolean;
  readonly onDone: () => void;
  readonly onFail: (error: unknown) => void;

  constructor(writer: DirectSegmentWriter) {
    this.chunk = null;
    this.logicalEnd = 0;
    this.done = false;
    this.sync = false;
    this.onDone = () => writer.settled(this, undefined, false);
    this.onFail = (error: unknown) => writer.settled(this, error, true);
  }
}

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** The index after the last batch (from `head`) whose end is at or below logical position `end`. */
function wholeBatchesEnd(batchEnds: readonly number[], head: number, end: number): number {
  let index = head;
  while (index < batchEnds.length && (batchEnds[index] as number) <= end) index++;
  return index;
}

/**
 * Where a write of the head (unsealed) region from `start` ends, or -1 for
 * no write now. With writes in flight: only whole pages, and at least
 * `minWriteBytes` of them, so small batches merge. With none: everything
 * staged (the partial tail page padded), except in a burst (two minimum
 * writes' worth staged at once): then its whole pages now and the partial
 * tail page later (whole once the next batch is staged, or written alone
 * when the writes drain). A write ending inside a page keeps every later
 * write waiting for it (the page's rewrite may not run beside it), so
 * writing it in a burst made the disk see one write at a time: 256 MiB of
 * 1 MiB batches, 700-860 MB/s before, 860-1,040 MB/s after (issue 18).
 */
function openRegionWriteEnd(staging: DirectStaging, start: number, stagedEnd: number, inFlight: number, minWriteBytes: number): number {
  const fileStart = staging.alignDown(start);
  const whole = staging.alignDown(stagedEnd);
  if (inFlight > 0) return whole <= start || whole - fileStart < minWriteBytes ? -1 : whole;
  if (whole !== stagedEnd && whole > start && whole - fileStart >= 2 * minWriteBytes) return whole;
  return stagedEnd;
}

export class DirectSegmentWriter implements SegmentWriter {
  private readonly file: IoFile;
  private readonly listener: SegmentWriterListener;
  /** Staging memory: chunks, regions, the tail page (direct-staging.ts). */
  private readonly staging: DirectStaging;
  private readonly maxInFlight: number;
  private readonly maxWriteBytes: number;
  private readonly minWriteBytes: number;
  private readonly maxBacklogBatches: number;
  private readonly slots: WriteSlot[];
  /** The one-buffer vector of a write that carries the sync (reused; the Io copies it). */
  private readonly iov: Uint8Array[];
  private slotHead: number;
  private inFlight: number;
  /** The newest in-flight write when it ends inside a page (the next write must wait for it). */
  private partialSlot: WriteSlot | null;
  /** Batch ends and last offsets not yet reported written, from batchHead on. */
  private readonly batchEnds: number[];
  private readonly batchLastOffsets: number[];
  private batchHead: number;
  /** Batches (or their rest) not yet staged, by reference; backlogFrom bytes of the first are staged. */
  private readonly backlog: (Buffer | undefined)[];
  private backlogHead: number;
  private backlogFrom: number;
  private completedEnd: number;
  private writtenPositionValue: number;
  private enqueuedPositionValue: number;
  private failed: boolean;
  private failure: unknown;
  private closed: boolean;
  private hydrated: boolean;
  private readonly drainWaiters: Waiter[];
  private readonly roomWaiters: Waiter[];
  /** A pump is queued as a microtask (writes are issued after the enqueuing step). */
  private pumpScheduled: boolean;
  private readonly onPump: () => void;
  /** Writes issued, those that carried the fdatasync, enqueues that went to the backlog (metrics; pageCopies: tail-page copies to fresh memory). */
  writes: number;
  writeSyncs: number;
  backlogged: number;

  constructor(file: IoFile, startPosition: number, listener: SegmentWriterListener, options: DirectWriterOptions) {
    const { arena, alignment } = options;
    assert(Number.isSafeInteger(startPosition) && startPosition >= 0, 'DirectSegmentWriter: startPosition must be a non-negative integer');
    assert(alignment > 0 && (alignment & (alignment - 1)) === 0, 'DirectSegmentWriter: alignment must be a power of two');
    assert(arena.chunkBytes % alignment === 0 && arena.alignment % alignment === 0, 'DirectSegmentWriter: arena chunks must be aligned to alignment');
    this.file = file;
    this.listener = listener;
    const maxChunks = options.maxChunks ?? 4;
    this.maxInFlight = options.maxInFlight ?? 4;
    this.maxWriteBytes = options.maxWriteBytes ?? arena.chunkBytes;
    this.minWriteBytes = Math.min(options.minWriteBytes ?? 256 * 1024, arena.chunkBytes);
    this.maxBacklogBatches = options.maxBacklogBatches ?? 1024;
    assert(Number.isInteger(this.maxInFlight) && this.maxInFlight >= 1 && this.maxInFlight <= 16, 'DirectSegmentWriter: maxInFlight must be 1..16');
    assert(Number.isInteger(maxChunks) && maxChunks >= 1 && maxChunks <= 64, 'DirectSegmentWriter: maxChunks must be 1..64');
    assert(this.maxWriteBytes >= alignment && this.maxWriteBytes % alignment === 0, 'DirectSegmentWriter: maxWriteBytes must be a positive multiple of alignment');
    assert(this.minWriteBytes >= 0 && this.maxBacklogBatches >= 1, 'DirectSegmentWriter: limits must be positive');
    this.staging = new DirectStaging(arena, { alignment, maxChunks, startPosition, path: file.path });
    this.slots = [];
    for (let i = 0; i < this.maxInFlight; i++) this.slots.push(new WriteSlot(this));
    this.iov = [];
    this.slotHead = 0;
    this.inFlight = 0;
    this.partialSlot = null;
    this.batchEnds = [];
    this.batchLastOffsets = [];
    this.batchHead = 0;
    this.backlog = [];
    this.backlogHead = 0;
    this.backlogFrom = 0;
    this.completedEnd = startPosition;
    this.writtenPositionValue = startPosition;
    this.enqueuedPositionValue = startPosition;
    this.failed = false;
    this.failure = undefined;
    this.closed = false;
    this.hydrated = startPosition % alignment === 0;
    this.drainWaiters = [];
    this.roomWaiters = [];
    this.pumpScheduled = false;
    this.onPump = () => this.issueQueued(); // nothing when issueQueued() ran it already
    this.writes = 0;
    this.writeSyncs = 0;
    this.backlogged = 0;
  }

  /**
   * A writer ready to append at `startPosition`: when that is inside a page,
   * the page's bytes below it are read back first (the next write rewrites
   * the whole page). Run on the pool (it reads the file).
   */
  static async open(file: IoFile, startPosition: number, listener: SegmentWriterListener, options: DirectWriterOptions): Promise<DirectSegmentWriter> {
    const writer = new DirectSegmentWriter(file, startPosition, listener, options);
    try {
      await writer.hydrate();
    } catch (error) {
      writer.releaseAll();
      throw error;
    }
    return writer;
  }

  /** Reads the partial tail page into staging (needed once when startPosition is not page-aligned). */
  async hydrate(): Promise<void> {
    if (this.hydrated) return;
    const head = this.staging.head();
    const alignment = this.staging.alignment;
    const pageStart = head.fileBase;
    const want = head.stagedEnd - pageStart;
    const count = await this.file.pread(head.chunk.buffer.subarray(0, alignment), pageStart, alignment);
    if (count < want) {
      throw new SeglogError('SEGLOG_ERR_LOG_CORRUPTION', `segment ${this.file.path} is shorter than its logical size ${head.stagedEnd}`, {
        kafka: 'KAFKA_STORAGE_ERROR',
        context: { path: this.file.path, position: pageStart, read: count, expected: want },
      });
    }
    this.hydrated = true;
  }

  get writtenPosition(): number {
    return this.writtenPositionValue;
  }

  get enqueuedPosition(): number {
    return this.enqueuedPositionValue;
  }

  /** Writes in flight now. */
  get writesInFlight(): number {
    return this.inFlight;
  }

  /** Arena chunks held now. */
  get chunksInUse(): number {
    return this.staging.chunksHeld;
  }

  /** Tail-page copies to fresh memory (metrics). */
  get pageCopies(): number {
    return this.staging.pageCopies;
  }

  /** Bytes accepted but not yet staged (held by reference). */
  get backlogBatches(): number {
    return this.backlog.length - this.backlogHead;
  }

  /**
   * Whether `bytes` more would be staged at once (no backlog, staging memory
   * free now). The Log's caller path needs this; otherwise it goes to the
   * pool and awaits whenRoom(). Conservative: true means it fits.
   */
  hasRoom(bytes: number): boolean {
    if (this.failed || this.closed || this.backlog.length > this.backlogHead) return false;
    return this.staging.fits(bytes);
  }

  /**
   * Accepts a batch at the end. Returns true when it was copied into staging
   * (the caller may reuse the buffer at once), false when some of it waits in
   * the backlog by reference (the caller must not modify it until written,
   * and should await whenRoom() before the next enqueue).
   */
  enqueue(buffer: Buffer, position: number, lastOffset: number): boolean {
    assert(position === this.enqueuedPositionValue, 'SegmentWriter.enqueue: positions must be contiguous');
    assert(buffer.length > 0, 'SegmentWriter.enqueue: empty buffer');
    assert(!this.failed, 'SegmentWriter.enqueue: writer failed');
    assert(!this.closed, 'SegmentWriter.enqueue: writer closed');
    assert(this.hydrated, 'DirectSegmentWriter.enqueue: hydrate() first (startPosition inside a page)');
    this.batchEnds.push(position + buffer.length);
    this.batchLastOffsets.push(lastOffset);
    this.enqueuedPositionValue += buffer.length;
    let staged = false;
    if (this.backlog.length === this.backlogHead) {
      const from = this.staging.stage(buffer, 0);
      staged = from === buffer.length;
      if (!staged) {
        this.backlog.push(buffer);
        this.backlogFrom = from;
      }
    } else {
      assert(this.backlog.length - this.backlogHead < this.maxBacklogBatches, 'DirectSegmentWriter.enqueue: backlog full (await whenRoom())');
      this.backlog.push(buffer);
    }
    if (!staged) {
      this.backlogged++;
      this.pump();
    } else if (!this.pumpScheduled) {
      // Issued after this synchronous step, so a durable() call made right
      // after the append can ride in the same job as the write (wantsSync).
      this.pumpScheduled = true;
      queueMicrotask(this.onPump);
    }
    assert(staged || this.inFlight > 0, 'DirectSegmentWriter: a backlog needs a write in flight to make progress');
    return staged;
  }

  /** Resolves when the backlog is staged (hasRoom may still be false for a large batch). */
  whenRoom(): Promise<void> {
    if (this.failed) return Promise.reject(this.failure);
    if (this.backlog.length === this.backlogHead) return Promise.resolve();
    return new Promise<void>((resolve, reject) => this.roomWaiters.push({ resolve, reject }));
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
    this.pumpScheduled = false; // the microtask then does nothing
    if (!this.closed) this.pump();
  }

  /** Drains and sets the file size to the logical end (drops the zero padding). The writer stays usable. */
  async trim(): Promise<void> {
    await this.drain();
    await this.file.truncate(this.enqueuedPositionValue);
  }

  /**
   * Drains, trims the file to its logical end and returns the staging memory.
   * After a write failure it only returns the memory (chunks still read by an
   * in-flight write go back when it settles). Does not close the file.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      if (!this.failed) await this.trim();
    } finally {
      this.closed = true;
      this.releaseAll();
    }
  }

  // ---- backlog ------------------------------------------------------------

  /** Stages backlog batches while memory allows. */
  private stageBacklog(): void {
    while (this.backlog.length > this.backlogHead) {
      const buffer = this.backlog[this.backlogHead] as Buffer;
      const from = this.staging.stage(buffer, this.backlogFrom);
      if (from < buffer.length) {
        this.backlogFrom = from;
        return;
      }
      this.backlog[this.backlogHead] = undefined;
      this.backlogHead++;
      this.backlogFrom = 0;
    }
    this.backlog.length = 0;
    this.backlogHead = 0;
    const waiters = this.roomWaiters.splice(0);
    for (const waiter of waiters) waiter.resolve();
  }

  // ---- writes -------------------------------------------------------------

  /**
   * Issues writes while slots are free, each as far as openRegionWriteEnd
   * says (a sealed region: everything staged in it). Never beside a partial
   * write, whose page the next write would rewrite.
   */
  private pump(): void {
    const staging = this.staging;
    const regions = staging.regions;
    while (!this.failed && this.inFlight < this.maxInFlight) {
      const region = regions[0] as StagingRegion;
      const start = region.dispatchedEnd;
      if (start === region.stagedEnd) return;
      // The page holding `start` is being written by a partial write: wait for it.
      if (this.partialSlot !== null) return;
      const fileStart = staging.alignDown(start);
      const sealed = regions.length > 1;
      let end = sealed ? region.stagedEnd : openRegionWriteEnd(staging, start, region.stagedEnd, this.inFlight, this.minWriteBytes);
      if (end < 0) return;
      if (end - fileStart > this.maxWriteBytes) end = fileStart + this.maxWriteBytes;
      this.dispatch(region, fileStart, end);
      region.dispatchedEnd = end;
      if (sealed && end === region.stagedEnd) staging.dropRegion(0);
    }
  }

  private dispatch(region: StagingRegion, fileStart: number, end: number): void {
    const chunk = region.chunk;
    const fileEnd = this.staging.alignUp(end);
    const memStart = region.memPos(fileStart);
    const memEnd = region.memPos(fileEnd);
    assert(memEnd <= this.staging.chunkBytes, 'DirectSegmentWriter: a write runs past its chunk');
    assert(!(chunk.writes > 0 && memStart < chunk.frozenEnd), 'DirectSegmentWriter: a write would overlap an in-flight write');
    if (fileEnd !== end) chunk.buffer.fill(0, region.memPos(end), memEnd);
    const slot = this.slots[(this.slotHead + this.inFlight) % this.maxInFlight] as WriteSlot;
    assert(slot.chunk === null, 'DirectSegmentWriter: write slot busy');
    slot.chunk = chunk;
    slot.logicalEnd = end;
    slot.done = false;
    // Only with nothing else in flight: every byte below `end` is then in the file when the sync runs.
    const covered = wholeBatchesEnd(this.batchEnds, this.batchHead, end);
    slot.sync = this.inFlight === 0 && covered > this.batchHead && this.listener.wantsSync(this.batchLastOffsets[covered - 1] as number);
    chunk.writes++;
    chunk.refs++;
    if (memEnd > chunk.frozenEnd) chunk.frozenEnd = memEnd;
    this.inFlight++;
    this.partialSlot = fileEnd === end ? null : slot;
    this.writes++;
    const bytes = chunk.buffer.subarray(memStart, memEnd);
    if (slot.sync) {
      this.writeSyncs++;
      this.iov[0] = bytes;
      this.file.pwritevDatasync(this.iov, fileStart).then(slot.onDone, slot.onFail);
    } else {
      this.file.pwrite(bytes, fileStart).then(slot.onDone, slot.onFail);
    }
  }


  /** A write settled (internal: called by the slot's bound callbacks). */
  settled(slot: WriteSlot, error: unknown, failed: boolean): void {
    const chunk = slot.chunk as StagingChunk;
    slot.chunk = null;
    chunk.writes--;
    if (chunk.writes === 0) chunk.frozenEnd = 0;
    if (this.partialSlot === slot) this.partialSlot = null;
    if (failed) {
      this.staging.unref(chunk);
      this.fail(error);
      return;
    }
    slot.done = true;
    this.staging.unref(chunk);
    if (this.failed) return;
    this.advance(slot.sync ? slot.logicalEnd : -1);
    if (this.closed) return;
    this.stageBacklog();
    this.pump();
  }

  /**
   * Pops the completed prefix of writes and reports the batches it covers;
   * `syncedEnd` ≥ 0: a write that carried the fdatasync made every batch
   * ending at or below it durable.
   */
  private advance(syncedEnd: number): void {
    while (this.inFlight > 0) {
      const oldest = this.slots[this.slotHead] as WriteSlot;
      if (!oldest.done || oldest.chunk !== null) break;
      oldest.done = false;
      this.completedEnd = oldest.logicalEnd;
      this.slotHead = (this.slotHead + 1) % this.maxInFlight;
      this.inFlight--;
    }
    let index = this.batchHead;
    let syncedLastOffset = -1;
    while (index < this.batchEnds.length && (this.batchEnds[index] as number) <= this.completedEnd) {
      if ((this.batchEnds[index] as number) <= syncedEnd) syncedLastOffset = this.batchLastOffsets[index] as number;
      index++;
    }
    if (index === this.batchHead) return;
    this.writtenPositionValue = this.batchEnds[index - 1] as number;
    const lastOffset = this.batchLastOffsets[index - 1] as number;
    this.batchHead = index;
    if (this.batchHead > 1024 && this.batchHead * 2 > this.batchEnds.length) {
      this.batchEnds.splice(0, this.batchHead);
      this.batchLastOffsets.splice(0, this.batchHead);
      this.batchHead = 0;
    }
    this.listener.onWritten(this.writtenPositionValue, lastOffset, syncedLastOffset);
    if (this.writtenPositionValue === this.enqueuedPositionValue) {
      const waiters = this.drainWaiters.splice(0);
      for (const waiter of waiters) waiter.resolve();
    }
  }

  private fail(error: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.failure = error;
    this.listener.onWriteError(error);
    const waiters = this.drainWaiters.splice(0).concat(this.roomWaiters.splice(0));
    for (const waiter of waiters) waiter.reject(error);
  }

  /** Returns every chunk no write reads; the rest go back as their writes settle. */
  private releaseAll(): void {
    this.staging.releaseAll();
    this.backlog.length = 0;
    this.backlogHead = 0;
  }
}
