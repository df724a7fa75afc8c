// One cleaning pass over one log (Kafka's Cleaner.doClean):
//   1. the cleanable range (cleanable.ts) from the cleaner checkpoint;
//   2. the offset map over the dirty section, batch by batch, until the map
//      is full or the first uncleanable offset is reached: mapEnd, the next
//      pass's first dirty offset;
//   3. the segments below mapEnd, from the first, in groups whose summed
//      size fits segment.bytes, each rewritten through BatchFilter into
//      `<base>.log.cleaned` (fdatasynced) and swapped in (segment-swap.ts).
// Reads go through retained handles of sealed segments, so appends, reads
// and flushes of the log proceed meanwhile; only the swap is a mutation.
// Each segment is read in windows (WINDOW_BYTES; WORKER_WINDOW_BYTES when the
// worker reads them), charged to the throttle;
// the CPU work on a window (batch walks and CRC checks, key mapping,
// filtering) runs in the pass's compute (cleaner-compute.ts): the cleaner's
// worker thread, or the event loop in slices. Where the compute owns the I/O
// (the worker on files with OS fds, not O_DIRECT: NodeIo), it reads each
// window and writes the kept bytes itself (mapAt, filterAt); otherwise each
// window is a pread, and the kept bytes are written in pwritevs of up to
// WRITE_BUFFER_BYTES, each a task on the blocking pool at Priority.cleaner.
//
// Invariants: offsets never change (batches keep their headers); the active
// segment and everything at or above the HW, the first unstable offset or
// the compaction lag is never rewritten; the last batch of every group stays
// (emptied if nothing of it is kept) so a swap's offset range, which
// recovery derives from its last batch, covers every segment it replaces.
// A failure before a swap's commit point leaves the original segments in
// place and rejects the pass (the caller retries later); the .cleaned file
// is removed.

import { Priority } from '@seglog/io';
import type { BlockingPool, IoFile } from '@seglog/io';
import { logCorruption } from '../internal/log-errors.js';
import { Segment } from '../segment/segment.js';
import type { AbortedTxn } from '../segment/txn-index.js';
import { cleanableRange } from './cleanable.js';
import type { CleanableRange } from './cleanable.js';
import type { CleanerAccess } from './cleaner-access.js';
import { beginCompute } from './cleaner-compute.js';
import type { ComputeMode, PassCompute, WindowRead } from './cleaner-compute.js';
import type { WalkResult } from './window-cleaner.js';
import { swapIn } from './segment-swap.js';
import type { CleanedGroup } from './segment-swap.js';
import { sleepMs } from './throttler.js';
import type { Throttler } from './throttler.js';

// One pread per window. Inline, the window is walked in slices with a macrotask turn (setImmediate) between
// them (cleaner-compute.ts SLICE_BYTES), so a caller's request waits behind at most one slice of the
// cleaner's CPU (a batch or two), not a whole window; in the worker, one message per window.
const WINDOW_BYTES = 256 * 1024;
// A window the worker reads itself (mapAt, filterAt): the event loop handles one message per window and
// no bytes, so larger windows mean fewer messages (caller-append p99 while cleaning, five alternating
// pairs: median 1.23x idle with 1 MiB against 1.44x with 256 KiB; bench/compaction.bench.ts).
const WORKER_WINDOW_BYTES = 1024 * 1024;
const SIZE_FIELD_END = 12;
const WRITE_BUFFER_BYTES = 1024 * 1024;
const INT32_MAX = 0x7fffffff;

export interface CleanPassOptions {
  /** The cleaner checkpoint of this log (undefined: none). */
  readonly checkpointedOffset: number | undefined;
  readonly offsetMapBytes: number;
  readonly nowMs: number;
  readonly throttler: Throttler;
  /** Steps run as tasks of this pool at Priority.cleaner; null: inline. */
  readonly pool: BlockingPool | null;
  /** Checked between steps: true stops the pass before its next swap. */
  readonly shouldStop: () => boolean;
  /** Run even with nothing dirty: a delete horizon has passed (or a caller forces the pass). */
  readonly horizonDue: boolean;
  /** Where the CPU work runs (cleaner-compute.ts). Default 'inline'. */
  readonly compute?: ComputeMode;
}

export interface CleanPassStats {
  outcome: 'cleaned' | 'nothing' | 'stale' | 'stopped';
  /** The next pass's first dirty offset (the checkpoint to write). */
  firstDirtyOffset: number;
  range: CleanableRange;
  bytesRead: number;
  bytesWritten: number;
  /** Bytes of the groups before cleaning minus after. */
  bytesSaved: number;
  removedRecords: number;
  groups: number;
  mappedKeys: number;
  /** The earliest delete horizon left in the cleaned segments (Infinity: none): a pass is due then. */
  earliestHorizonMs: number;
}

