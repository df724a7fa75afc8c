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
// Work runs in steps of at most STEP_BYTES read, each a task on the
// blocking pool at Priority.cleaner, charged to the throttle.
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
import type { RecordBatch } from '@seglog/records';
import { Segment } from '../segment/segment.js';
import type { AbortedTxn } from '../segment/txn-index.js';
import { AbortedRanges, emptyBatch, filterBatch, mappedKeys } from './batch-filter.js';
import type { FilterContext, FilterOutcome } from './batch-filter.js';
import { BatchScanner } from './batch-scanner.js';
import { cleanableRange } from './cleanable.js';
import type { CleanableRange } from './cleanable.js';
import type { CleanerAccess } from './cleaner-access.js';
import { OffsetMap } from './offset-map.js';
import { swapIn } from './segment-swap.js';
import type { CleanedGroup } from './segment-swap.js';
import { sleepMs } from './throttler.js';
import type { Throttler } from './throttler.js';

// Each step is pool work. Inside a step, batches already in the scanner's window are parsed and
// filtered with only microtask waits, which never let the event loop run: so the step yields a macrotask
// turn (setImmediate) after every SLICE_BYTES of batches, and a caller's request waits behind at most one
// slice of the cleaner's CPU (a batch or two), not a whole window.
const STEP_BYTES = 256 * 1024;
const SLICE_BYTES = 8 * 1024;
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
  const aborted = new AbortedRanges();
  for (const segment of all) for (const txn of segment.txnIndex?.allAbortedTxns() ?? []) aborted.add(txn.producerId, txn.firstOffset, txn.lastOffset);
  const map = new OffsetMap(options.offsetMapBytes);
  const mapEnd = await buildOffsetMap(cleanable, range, map, aborted, options, stats);
  stats.mappedKeys = map.size;
  const lastBatchOfProducer = new Map<number, number>();
  for (const [producerId, entry] of access.producerState.activeProducers()) {
    if (entry.lastDataOffset >= 0) lastBatchOfProducer.set(producerId, entry.lastDataOffset);
  }
  const ctx: FilterContext = {
    map, mapEndOffset: mapEnd, nowMs: options.nowMs, deleteRetentionMs: access.config.deleteRetentionMs,
    lastBatchOfProducer, aborted, txnKept: new Map(), earliestHorizonMs: Number.POSITIVE_INFINITY,
  };
  for (const group of groupSegments(cleanable.filter((segment) => segment.baseOffset < mapEnd), access.config.segmentBytes)) {
    if (options.shouldStop()) {
      stats.outcome = 'stopped';
      return stats;
    }
    const cleaned = await cleanGroup(access, group, ctx, options, stats);
    const outcome = await access.runMutation(() => swapIn(access, cleaned));
    if (outcome === 'stale') {
      stats.outcome = 'stale';
      return stats;
    }
    stats.groups++;
  }
  stats.outcome = 'cleaned';
  stats.firstDirtyOffset = mapEnd;
  stats.earliestHorizonMs = ctx.earliestHorizonMs;
  return stats;
}

/** Maps the dirty section's keys; returns the offset after the last batch mapped (the first uncleanable offset when all fit). */
async function buildOffsetMap(cleanable: readonly Segment[], range: CleanableRange, map: OffsetMap, aborted: AbortedRanges, options: CleanPassOptions, stats: CleanPassStats): Promise<number> {
  const keys: Buffer[] = [];
  const offsets: number[] = [];
  let mapEnd = range.firstDirtyOffset;
  for (let i = 0; i < cleanable.length; i++) {
    const segment = cleanable[i] as Segment;
    const end = cleanable[i + 1]?.baseOffset ?? range.firstUncleanableOffset;
    if (end <= range.firstDirtyOffset) continue;
    const full = await scanSegment(segment, options, stats, (batch) => {
      if (batch.lastOffset < range.firstDirtyOffset) return true;
      mappedKeys(batch, aborted, keys, offsets);
      if (!map.fits(map.costOf(keys))) return false;
      for (let k = 0; k < keys.length; k++) map.put(keys[k] as Buffer, offsets[k] as number);
      mapEnd = batch.lastOffset + 1;
      return true;
    });
    if (full) return mapEnd;
    mapEnd = Math.max(mapEnd, end);
  }
  return Math.max(mapEnd, range.firstUncleanableOffset);
}

/** Calls `onBatch` for every batch of the segment, in pool steps; returns true when `onBatch` said stop. */
async function scanSegment(segment: Segment, options: CleanPassOptions, stats: CleanPassStats, onBatch: (batch: RecordBatch, last: boolean) => boolean, afterStep?: () => Promise<void>): Promise<boolean> {
  if (segment.logFile.isClosed) throw new StaleSegment(stats);
  const file = segment.logFile.retain();
  try {
    const scanner = new BatchScanner(file, segment.size);
    let done = false;
    let stopped = false;
    while (!done && !stopped) {
      const before = scanner.bytesRead;
      await onPool(options.pool, async () => {
        const stepStart = scanner.position;
        let sliceStart = stepStart;
        while (scanner.position - stepStart < STEP_BYTES) {
          if (scanner.position - sliceStart >= SLICE_BYTES) {
            await yieldToEventLoop();
            sliceStart = scanner.position;
          }
          const batch = await scanner.next();
          if (batch === null) {
            done = true;
            return;
          }
          if (!onBatch(batch, scanner.position >= segment.size)) {
            stopped = true;
            return;
          }
        }
      });
      stats.bytesRead += scanner.bytesRead - before;
      await options.throttler.charge(scanner.bytesRead - before);
      if (afterStep !== undefined) await afterStep();
    }
    return stopped;
  } finally {
    await file.release();
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
async function cleanGroup(access: CleanerAccess, group: readonly Segment[], ctx: FilterContext, options: CleanPassOptions, stats: CleanPassStats): Promise<CleanedGroup> {
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
      await scanSegment(segment, options, stats, (batch, lastInSegment) => {
        let outcome: FilterOutcome = filterBatch(batch, ctx);
        if (outcome.kind === 'drop' && lastSegment && lastInSegment) {
          outcome = batch.isControl ? { kind: 'keep', removedRecords: 0 } : { kind: 'rebuilt', bytes: emptyBatch(batch), removedRecords: outcome.removedRecords };
        }
        stats.removedRecords += outcome.removedRecords;
        if (outcome.kind === 'keep') out.add(Buffer.from(batch.bytes()));
        else if (outcome.kind === 'rebuilt') out.add(outcome.bytes);
        return true;
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
  private readonly file: IoFile;
  private pending: Buffer[];
  private pendingBytes: number;
  position: number;

  constructor(file: IoFile) {
    this.file = file;
    this.pending = [];
    this.pendingBytes = 0;
    this.position = 0;
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
