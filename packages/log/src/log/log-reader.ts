// LogReader: the read path of one log (ARCHITECTURE.md "Reads and fetch
// plans", "Placement"). A read returns whole batches from the batch holding
// the requested offset as a FetchPlan: inline parts (tail-cache views) when
// the caller can serve it from memory, else file parts (a retained .log
// handle) read on the pool.
//
// Invariants: never past the written position (nor, read_committed, the
// last stable offset); never more than maxBytes unless the first batch
// alone is larger (Kafka's rule); inline views stay valid after truncation,
// roll and eviction; a file part keeps its handle until the plan is
// released. Each read counts one placement (caller or pool, with the first
// reason that sent it to the pool). tryRead() counts only what it serves: a
// null answer counts nothing, so tryRead() then read() counts once.
//
// Hot path: a tail-cache hit allocates the plan, its parts and the views
// array, nothing per record.

import { assert } from '@seglog/common';
import { Priority } from '@seglog/io';
import { FetchPlan } from '../fetch-plan.js';
import type { FetchPart } from '../fetch-plan.js';
import type { LocalLog } from './local-log.js';
import type { LogSegments } from './log-segments.js';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from './log-types.js';
import type { ReadOptions } from './log-types.js';
import type { LeaderEpochCache } from '../checkpoint/leader-epoch-cache.js';
import type { ProducerStateManager } from '../producer/producer-state-manager.js';
import type { Segment, SegmentRange, TimestampLookup } from '../segment/segment.js';
import type { TailCache } from '../cache/tail-cache.js';
import { lastStableOffsetOf } from './append-accounting.js';
import { logClosed, offsetOutOfRange } from '../internal/log-errors.js';
import type { LogPositions } from './log-positions.js';
import { runOnPool } from './placement.js';
import type { PlacementReason, PoolPlacement } from './placement.js';
import { readRangeFromCache, TailHeader } from '../cache/tail-read.js';
import type { WriteQueue } from './write-queue.js';

const NEVER = Number.MAX_SAFE_INTEGER;

export interface LogReaderDeps {
  readonly dir: string;
  readonly positions: LogPositions;
  readonly segments: LogSegments;
  readonly local: LocalLog;
  readonly writeQueue: WriteQueue;
  readonly tailCache: TailCache;
  readonly producerState: ProducerStateManager;
  readonly epochCache: LeaderEpochCache;
  readonly where: PoolPlacement;
}

export class LogReader {
  private readonly dir: string;
  private readonly positions: LogPositions;
  private readonly segments: LogSegments;
  private readonly local: LocalLog;
  private readonly writeQueue: WriteQueue;
  private readonly tailCache: TailCache;
  private readonly tailHeader: TailHeader;
  private readonly producerState: ProducerStateManager;
  private readonly epochCache: LeaderEpochCache;
  private readonly where: PoolPlacement;

  constructor(deps: LogReaderDeps) {
    this.dir = deps.dir;
    this.positions = deps.positions;
    this.segments = deps.segments;
    this.local = deps.local;
    this.writeQueue = deps.writeQueue;
    this.tailCache = deps.tailCache;
    this.tailHeader = new TailHeader();
    this.producerState = deps.producerState;
    this.epochCache = deps.epochCache;
    this.where = deps.where;
  }

  /**
   * Kafka's offsetsForTimes, as Log.offsetForTimestamp: EARLIEST (-2) → log
   * start offset, LATEST (-1) → log end offset; otherwise the first record
   * with timestamp ≥ target, or null.
   */
  async offsetForTimestamp(timestamp: number): Promise<TimestampLookup | null> {
    assert(Number.isSafeInteger(timestamp), 'Log.offsetForTimestamp: timestamp must be a safe integer');
    if (this.positions.state === 'closed') throw logClosed(this.dir);
    if (timestamp === EARLIEST_TIMESTAMP) {
      const earliest = this.epochCache.earliestEntry();
      const epoch = earliest !== undefined && earliest.startOffset <= this.positions.logStart ? earliest.epoch : -1;
      return { timestamp: -1, offset: this.positions.logStart, leaderEpoch: epoch };
    }
    if (timestamp === LATEST_TIMESTAMP) return { timestamp: -1, offset: this.positions.logEnd, leaderEpoch: this.epochCache.latestEpoch() ?? -1 };
    return this.local.findOffsetByTimestamp(timestamp);
  }

  /** The last stable offset (§17), as Log.lastStableOffset. */
  get lastStableOffset(): number {
    return lastStableOffsetOf(this.producerState, this.positions.highWatermark, this.positions.logStart);
  }