/** A segment of the pass was closed meanwhile (truncation, deletion, close): the pass ends 'stale'. */
class StaleSegment extends Error {
  readonly stats: CleanPassStats;

  constructor(stats: CleanPassStats) {
    super('a segment of the pass was closed');
    this.stats = stats;
  }
}

/** One macrotask turn: lets I/O callbacks and queued requests run before the cleaner continues. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Runs `step` as a low-priority pool task (waiting for room), or inline without a pool. */
async function onPool<T>(pool: BlockingPool | null, step: () => Promise<T>): Promise<T> {
  if (pool === null) return step();
  while (!pool.hasRoom(Priority.cleaner)) {
    if (pool.closed) return step();
    await sleepMs(1);
  }
  return pool.submit(step, Priority.cleaner);
}

export async function cleanLog(access: CleanerAccess, options: CleanPassOptions): Promise<CleanPassStats> {
  try {
    return await cleanOnce(access, options);
  } catch (error) {
    if (!(error instanceof StaleSegment)) throw error;
    return { ...error.stats, outcome: 'stale' };
  }
}

async function cleanOnce(access: CleanerAccess, options: CleanPassOptions): Promise<CleanPassStats> {
  // The lag checks read sealed segments' max timestamps, unknown after a clean open until read.
  for (const segment of access.segments.all().slice(0, -1)) await segment.ensureState();
  const range = cleanableRange(access, options.checkpointedOffset, options.nowMs);
  const stats: CleanPassStats = {
    outcome: 'nothing', firstDirtyOffset: range.firstDirtyOffset, range, bytesRead: 0, bytesWritten: 0, bytesSaved: 0,
    removedRecords: 0, groups: 0, mappedKeys: 0, earliestHorizonMs: Number.POSITIVE_INFINITY,
  };
  if (range.dirtyBytes === 0 && !options.horizonDue) return stats;
  const all = access.segments.all();
  const cleanable = all.filter((segment, i) => i < all.length - 1 && segment.baseOffset < range.firstUncleanableOffset);
  const aborted: Array<[number, number, number]> = [];
  for (const segment of all) for (const txn of segment.txnIndex?.allAbortedTxns() ?? []) aborted.push([txn.producerId, txn.firstOffset, txn.lastOffset]);
  const lastBatchOfProducer: Array<[number, number]> = [];
  for (const [producerId, entry] of access.producerState.activeProducers()) {
    if (entry.lastDataOffset >= 0) lastBatchOfProducer.push([producerId, entry.lastDataOffset]);
  }
  const compute = await beginCompute(options.compute ?? 'inline', {
    offsetMapBytes: options.offsetMapBytes, firstDirtyOffset: range.firstDirtyOffset, nowMs: options.nowMs,
    deleteRetentionMs: access.config.deleteRetentionMs, aborted, lastBatchOfProducer,
  });
  try {
    const mapEnd = await buildOffsetMap(cleanable, range, compute, options, stats);
    stats.mappedKeys = await compute.startFilter(mapEnd);
    for (const group of groupSegments(cleanable.filter((segment) => segment.baseOffset < mapEnd), access.config.segmentBytes)) {
      if (options.shouldStop()) {
        stats.outcome = 'stopped';
        return stats;
      }
      const cleaned = await cleanGroup(access, group, compute, options, stats);
      const outcome = await access.runMutation(() => swapIn(access, cleaned));
      if (outcome === 'stale') {
        stats.outcome = 'stale';
        return stats;
      }
      stats.groups++;
    }
    stats.outcome = 'cleaned';
    stats.firstDirtyOffset = mapEnd;
    stats.earliestHorizonMs = await compute.earliestHorizonMs();
    return stats;
  } finally {
    compute.end();
  }
}

/** Maps the dirty section's keys; returns the offset after the last batch mapped (the first uncleanable offset when all fit). */
async function buildOffsetMap(cleanable: readonly Segment[], range: CleanableRange, compute: PassCompute, options: CleanPassOptions, stats: CleanPassStats): Promise<number> {
  let mapEnd = range.firstDirtyOffset;
  for (let i = 0; i < cleanable.length; i++) {
    const segment = cleanable[i] as Segment;
    const end = cleanable[i + 1]?.baseOffset ?? range.firstUncleanableOffset;
    if (end <= range.firstDirtyOffset) continue;
    const full = await scanSegment(segment, options, stats, {
      inMemory: async (window, from, to, span) => {
        const r = await compute.mapWindow(window, from, to, span);
        mapEnd = Math.max(mapEnd, r.mapEnd);
        return r;
      },
      atFile: compute.ownsIo(segment.logFile.file) ? async (read) => {
        const r = await compute.mapAt(read);
        mapEnd = Math.max(mapEnd, r.mapEnd);
        return r;
      } : null,
    });
    if (full) return mapEnd;
    mapEnd = Math.max(mapEnd, end);
  }
  return Math.max(mapEnd, range.firstUncleanableOffset);
}

