// PlanBatchReader: iterates the record batches of a FetchPlan without
// toBuffer() (which allocates the plan's whole size per call, up to maxBytes).
//
// - inline parts (tail-cache slices) are parsed where they are: a batch that
//   lies inside one part is handed out as a view of it, never copied;
// - file parts are read with pread into two reused windows of `windowBytes`,
//   double-buffered: the next window's read is in flight while the batches of
//   the current one are handed out (sequential read-ahead, one read ahead);
// - scan() lends the windows to the reads themselves (ReadOptions.into): the
//   read that finds a range's end reads its bytes into one window once, and
//   the plan carries them (a file part's `bytes`), so nothing is read twice;
//   the next plan's read (into the other window) is in flight while the
//   current plan's batches are handed out (after one turn of the event loop
//   that lets that read reach its pread);
// - a batch that straddles two parts or two windows is assembled in a reused
//   carry buffer (grown to the largest batch met, so memory is bounded by
//   2 × windowBytes + the largest batch).
//
// The view handed to `onBatch` (one RecordBatch, re-pointed per batch) and
// the bytes under it are valid only during the call: windows and the carry
// are reused. A plan's bytes must be whole batches (what Log.read returns);
// anything else is SEGLOG_ERR_LOG_READ_SHORT (a file part no longer fully
// there, e.g. a racing truncation) or a RecordsError from the batch framing.

import { assert, SeglogError } from '@seglog/common';
import { BatchWindowIndex, LOG_OVERHEAD, RecordBatch } from '@seglog/records';
import type { FetchPlan, SegmentFileRef } from './fetch-plan.js';

export interface PlanBatchReaderOptions {
  /** Bytes per pread window of a file part (two are kept). Default 1 MiB. */
  readonly windowBytes?: number;
  /**
   * Check every batch's CRC before handing it out; a mismatch throws the
   * RecordsError CRC_MISMATCH (as validateBatch does). Default false.
   */
  readonly verifyCrc?: boolean;
  /**
   * Decode the records of each window's plain batches (uncompressed, no
   * headers) natively, in one call per window, so that a RecordCursor opened
   * on a handed-out batch steps through them instead of decoding them. Worth
   * it when every record is read; without the native addon it does nothing.
   * Default false.
   */
  readonly indexRecords?: boolean;
}

const DEFAULT_WINDOW_BYTES = 1024 * 1024;
/** Smallest window scan() indexes on the threadpool (below it the hop costs more than the walk). */
const ASYNC_INDEX_MIN_BYTES = 64 * 1024;

/**
 * A promise awaited only later (a read ahead, an index job), marked handled
 * now: if it rejects while the current plan's batches are handed out, that is
 * not an unhandled rejection (which would end a process run with Node's
 * default --unhandled-rejections=throw). Awaiting it still throws.
 */
function ahead<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/** A plan of scanIndexed(): the window it was read into, the index its window goes to, the index job. */
interface IndexedStage {
  readonly plan: FetchPlan;
  readonly window: Buffer;
  readonly index: BatchWindowIndex;
  readonly indexing: Promise<number> | null;
}

/** The bytes of a plan that scanIndexed() indexes on the threadpool: one file part read into a lent window, 64 KiB or more. */
function indexedWindow(plan: FetchPlan): Buffer | null {
  if (plan.parts.length !== 1) return null;
  const part = plan.parts[0]!;
  return part.kind === 'file' && part.bytes !== undefined && part.bytes.length >= ASYNC_INDEX_MIN_BYTES ? part.bytes : null;
}
/** batchLength lies in bytes [8, 12) of a batch. */
const BATCH_LENGTH_OFFSET = 8;

/** What scan() reads from: Log.read's signature. */
export interface PlanSource {
  /** `options.into`: see ReadOptions.into (a file part's `bytes` must be a view of it). */
  read(offset: number, maxBytes: number, options?: { readonly into?: Buffer }): Promise<FetchPlan>;
}

