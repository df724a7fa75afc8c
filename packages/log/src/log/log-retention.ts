// LogRetention: what leaves the front of a log (reference/kafka-storage.md
// §19): Kafka's deleteOldSegments (log-start breach, then size, then time)
// and deleteRecords (advancing the log start offset).
//
// Invariants: only whole segments whose every offset is below the high
// watermark go, oldest first, so the deleted set is always a prefix; the
// log always keeps a segment (it rolls first when every segment would go).
// Each removed segment is renamed, its producer snapshot deleted and the
// directory fsynced before the next one (a power loss then leaves a prefix
// deleted, never a hole). The flusher is paused while segments are removed.
// The log start offset only grows here; the high watermark follows it, and
// producer state and the leader-epoch cache are trimmed to it.

import type { LeaderEpochCache } from '../checkpoint/leader-epoch-cache.js';
import type { LocalLog } from './local-log.js';
import type { LogConfig } from '../log-config.js';
import type { LogSegments } from './log-segments.js';
import type { ProducerStateManager } from '../producer/producer-state-manager.js';
import type { Segment } from '../segment/segment.js';
import { offsetOutOfRange } from '../internal/log-errors.js';
import type { LogFlusher } from './log-flusher.js';
import type { LogPositions } from './log-positions.js';

export interface LogRetentionDeps {
  readonly dir: string;
  readonly config: LogConfig;
  readonly positions: LogPositions;
  readonly segments: LogSegments;
  readonly local: LocalLog;
  readonly flusher: LogFlusher;
  readonly producerState: ProducerStateManager;
  readonly epochCache: LeaderEpochCache;
  readonly now: () => number;
  /** The log's I/O-error funnel: returns the error to throw (fail-stop, or a retriable refusal passed through). */
  readonly failWith: (error: unknown) => unknown;
}

export class LogRetention {
  private readonly dir: string;
  private readonly config: LogConfig;
  private readonly positions: LogPositions;
  private readonly segments: LogSegments;
  private readonly local: LocalLog;
  private readonly flusher: LogFlusher;
  private readonly producerState: ProducerStateManager;
  private readonly epochCache: LeaderEpochCache;
  private readonly now: () => number;
  private readonly failWith: (error: unknown) => unknown;

  constructor(deps: LogRetentionDeps) {
    this.dir = deps.dir;
    this.config = deps.config;
    this.positions = deps.positions;
    this.segments = deps.segments;
    this.local = deps.local;
    this.flusher = deps.flusher;
    this.producerState = deps.producerState;
    this.epochCache = deps.epochCache;
    this.now = deps.now;
    this.failWith = deps.failWith;
  }

  /** deleteOldSegments' body (inside a mutation): returns the count of deleted segments. */
  async deleteOldSegments(now: number): Promise<number> {
    // Kafka runs this on its own schedule (producer.id.expiration.check.interval.ms); retention is periodic too.
    this.producerState.removeExpiredProducers(now);
    let deleted = await this.deleteWhile((segment, next) => next !== undefined && next.baseOffset <= this.positions.logStart);
    // cleanup.policy=compact alone: the cleaner, not retention, removes data (only the log-start breach applies).
    if (!this.config.deletes) return deleted;
    if (this.config.retentionBytes >= 0) {
      let excess = this.segments.sizeInBytes - this.config.retentionBytes;
      deleted += await this.deleteWhile((segment) => {
        if (excess - segment.size < 0) return false;
        excess -= segment.size;
        return true;
      });
    }
    if (this.config.retentionMs >= 0) await this.knowTimestamps();
    if (this.config.retentionMs >= 0) deleted += await this.deleteWhile((segment) => now - segment.largestTimestamp > this.config.retentionMs);
    return deleted;
  }

  /** deleteRecords' body (inside a mutation): `offset` -1 is the high watermark; resolves with the log start offset. */
  deleteRecords(offset: number): number {
    const target = offset === -1 ? this.positions.highWatermark : offset;
    if (target < 0 || target > this.positions.highWatermark) {
      throw offsetOutOfRange(this.dir, target, this.positions.logStart, this.positions.highWatermark, 'deleteRecords');
    }
    if (target > this.positions.logStart) this.advanceLogStart(target);
    return this.positions.logStart;
  }

  /** Reads the max timestamps a clean open left unknown (segment-state.ts), oldest first, up to the first too young to delete. */
  private async knowTimestamps(): Promise<void> {
    const now = this.now();
    for (const segment of this.segments.all().slice(0, -1)) {
      await segment.ensureState();
      if (now - segment.largestTimestamp <= this.config.retentionMs) return;
    }
  }

  private async deleteWhile(predicate: (segment: Segment, next: Segment | undefined) => boolean): Promise<number> {
    const deletable: Segment[] = [];
    for (let i = 0; i < this.segments.length; i++) {
      const segment = this.segments.at(i) as Segment;
      const next = this.segments.at(i + 1);
      const upperBound = next === undefined ? this.positions.logEnd : next.baseOffset;
      if (this.positions.highWatermark < upperBound) break;
      if (next === undefined && segment.isEmpty) break;
      if (!predicate(segment, next)) break;
      deletable.push(segment);
    }
    if (deletable.length === 0) return 0;
    try {
      if (deletable.length === this.segments.length) await this.local.roll(this.positions.logEnd, this.now());
      await this.removeOldest(deletable);
    } catch (error) {
      throw this.failWith(error);
    }
    return deletable.length;
  }

  private async removeOldest(deletable: readonly Segment[]): Promise<void> {
    await this.flusher.pause();
    try {
      this.segments.removeOldest(deletable.length);
      // One directory fsync per segment, oldest first: the deleted set is
      // then always a prefix after a power loss. With one fsync at the end,
      // any subset of the renames could survive, reviving an old segment
      // beyond a hole that recovery must treat as a lost write.
      for (const segment of deletable) {
        await this.local.deleteSegment(segment);
        await this.producerState.deleteSnapshot(segment.baseOffset);
        await this.flusher.syncDir();
      }
    } finally {
      this.flusher.resume();
    }
    const first = this.segments.first;
    if (first.baseOffset > this.positions.logStart) this.advanceLogStart(first.baseOffset);
  }

  private advanceLogStart(offset: number): void {
    this.positions.logStart = offset;
    if (this.positions.highWatermark < offset) this.positions.highWatermark = offset;
    this.producerState.onLogStartOffsetIncremented(offset);
    const earliest = this.epochCache.earliestEntry();
    if (earliest !== undefined && earliest.startOffset < offset) this.epochCache.truncateFromStart(offset);
  }
}