interface StepResult {
  readonly consumed: number;
  readonly stopped: boolean;
  readonly needBytes: number;
  readonly corrupt: { readonly position: number; readonly reason: string; readonly cause: string | null } | null;
  /** The window to use from now on (the compute may have moved the one it was given). */
  readonly window: Buffer;
}

type Step = (window: Buffer, from: number, to: number, span: { position: number; limit: number }) => Promise<StepResult>;

/** A step of a compute that reads the window itself (from its byte 0): what it consumed and how many bytes it read. */
type FileStep = (read: WindowRead) => Promise<WalkResult & { readonly read: number }>;

interface Stepper {
  /** A window the pass read, walked from `from`. */
  readonly inMemory: Step;
  /** The compute reads the window itself (PassCompute.ownsIo); null: it cannot for this segment. */
  readonly atFile: FileStep | null;
}

/**
 * Walks every batch of the segment through `step`, a window of WINDOW_BYTES
 * (grown for a larger batch) read at a time on the pool; the step consumes
 * whole batches. Returns true when a step said stop. Every byte of the
 * segment up to its size must be there and frame as batches (a short file
 * or damage is SEGLOG_ERR_LOG_CORRUPTION, and the pass stops changing nothing).
 */
async function scanSegment(segment: Segment, options: CleanPassOptions, stats: CleanPassStats, stepper: Stepper, afterStep?: () => Promise<void>): Promise<boolean> {
  if (segment.logFile.isClosed) throw new StaleSegment(stats);
  const ref = segment.logFile.retain();
  const limit = segment.size;
  const corrupt = (position: number, reason: string, cause?: unknown): Error => logCorruption(ref.path, `cleaner: ${reason}`, { position, limit }, cause);
  const step = stepper.inMemory;
  try {
    if (stepper.atFile !== null) {
      // The retained reference keeps the fd open (and its number unused by another file) until every step returned.
      let windowBytes = Math.max(Math.min(WORKER_WINDOW_BYTES, limit), SIZE_FIELD_END);
      let position = 0;
      while (position < limit) {
        const want = Math.min(windowBytes, limit - position);
        const r = await stepper.atFile({ fd: ref.file.fd, path: ref.path, position, length: want, windowBytes, limit });
        stats.bytesRead += r.read;
        if (r.read < want) throw corrupt(position, 'file shorter than the segment size');
        await options.throttler.charge(r.read);
        if (r.corrupt !== null) throw corrupt(r.corrupt.position, r.corrupt.reason, r.corrupt.cause === null ? undefined : new Error(r.corrupt.cause));
        if (r.stopped) return true;
        if (r.consumed === 0 && r.needBytes <= want) throw corrupt(position, `no batch framed in a window of ${want} bytes`);
        position += r.consumed;
        windowBytes = Math.max(windowBytes, r.needBytes);
        if (afterStep !== undefined) await afterStep();
      }
      return false;
    }
    // Its own ArrayBuffer (never a slice of Node's shared pool), so the worker's compute can move it.
    let window: Buffer = Buffer.allocUnsafeSlow(Math.max(Math.min(WINDOW_BYTES, limit), SIZE_FIELD_END));
    let position = 0;
    while (position < limit) {
      const want = Math.min(window.length, limit - position);
      const buffer = window;
      const read = await onPool(options.pool, () => ref.file.pread(buffer, position, want));
      stats.bytesRead += read;
      if (read < want) throw corrupt(position, 'file shorter than the segment size');
      await options.throttler.charge(read);
      let from = 0;
      let needBytes = 0;
      while (position + from < limit && from < read) {
        const r = await step(window, from, read, { position, limit });
        window = r.window;
        if (r.corrupt !== null) throw corrupt(r.corrupt.position, r.corrupt.reason, r.corrupt.cause === null ? undefined : new Error(r.corrupt.cause));
        from += r.consumed;
        if (r.stopped) return true;
        if (r.needBytes > 0) {
          needBytes = r.needBytes;
          break;
        }
        if (position + from < limit && from < read) await yieldToEventLoop();
      }
      position += from;
      if (needBytes > window.length) window = Buffer.allocUnsafeSlow(needBytes);
      if (afterStep !== undefined) await afterStep();
    }
    return false;
  } finally {
    await ref.release();
  }
}