export class PlanBatchReader {
  private readonly windowBytes: number;
  private windowA: Buffer;
  private windowB: Buffer;
  /** A batch being assembled across parts or windows: carry[0, carryLength). */
  private carry: Buffer;
  private carryLength: number;
  /** Size of the batch in the carry, -1 until its 12-byte prefix is in. */
  private carryNeed: number;
  private view: RecordBatch | null;
  private busy: boolean;
  private readonly verifyCrc: boolean;
  private readonly indexRecords: boolean;
  /** Non-null when verifyCrc or indexRecords: the window being handed out, checked and decoded in one native call. */
  private readonly windowIndex: BatchWindowIndex | null;
  /** scanIndexed()'s second index and third window, made on its first use. */
  private windowIndexB: BatchWindowIndex | null = null;
  private windowC: Buffer | null = null;
  /** The index push() and emit() use: windowIndex, or scanIndexed()'s index of the plan being handed out. */
  private active: BatchWindowIndex | null;
  /** The bytes scanIndexed() had walked by a job for the plan being handed out; push() walks anything else itself. */
  private prepared: Buffer | null = null;

  constructor(options: PlanBatchReaderOptions = {}) {
    const windowBytes = options.windowBytes ?? DEFAULT_WINDOW_BYTES;
    assert(Number.isSafeInteger(windowBytes) && windowBytes >= LOG_OVERHEAD, 'PlanBatchReader: windowBytes must be an integer >= 12');
    this.windowBytes = windowBytes;
    this.windowA = Buffer.allocUnsafeSlow(windowBytes);
    this.windowB = Buffer.allocUnsafeSlow(windowBytes);
    this.carry = Buffer.allocUnsafeSlow(64 * 1024);
    this.carryLength = 0;
    this.carryNeed = -1;
    this.view = null;
    this.busy = false;
    this.verifyCrc = options.verifyCrc ?? false;
    this.indexRecords = options.indexRecords ?? false;
    this.windowIndex = this.verifyCrc || this.indexRecords ? this.newIndex() : null;
    this.active = this.windowIndex;
  }

  /**
   * Calls `onBatch` for every batch of `plan`, in order; resolves with the
   * number of batches. The plan stays the caller's (release it after).
   */
  async read(plan: FetchPlan, onBatch: (batch: RecordBatch) => void): Promise<number> {
    assert(!this.busy, 'PlanBatchReader.read: one read or scan at a time');
    this.busy = true;
    try {
      return await this.readPlan(plan, onBatch, null);
    } finally {
      this.busy = false;
    }
  }

  /**
   * read(); `lent` is the window scan() lent to the read that made `plan`:
   * a file part's `bytes` must lie in it, and a file part without them is
   * read through it alone (the other window is lent to the next read).
   */
  private async readPlan(plan: FetchPlan, onBatch: (batch: RecordBatch) => void, lent: Buffer | null): Promise<number> {
    assert(!plan.isReleased, 'PlanBatchReader.read: plan already released');
    assert(this.busy, 'PlanBatchReader.readPlan: inside read() or scan()');
    this.carryLength = 0;
    this.carryNeed = -1;
    let batches = 0;
    try {
      for (const part of plan.parts) {
        if (part.kind === 'inline') batches += this.push(part.buffer, 0, part.buffer.length, onBatch);
        else if (part.bytes !== undefined) {
          assert(lent === null || part.bytes.buffer === lent.buffer, 'PlanBatchReader.scan: carried bytes outside the lent window');
          assert(lent === null || plan.parts.length === 1, 'PlanBatchReader.scan: carried bytes in a plan of several parts');
          batches += this.push(part.bytes, 0, part.bytes.length, onBatch);
        } else if (lent === null) batches += await this.readFilePart(part.file, part.position, part.length, onBatch, this.windowA, this.windowB);
        else batches += await this.readFilePart(part.file, part.position, part.length, onBatch, lent, null);
      }
      if (this.carryLength !== 0) {
        throw new SeglogError('SEGLOG_ERR_LOG_READ_SHORT', `the plan ends inside a batch (${this.carryLength} bytes of it)`, {
          kafka: 'KAFKA_STORAGE_ERROR', context: { carried: this.carryLength, need: this.carryNeed },
        });
      }
    } finally {
      this.carryLength = 0;
      this.carryNeed = -1;
      this.active?.clear();
      this.prepared = null;
    }
    return batches;
  }

