// Which segments' offset and time indexes are in memory (issue 24).
//
// Segment.open opens both indexes lazily (their files are not read); every
// operation that looks at entries runs inside withIndexes(), which loads
// them first (one pread each, on the pool) and holds them in memory until
// it returns, so lookups stay synchronous. Loaded indexes of segments that
// are not pinned (sealed) are kept in one LRU per Io under the byte budget
// setIndexCacheBytes() sets (LogManager's indexCacheBytes); past it the
// least recently used ones are dropped (IndexFile.unload), never one an
// operation holds, never an active (pinned) segment's, never one with
// bytes not yet written back. No budget on an Io: nothing is evicted.
//
// Invariants:
// - held > 0 or pinned ⇒ the segment is not evicted.
// - usedBytes = the sum of the LRU members' mirror bytes as of their last
//   touch (a rebuild may change it; the next touch corrects it).

import type { Io } from '@seglog/io';
import type { SegmentFileRef } from '../fetch-plan.js';
import { logCorruption } from '../internal/log-errors.js';
import { corruptIndex } from './index-errors.js';
import type { OffsetIndex } from './offset-index.js';
import type { TimeIndex } from './time-index.js';
import type { TxnIndex } from './txn-index.js';

/** What residency needs of a Segment (a shape: segment.ts imports this file). */
export interface IndexedSegment {
  readonly io: Io;
  readonly offsetIndex: OffsetIndex;
  readonly timeIndex: TimeIndex;
  readonly txnIndex: TxnIndex | null;
  readonly logFile: SegmentFileRef;
  readonly size: number;
  readonly baseOffset: number;
  /** False for a sealed segment a clean open did not read (segment-state.ts). */
  readonly stateKnown: boolean;
  /** The size is a clean close's record (log-dir/sealed-sizes.ts), not yet compared with the file. */
  sizeUnverified: boolean;
  /** Rebuilds both indexes from the .log (Segment.rebuildIndexes). */
  rebuildIndexes(): Promise<void>;
}

/** Segment.sanityCheck: SEGLOG_ERR_INDEX_CORRUPT when an index fails Kafka's sanity check or points past the .log. */
export function sanityCheckIndexes(segment: IndexedSegment): void {
  checkSparse(segment);
  segment.txnIndex?.sanityCheck();
}

function checkSparse(segment: IndexedSegment): void {
  segment.offsetIndex.sanityCheck();
  segment.timeIndex.sanityCheck();
  const entries = segment.offsetIndex.entries;
  if (entries > 0 && segment.offsetIndex.entry(entries - 1).position >= segment.size) {
    throw corruptIndex(segment.offsetIndex.path, `last entry points at or past the end of ${segment.logFile.path}`);
  }
}

interface Residency {
  held: number;
  pinned: boolean;
  bytes: number;
}

/** The index cache's current use (LogManager stats). */
export interface IndexCacheStats {
  readonly budgetBytes: number;
  /** Mirror bytes of the sealed segments whose indexes are in memory. */
  readonly usedBytes: number;
  readonly residentSegments: number;
  readonly loads: number;
  readonly evictions: number;
}

class IndexBudget {
  budgetBytes = Number.POSITIVE_INFINITY;
  usedBytes = 0;
  loads = 0;
  evictions = 0;
  /** Loaded, unpinned segments, least recently used first. */
  readonly lru = new Map<IndexedSegment, Residency>();

  touch(segment: IndexedSegment, state: Residency): void {
    this.remove(segment);
    if (state.pinned || !segment.offsetIndex.isLoaded || !segment.timeIndex.isLoaded) return;
    state.bytes = segment.offsetIndex.memoryBytes + segment.timeIndex.memoryBytes;
    this.lru.set(segment, state);
    this.usedBytes += state.bytes;
  }

  remove(segment: IndexedSegment): void {
    const state = this.lru.get(segment);
    if (state === undefined) return;
    this.lru.delete(segment);
    this.usedBytes -= state.bytes;
  }

  /** Evicts least recently used segments until within budget; never `keep` (the one just used). */
  trim(keep: IndexedSegment | null = null): void {
    if (this.usedBytes <= this.budgetBytes) return;
    for (const [segment, state] of this.lru) {
      if (this.usedBytes <= this.budgetBytes) return;
      if (state.held > 0 || state.pinned || segment === keep) continue;
      // Both or neither: a half-loaded segment just loads the other again.
      const dropped = segment.offsetIndex.unload();
      if (segment.timeIndex.unload() || dropped) {
        this.evictions++;
        this.remove(segment);
      }
    }
  }
}