/** Consecutive segments whose summed size fits segment.bytes and whose offsets fit one segment; no group ends with an empty segment. */
function groupSegments(segments: readonly Segment[], segmentBytes: number): Segment[][] {
  const groups: Segment[][] = [];
  let current: Segment[] = [];
  let bytes = 0;
  for (const segment of segments) {
    const first = current[0];
    const fits = first !== undefined && bytes + segment.size <= segmentBytes && segment.nextOffset - 1 - first.baseOffset <= INT32_MAX;
    if (!fits && current.length > 0) {
      groups.push(current);
      current = [];
      bytes = 0;
    }
    current.push(segment);
    bytes += segment.size;
  }
  if (current.length > 0) groups.push(current);
  const out: Segment[][] = [];
  for (const group of groups) {
    while (group.length > 0 && (group[group.length - 1] as Segment).isEmpty) group.pop();
    if (group.length > 0) out.push(group);
  }
  return out;
}

/** Writes the group's kept batches to `<base>.log.cleaned` and fdatasyncs it. */
async function cleanGroup(access: CleanerAccess, group: readonly Segment[], compute: PassCompute, options: CleanPassOptions, stats: CleanPassStats): Promise<CleanedGroup> {
  const base = (group[0] as Segment).baseOffset;
  const path = Segment.path(access.dir, base, 'log', 'cleaned');
  if (await access.io.exists(path)) await access.io.unlink(path);
  const out = new CleanedWriter(await access.io.open(path, { create: true, exclusive: true }));
  const sizes: number[] = [];
  const abortedTxns: AbortedTxn[] = [];
  let before = 0;
  try {
    for (let g = 0; g < group.length; g++) {
      const segment = group[g] as Segment;
      sizes.push(segment.size);
      before += segment.size;
      for (const txn of segment.txnIndex?.allAbortedTxns() ?? []) abortedTxns.push(txn);
      const lastSegment = g === group.length - 1;
      const atFile = compute.ownsIo(segment.logFile.file) && compute.ownsIo(out.file);
      await scanSegment(segment, options, stats, {
        inMemory: async (window, from, to, span) => {
          const r = await compute.filterWindow(window, from, to, span, lastSegment);
          stats.removedRecords += r.removedRecords;
          for (const bytes of r.output) out.add(bytes);
          return r;
        },
        atFile: atFile ? async (read) => {
          await out.maybeWrite(options, true); // bytes kept in memory so far go first
          const r = await compute.filterAt(read, lastSegment, { fd: out.file.fd, position: out.position, path });
          stats.removedRecords += r.removedRecords;
          out.advance(r.written);
          await options.throttler.charge(r.written);
          return r;
        } : null,
      }, () => out.maybeWrite(options));
    }
    await out.finish();
  } catch (error) {
    await out.abort();
    await access.io.unlink(path).catch(() => undefined);
    throw error;
  }
  stats.bytesWritten += out.position;
  stats.bytesSaved += before - out.position;
  return { segments: group, sizes, base, abortedTxns };
}

/** Sequential writes of a .cleaned file, coalesced up to WRITE_BUFFER_BYTES. */
class CleanedWriter {
  readonly file: IoFile;
  private pending: Buffer[];
  private pendingBytes: number;
  position: number;

  constructor(file: IoFile) {
    this.file = file;
    this.pending = [];
    this.pendingBytes = 0;
    this.position = 0;
  }

  /** `bytes` were written at position by someone else (the compute's filterAt), with nothing pending here. */
  advance(bytes: number): void {
    if (this.pendingBytes !== 0) throw new Error('CleanedWriter.advance with bytes pending');
    this.position += bytes;
  }

  add(bytes: Buffer): void {
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
  }

  async maybeWrite(options: CleanPassOptions, force = false): Promise<void> {
    if (this.pendingBytes === 0 || (!force && this.pendingBytes < WRITE_BUFFER_BYTES)) return;
    const buffers = this.pending;
    const bytes = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    await onPool(options.pool, () => this.file.pwritev(buffers, this.position));
    this.position += bytes;
    await options.throttler.charge(bytes);
  }

  async finish(): Promise<void> {
    if (this.pendingBytes > 0) {
      const buffers = this.pending;
      this.pending = [];
      await this.file.pwritev(buffers, this.position);
      this.position += this.pendingBytes;
      this.pendingBytes = 0;
    }
    await this.file.fdatasync();
    await this.file.close();
  }

  async abort(): Promise<void> {
    await this.file.close().catch(() => undefined);
  }
}