  /**
   * Sequential read of [fromOffset, toOffset) through `source.read` (a Log):
   * the next read() is issued as soon as a plan is in hand (its nextOffset
   * is known), so planning it overlaps handing out the current batches.
   * Each plan is released after its batches. Resolves with the offset after
   * the last batch read (>= toOffset, or where the log had no more).
   */
  async scan(source: PlanSource, range: { readonly fromOffset: number; readonly toOffset: number; readonly maxBytes: number },
    onBatch: (batch: RecordBatch) => void): Promise<number> {
    assert(Number.isSafeInteger(range.maxBytes) && range.maxBytes > 0, 'PlanBatchReader.scan: maxBytes must be a positive integer');
    assert(!this.busy, 'PlanBatchReader.scan: one read or scan at a time');
    if (range.fromOffset >= range.toOffset) return range.fromOffset;
    this.busy = true; // until no read into a lent window is in flight
    try {
      if (this.windowIndex !== null && BatchWindowIndex.available && range.maxBytes <= this.windowBytes) {
        return await this.scanIndexed(source, range, onBatch);
      }
      return await this.scanPlans(source, range, onBatch);
    } finally {
      this.busy = false;
    }
  }

  private async scanPlans(source: PlanSource, range: { readonly fromOffset: number; readonly toOffset: number; readonly maxBytes: number },
    onBatch: (batch: RecordBatch) => void): Promise<number> {
    let offset = range.fromOffset;
    // Windows are lent to the reads when a whole range fits one; plan i's read gets window i mod 2, so the
    // read in flight never writes the window whose bytes are being handed out. Larger ranges are read by read().
    const lend = range.maxBytes <= this.windowBytes;
    let lent = this.windowA;
    let spare = this.windowB;
    let next: Promise<FetchPlan> | null = ahead(lend ? source.read(offset, range.maxBytes, { into: lent }) : source.read(offset, range.maxBytes));
    while (next !== null) {
      const plan: FetchPlan = await next;
      next = null;
      if (plan.isEmpty) {
        await plan.release();
        break;
      }
      offset = plan.nextOffset;
      if (offset < range.toOffset) next = ahead(lend ? source.read(offset, range.maxBytes, { into: spare }) : source.read(offset, range.maxBytes));
      // A read that goes to the file issues its pread only after a few of its own awaits (the pool queue,
      // the segment's lookups), and the batches below are handed out synchronously: without a turn of the
      // event loop here the next pread would start only after them, and the read-ahead would overlap
      // nothing. Measured (bench/hotpath-read-profile.ts, 1 M records, warm): 0.38-0.44x plain fs without,
      // 0.48-0.50x with. A plan from the tail cache (inline parts) needs no pread: no turn.
      if (next !== null && plan.parts.some((part) => part.kind === 'file')) await new Promise<void>((resolve) => setImmediate(resolve));
      try {
        await this.readPlan(plan, onBatch, lend ? lent : null);
        const used = lent;
        lent = spare;
        spare = used;
      } catch (error) {
        if (next !== null) await next.then((p) => p.release(), () => undefined);
        throw error;
      } finally {
        await plan.release();
      }
    }
    return offset;
  }