const budgets = new WeakMap<Io, IndexBudget>();
const residencies = new WeakMap<IndexedSegment, Residency>();

function budgetOf(io: Io): IndexBudget {
  let budget = budgets.get(io);
  if (budget === undefined) {
    budget = new IndexBudget();
    budgets.set(io, budget);
  }
  return budget;
}

function residencyOf(segment: IndexedSegment): Residency {
  let state = residencies.get(segment);
  if (state === undefined) {
    state = { held: 0, pinned: false, bytes: 0 };
    residencies.set(segment, state);
  }
  return state;
}

/** Sets the byte budget of the sealed segments' indexes opened through `io` (Infinity: no eviction). */
export function setIndexCacheBytes(io: Io, bytes: number): void {
  const budget = budgetOf(io);
  budget.budgetBytes = bytes;
  budget.trim();
}

export function indexCacheStats(io: Io): IndexCacheStats {
  const budget = budgetOf(io);
  return { budgetBytes: budget.budgetBytes, usedBytes: budget.usedBytes, residentSegments: budget.lru.size, loads: budget.loads, evictions: budget.evictions };
}

/**
 * Loads what is not in memory. Lazily loaded entries get the check the
 * eager loader gives them (Kafka's sanity check): a failing index is
 * rebuilt from the .log, as a wrong entry met by a read is.
 */
async function loadBoth(segment: IndexedSegment, budget: IndexBudget, check: boolean): Promise<void> {
  if (segment.offsetIndex.isLoaded && segment.timeIndex.isLoaded) return;
  budget.loads++;
  if (segment.sizeUnverified) await verifyRecordedSize(segment);
  await Promise.all([segment.offsetIndex.load(), segment.timeIndex.load()]);
  if (!check) return;
  try {
    checkSparse(segment);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'SEGLOG_ERR_INDEX_CORRUPT') throw error;
    // A sealed .log shorter than its index after a clean stop lost durable bytes: damage, not a rebuild (issue 23 0a).
    const entries = segment.offsetIndex.entries;
    const last = entries > 0 ? segment.offsetIndex.entry(entries - 1) : null;
    if (!segment.stateKnown && last !== null && last.position >= segment.size) {
      // Not kept loaded: every later read of this segment meets the same check and the same error.
      segment.offsetIndex.unload();
      segment.timeIndex.unload();
      throw logCorruption(segment.logFile.path, 'a sealed segment after a clean shutdown is shorter than its index', {
        baseOffset: segment.baseOffset, position: segment.size, offset: last.offset,
      }, error);
    }
    await segment.rebuildIndexes();
  }
}

/**
 * A size recorded at the clean close must be the file's: a .log that is
 * shorter lost durable bytes (the damage a cut-short sealed segment is
 * without the record, issue 23 0a), one that is longer was written after the
 * close; either is refused, at this and every later read.
 */
async function verifyRecordedSize(segment: IndexedSegment): Promise<void> {
  const actual = await segment.logFile.file.size();
  if (actual === segment.size) {
    segment.sizeUnverified = false;
    return;
  }
  throw logCorruption(segment.logFile.path, `a sealed segment changed after the clean shutdown: ${actual} bytes, ${segment.size} recorded`, {
    baseOffset: segment.baseOffset, position: Math.min(actual, segment.size), offset: segment.baseOffset,
  });
}

/**
 * Runs `operation` with both indexes of `segment` in memory: loads them if
 * evicted or never read, and keeps them from eviction until it settles.
 * `check` false: the caller checks or rebuilds them itself (recovery, the
 * loader, a rebuild).
 */
export async function withIndexes<T>(segment: IndexedSegment, operation: () => Promise<T>, check = true): Promise<T> {
  const budget = budgetOf(segment.io);
  const state = residencyOf(segment);
  state.held++;
  try {
    // A concurrent eviction between the two loads is impossible (held), so one pass suffices.
    await loadBoth(segment, budget, check);
    return await operation();
  } finally {
    state.held--;
    budget.touch(segment, state);
    budget.trim(segment);
  }
}

/** An active (pinned) segment's indexes stay in memory and out of the budget; unpinned they join it. */
export function setIndexesPinned(segment: IndexedSegment, pinned: boolean): void {
  const budget = budgetOf(segment.io);
  const state = residencyOf(segment);
  state.pinned = pinned;
  budget.touch(segment, state);
  budget.trim();
}

/** A closed or deleted segment leaves the budget. */
export function forgetIndexes(segment: IndexedSegment): void {
  budgetOf(segment.io).remove(segment);
}
