// LogTruncation: what leaves the end of a log (reference/kafka-storage.md
// §18): follower truncation (truncateTo) and replacing every segment by an
// empty one at an offset (truncateFullyAndStartAt), with their effect on the
// positions, the waiters, producer state and the leader-epoch cache.
//
// Invariants: the whole batch holding the truncation offset goes (the log
// never ends inside a batch); afterwards logEnd = written = offset, durable
// and the high watermark never exceed it, logStart is at most it, and every
// written()/durable() waiter is rejected with SEGLOG_ERR_LOG_TRUNCATED (what
// it waited for may never come). The flusher is paused while segments are
// cut. Producer state is reloaded from the newest snapshot at or below the
// offset and replayed from the first segment, as the loader does.
// Callers (Log) run these inside a mutation, after checkWritable.

import type { LeaderEpochCache } from '../checkpoint/leader-epoch-cache.js';
import { logTruncated } from '../internal/log-errors.js';
import type { ProducerStateManager } from '../producer/producer-state-manager.js';
import { replayProducerState } from '../recovery/log-loader.js';
import type { LocalLog } from './local-log.js';
import type { LogFlusher } from './log-flusher.js';
import type { LogPositions } from './log-positions.js';
import type { LogSegments } from './log-segments.js';
import type { OffsetWaiters } from './offset-waiters.js';

export interface LogTruncationDeps {
  readonly dir: string;
  readonly positions: LogPositions;
  readonly segments: LogSegments;
  readonly local: LocalLog;
  readonly flusher: LogFlusher;
  readonly producerState: ProducerStateManager;
  readonly epochCache: LeaderEpochCache;
  readonly writtenWaiters: OffsetWaiters;
  readonly durableWaiters: OffsetWaiters;
  readonly now: () => number;
  /** The log's I/O-error funnel: returns the error to throw. */
  readonly failWith: (error: unknown) => unknown;
}

export class LogTruncation {
  private readonly dir: string;
  private readonly positions: LogPositions;
  private readonly segments: LogSegments;
  private readonly local: LocalLog;
  private readonly flusher: LogFlusher;
  private readonly producerState: ProducerStateManager;
  private readonly epochCache: LeaderEpochCache;
  private readonly writtenWaiters: OffsetWaiters;
  private readonly durableWaiters: OffsetWaiters;
  private readonly now: () => number;
  private readonly failWith: (error: unknown) => unknown;

  constructor(deps: LogTruncationDeps) {
    this.dir = deps.dir;
    this.positions = deps.positions;
    this.segments = deps.segments;
    this.local = deps.local;
    this.flusher = deps.flusher;
    this.producerState = deps.producerState;
    this.epochCache = deps.epochCache;
    this.writtenWaiters = deps.writtenWaiters;
    this.durableWaiters = deps.durableWaiters;
    this.now = deps.now;
    this.failWith = deps.failWith;
  }

  /** truncateTo's body (inside a mutation, log writable): false when offset ≥ logEndOffset. */
  async truncateTo(offset: number): Promise<boolean> {
    if (offset >= this.positions.logEnd) {
      this.epochCache.truncateFromEnd(this.positions.logEnd);
      return false;
    }
    if (offset < this.segments.first.baseOffset) {
      await this.replaceAllSegments(offset, undefined);
      return true;
    }
    await this.truncateSegments(offset);
    return true;
  }

  /** truncateFullyAndStartAt's body (inside a mutation, log writable). */
  replaceAllSegments(offset: number, logStartOffset: number | undefined): Promise<void> {
    return this.replaceAll(offset, logStartOffset);
  }

  private async truncateSegments(offset: number): Promise<void> {
    await this.flusher.pause();
    try {
      await this.local.truncateTo(offset);
      this.setPositionsAfterTruncation(offset, Math.min(offset, this.segments.active.nextOffset));
      await this.reloadProducerState(offset);
    } catch (error) {
      throw this.failWith(error);
    } finally {
      this.flusher.resume();
    }
  }

  /**
   * Producer state after a truncation to `offset`: snapshots above it go,
   * the newest one left is loaded and the log replayed from it to `offset`
   * (.txnindex entries were cut with their segments; none are re-added).
   */
  private async reloadProducerState(offset: number): Promise<void> {
    // From the first segment's base, as the loader does: a producer whose batches all lie below the log start
    // offset must stay known (issue 23 item 1).
    const replayFrom = Math.min(this.segments.first.baseOffset, this.positions.logStart);
    await this.producerState.truncateAndReload(replayFrom, offset, this.now());
    await replayProducerState(this.producerState, this.segments.all(), { upTo: offset, rebuilt: null, snapshotBases: [] });
  }

  private setPositionsAfterTruncation(offset: number, dataEnd: number): void {
    this.positions.logEnd = offset;
    this.positions.written = offset;
    this.positions.durable = Math.min(this.positions.durable, dataEnd);
    this.flusher.clampTarget(offset);
    this.positions.highWatermark = Math.min(this.positions.highWatermark, offset);
    this.positions.logStart = Math.min(this.positions.logStart, offset);
    this.epochCache.truncateFromEnd(offset);
    const truncated = logTruncated(this.dir, offset);
    this.writtenWaiters.rejectAll(truncated);
    this.durableWaiters.rejectAll(truncated);
  }

  private async replaceAll(offset: number, logStartOffset: number | undefined): Promise<void> {
    await this.flusher.pause();
    try {
      await this.local.replaceAll(offset);
      await this.epochCache.clear();
      await this.producerState.truncateFullyAndStartAt(offset);
    } catch (error) {
      throw this.failWith(error);
    } finally {
      this.flusher.resume();
    }
    this.setPositionsAfterTruncation(offset, offset);
    this.positions.durable = offset;
    this.positions.highWatermark = offset;
    this.positions.logStart = logStartOffset ?? offset;
  }
}