  /**
   * scan() when the windows are CRC-checked or indexed (verifyCrc,
   * indexRecords) with the addon: a three-stage pipeline over three lent
   * windows and two window indexes. While plan k's batches are handed out on
   * the event loop, plan k+1's window is checked and indexed on the
   * threadpool (BatchWindowIndex.indexAsync) and plan k+2 is being read.
   * Measured (bench/hotpath-read-profile.ts, 1 M records of 100 B, warm,
   * reads of 1 MiB, ratio to plain fs): the JavaScript CRC and decode 0.48x;
   * the window indexed on the event loop in push() 0.49-0.61x; this pipeline
   * 0.71-0.75x, and 0.86-0.94x with reads of 4 MiB (each read costs two
   * threadpool hops and its planning, ~130 us of CPU on the 2-vCPU VM).
   */
  private async scanIndexed(source: PlanSource, range: { readonly fromOffset: number; readonly toOffset: number; readonly maxBytes: number },
    onBatch: (batch: RecordBatch) => void): Promise<number> {
    const windows = [this.windowA, this.windowB, this.thirdWindow()];
    const indexes = [this.windowIndex!, this.secondIndex()];
    let offset = range.fromOffset;
    let readWindow = windows[0]!;
    let reads = 1;
    let reading: Promise<FetchPlan> | null = ahead(source.read(offset, range.maxBytes, { into: readWindow }));
    let current: IndexedStage | null = null;
    let staged: IndexedStage | null = null;
    try {
      for (;;) {
        // Plan k+1 (read while plan k was handed out) starts its index job; plan k+2's read is issued.
        if (reading !== null) {
          const plan = await reading;
          reading = null;
          if (plan.isEmpty) await plan.release();
          else {
            offset = plan.nextOffset;
            const index = indexes[reads & 1]!;
            const bytes = indexedWindow(plan);
            staged = { plan, window: readWindow, index, indexing: bytes === null ? null : ahead(index.indexAsync(bytes, 0, bytes.length)) };
            if (offset < range.toOffset) {
              readWindow = windows[reads % 3]!;
              reads++;
              reading = ahead(source.read(offset, range.maxBytes, { into: readWindow }));
            }
          }
        }
        if (current !== null) {
          const stage: IndexedStage = current;
          current = null;
          try {
            await stage.indexing;
            this.active = stage.index;
            if (stage.indexing !== null) this.prepared = indexedWindow(stage.plan);
            await this.readPlan(stage.plan, onBatch, stage.window);
          } finally {
            this.active = this.windowIndex;
            await stage.plan.release();
          }
        }
        if (staged === null) break;
        current = staged;
        staged = null;
      }
    } finally {
      // Nothing of ours in flight when scan() returns or throws: the read, the index job, their plans.
      if (reading !== null) await reading.then((p) => p.release(), () => undefined);
      for (const stage of [current, staged]) {
        if (stage === null) continue;
        await stage.indexing?.catch(() => undefined);
        await stage.plan.release();
      }
    }
    return offset;
  }

  private thirdWindow(): Buffer {
    return this.windowC ??= Buffer.allocUnsafeSlow(this.windowBytes);
  }

  private secondIndex(): BatchWindowIndex {
    return this.windowIndexB ??= this.newIndex();
  }

  /** Tables for a window of records of 64 B or more on average (half the window's size); smaller ones take the JavaScript paths. */
  private newIndex(): BatchWindowIndex {
    return new BatchWindowIndex({ maxRecords: Math.ceil(this.windowBytes / 64), maxBatches: Math.ceil(this.windowBytes / 128) });
  }