  /**
   * Whole batches from the batch holding `offset`: at most maxBytes (the
   * first batch alone may exceed it), only batches below maxOffset (default
   * and at most writtenOffset; read_committed: at most the last stable
   * offset), from one segment. offset == logEndOffset gives an empty plan;
   * below logStartOffset or above logEndOffset is
   * SEGLOG_ERR_LOG_OFFSET_OUT_OF_RANGE. Served on the caller from the tail
   * cache when it holds the floor entry and every following byte of the
   * active segment (the promise is already resolved; parts are inline views
   * that stay valid after truncation, roll and eviction), else on the pool
   * from the file (file parts). Release the plan when done.
   */
  read(offset: number, maxBytes: number, options: ReadOptions = {}): Promise<FetchPlan> {
    try {
      const bound = this.readBound(offset, maxBytes, options);
      const plan = this.readOnCaller(offset, maxBytes, bound, options, true);
      if (plan !== null) return Promise.resolve(plan);
      return runOnPool(this.where, () => this.readFromFile(offset, maxBytes, bound, options), Priority.read);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The synchronous form of read: the plan when the caller can serve it,
   * else null (read() goes to the pool). Throws read()'s errors. A null
   * answer is not counted in placement: the read() that follows counts it.
   */
  tryRead(offset: number, maxBytes: number, options: ReadOptions = {}): FetchPlan | null {
    const bound = this.readBound(offset, maxBytes, options);
    return this.readOnCaller(offset, maxBytes, bound, options, false);
  }

  /** Checks a read and returns the offset bound of its batches. */
  private readBound(offset: number, maxBytes: number, options: ReadOptions): number {
    assert(Number.isSafeInteger(offset), 'Log.read: offset must be a safe integer');
    assert(Number.isSafeInteger(maxBytes) && maxBytes >= 0, 'Log.read: maxBytes must be a non-negative safe integer');
    if (this.positions.state === 'closed') throw logClosed(this.dir);
    if (offset < this.positions.logStart || offset > this.positions.logEnd) {
      throw offsetOutOfRange(this.dir, offset, this.positions.logStart, this.positions.logEnd, 'read');
    }
    let bound = Math.min(options.maxOffset ?? NEVER, this.positions.written);
    if (options.isolation === 'read_committed') bound = Math.min(bound, this.lastStableOffset);
    return bound;
  }

  /** A read served from the tail cache (or an empty one), counted; null (counted with its reason if countMiss) when it must go to the pool. */
  private readOnCaller(offset: number, maxBytes: number, bound: number, options: ReadOptions, countMiss: boolean): FetchPlan | null {
    const counts = this.where.placement;
    if (offset >= bound) {
      counts.read.caller++;
      return this.emptyPlan(offset);
    }
    const index = this.segments.floorIndex(offset);
    const segment = this.segments.at(index) as Segment;
    let reason: PlacementReason | null = null;
    let range: SegmentRange | null | 'miss' = 'miss';
    if (!this.segments.isActive(index)) reason = 'sealed';
    else if (!this.writeQueue.ready || this.writeQueue.cacheBase !== segment.baseOffset) reason = 'uncached';
    else {
      range = readRangeFromCache(segment, this.tailCache, this.tailHeader, { startOffset: offset, maxBytes, boundOffset: bound, minOneMessage: options.minOneMessage ?? true });
      if (range === 'miss') reason = 'uncached';
    }
    if (reason !== null || range === 'miss') {
      if (countMiss) {
        counts.read.pool++;
        counts.reasons[reason ?? 'uncached']++;
      }
      return null;
    }
    counts.read.caller++;
    if (range === null || range.length === 0) return this.emptyPlan(offset);
    const views: Buffer[] = [];
    const hit = this.tailCache.read(range.position, range.length, views);
    assert(hit, 'Log.read: the tail cache lost a range it covered');
    const parts: FetchPart[] = [];
    for (const buffer of views) parts.push({ kind: 'inline', buffer });
    return this.planOf(parts, range, offset, options.isolation === 'read_committed');
  }

  private planOf(parts: readonly FetchPart[], range: SegmentRange, offset: number, committed: boolean): FetchPlan {
    return new FetchPlan({
      parts, firstOffset: range.firstOffset, nextOffset: range.nextOffset, highWatermark: this.positions.highWatermark,
      lastStableOffset: this.lastStableOffset, logStartOffset: this.positions.logStart,
      abortedTransactions: committed ? this.local.collectAbortedTxns(offset, range.nextOffset) : [],
    });
  }

  /** The pool side of a read: the buffered handle, never past the written position. */
  private async readFromFile(offset: number, maxBytes: number, bound: number, options: ReadOptions): Promise<FetchPlan> {
    if (this.positions.state === 'closed') throw logClosed(this.dir);
    const minOne = options.minOneMessage ?? true;
    const committed = options.isolation === 'read_committed';
    const found = await this.local.readFileRange(offset, maxBytes, bound, minOne, options.skipRecordless ?? false, options.into ?? null);
    if (found === null) return this.emptyPlan(offset);
    const range = found.range;
    const part: FetchPart = range.bytes === undefined
      ? { kind: 'file', file: found.file, position: range.position, length: range.length }
      : { kind: 'file', file: found.file, position: range.position, length: range.length, bytes: range.bytes };
    return this.planOf([part], range, offset, committed);
  }

  private emptyPlan(offset: number): FetchPlan {
    return new FetchPlan({
      parts: [], firstOffset: offset, nextOffset: offset, highWatermark: this.positions.highWatermark,
      lastStableOffset: this.lastStableOffset, logStartOffset: this.positions.logStart, abortedTransactions: [],
    });
  }
}