  /**
   * pread windows of one file part, the next one in flight while the current
   * one is parsed; with one window (`second` null), read and parse in turn.
   */
  private async readFilePart(ref: SegmentFileRef, position: number, length: number, onBatch: (batch: RecordBatch) => void,
    first: Buffer, second: Buffer | null): Promise<number> {
    let batches = 0;
    let at = position;
    const end = position + length;
    let current = first;
    let spare = second;
    let n = Math.min(this.windowBytes, end - at);
    let pending: Promise<number> | null = ref.file.pread(current.subarray(0, n), at, n);
    while (pending !== null) {
      const got = await pending;
      if (got !== n) {
        throw new SeglogError('SEGLOG_ERR_LOG_READ_SHORT', `read of ${ref.path} returned ${got} of ${n} bytes`, {
          kafka: 'KAFKA_STORAGE_ERROR', context: { path: ref.path, position: at, length: n, read: got },
        });
      }
      const filled = current;
      const filledBytes = n;
      at += n;
      pending = null;
      if (at < end && spare !== null) {
        n = Math.min(this.windowBytes, end - at);
        pending = ref.file.pread(spare.subarray(0, n), at, n);
      }
      // Parsed while the next window is read; push copies what it keeps (the carry) before `filled` is reused.
      try {
        batches += this.push(filled, 0, filledBytes, onBatch);
      } catch (error) {
        if (pending !== null) await pending.catch(() => 0); // never leave a read into our window in flight
        throw error;
      }
      if (spare === null) {
        if (at < end) {
          n = Math.min(this.windowBytes, end - at);
          pending = ref.file.pread(current.subarray(0, n), at, n);
        }
      } else {
        current = spare;
        spare = filled;
      }
    }
    return batches;
  }

  /** Hands out the whole batches of bytes[from, to) (after completing the carried one); keeps a partial tail in the carry. */
  private push(bytes: Buffer, from: number, to: number, onBatch: (batch: RecordBatch) => void): number {
    let p = from;
    let batches = 0;
    if (this.carryLength > 0) {
      p = this.fillCarry(bytes, p, to);
      if (this.carryNeed < 0 || this.carryLength < this.carryNeed) return 0;
      this.active?.clear(); // the carried batch takes the JavaScript paths
      this.emit(this.carry, 0, onBatch);
      batches++;
      this.carryLength = 0;
      this.carryNeed = -1;
    }
    const index = this.active;
    if (index !== null && to - p >= LOG_OVERHEAD) {
      // Walk these bytes, unless scanIndexed() had this very plan's window walked by a job (once: windows are refilled).
      if (this.prepared !== bytes || !index.covers(bytes, p, to)) index.index(bytes, p, to);
      this.prepared = null;
    }
    while (to - p >= LOG_OVERHEAD) {
      const size = bytes.readInt32BE(p + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
      if (size > to - p) break;
      this.emit(bytes, p, onBatch); // the view's framing checks reject a size below the v2 header
      batches++;
      p += size;
    }
    if (p < to) this.fillCarry(bytes, p, to);
    return batches;
  }

  /** Copies from bytes[p, to) into the carry up to the carried batch's size; returns the new p. */
  private fillCarry(bytes: Buffer, p: number, to: number): number {
    if (this.carryNeed < 0) {
      const take = Math.min(LOG_OVERHEAD - this.carryLength, to - p);
      this.ensureCarry(this.carryLength + take);
      bytes.copy(this.carry, this.carryLength, p, p + take);
      this.carryLength += take;
      p += take;
      if (this.carryLength < LOG_OVERHEAD) return p;
      const size = this.carry.readInt32BE(BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
      // A size below the header is left to the view's framing check (it throws CORRUPT).
      this.carryNeed = Math.max(size, LOG_OVERHEAD);
    }
    const take = Math.min(this.carryNeed - this.carryLength, to - p);
    this.ensureCarry(this.carryLength + take);
    bytes.copy(this.carry, this.carryLength, p, p + take);
    this.carryLength += take;
    return p + take;
  }

  private ensureCarry(bytes: number): void {
    if (bytes <= this.carry.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(bytes, this.carry.length * 2));
    this.carry.copy(grown, 0, 0, this.carryLength);
    this.carry = grown;
  }

  private emit(bytes: Buffer, start: number, onBatch: (batch: RecordBatch) => void): void {
    const view = this.view === null ? (this.view = new RecordBatch(bytes, start)) : this.view.reset(bytes, start);
    this.active?.apply(view, this.verifyCrc, this.indexRecords);
    onBatch(view);
  }
}
