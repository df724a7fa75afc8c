// LogCloser: a Log's close (reference/kafka-storage.md §22): an open log
// is flushed, its producer state snapshotted, the active segment sealed as
// a roll would (final time-index entry,
// trimmed indexes and .log, synced indexes and .log) and releasing every
// resource: the flusher and its timer, pending segment deletes, the writer
// and direct staging memory, the tail cache, the waiters (rejected with
// SEGLOG_ERR_LOG_CLOSED), the leader-epoch checkpoint, segment handles and a
// pool the log owns. A failure before release takes the log offline;
// release() runs after a failure too (an offline log only drops its
// handles); state ends 'closed'.

import type { BlockingPool } from '@seglog/io';
import type { TailCache } from '../cache/tail-cache.js';
import type { LeaderEpochCache } from '../checkpoint/leader-epoch-cache.js';
import { logClosed, logOffline } from '../internal/log-errors.js';
import type { ProducerStateManager } from '../producer/producer-state-manager.js';
import type { FailStop } from './fail-stop.js';
import type { LogAcks } from './log-acks.js';
import type { LocalLog } from './local-log.js';
import type { LogFlusher } from './log-flusher.js';
import type { LogPositions } from './log-positions.js';
import type { LogSegments } from './log-segments.js';
import type { LogMetrics } from './log-types.js';
import type { OffsetWaiters } from './offset-waiters.js';
import type { WriteQueue } from './write-queue.js';

export interface LogCloserDeps {
  readonly dir: string;
  readonly positions: LogPositions;
  readonly segments: LogSegments;
  readonly local: LocalLog;
  readonly flusher: LogFlusher;
  readonly acks: LogAcks;
  readonly failStop: FailStop;
  readonly producerState: ProducerStateManager;
  readonly writeQueue: WriteQueue;
  readonly tailCache: TailCache;
  readonly epochCache: LeaderEpochCache;
  readonly writtenWaiters: OffsetWaiters;
  readonly durableWaiters: OffsetWaiters;
  readonly metrics: LogMetrics;
  /** The log's pool, closed by release() only when the log made it. */
  readonly ownedPool: BlockingPool | null;
}

export class LogCloser {
  private readonly dir: string;
  private readonly positions: LogPositions;
  private readonly segments: LogSegments;
  private readonly local: LocalLog;
  private readonly flusher: LogFlusher;
  private readonly acks: LogAcks;
  private readonly failStop: FailStop;
  private readonly producerState: ProducerStateManager;
  private readonly writeQueue: WriteQueue;
  private readonly tailCache: TailCache;
  private readonly epochCache: LeaderEpochCache;
  private readonly writtenWaiters: OffsetWaiters;
  private readonly durableWaiters: OffsetWaiters;
  private readonly metrics: LogMetrics;
  private readonly ownedPool: BlockingPool | null;

  constructor(deps: LogCloserDeps) {
    this.dir = deps.dir;
    this.positions = deps.positions;
    this.segments = deps.segments;
    this.local = deps.local;
    this.flusher = deps.flusher;
    this.acks = deps.acks;
    this.failStop = deps.failStop;
    this.producerState = deps.producerState;
    this.writeQueue = deps.writeQueue;
    this.tailCache = deps.tailCache;
    this.epochCache = deps.epochCache;
    this.writtenWaiters = deps.writtenWaiters;
    this.durableWaiters = deps.durableWaiters;
    this.metrics = deps.metrics;
    this.ownedPool = deps.ownedPool;
  }

  /**
   * close()'s body (inside a mutation): an open log is made durable, its
   * producer state snapshotted, the active segment sealed and the
   * leader-epoch checkpoint flushed, a failure there taking it offline; then
   * release(). Rejects with SEGLOG_ERR_LOG_OFFLINE when closing failed.
   */
  async close(): Promise<void> {
    if (this.positions.state === 'closed') return;
    let failure: unknown;
    if (this.positions.state === 'open') {
      try {
        await this.acks.flushAll();
        await this.producerState.takeSnapshot();
        await this.sealActive();
        await this.epochCache.flush();
      } catch (error) {
        failure = error;
        this.failStop.fail(error);
      }
    }
    await this.release();
    if (failure !== undefined) throw logOffline(this.dir, failure);
  }

  /** Seals the active segment for close (everything accepted is already durable). */
  async sealActive(): Promise<void> {
    const active = this.segments.active;
    await this.writeQueue.deactivate(true);
    active.timeIndex.maybeAppend(active.maxTimestampSoFar, active.offsetOfMaxTimestampSoFar, true);
    await active.offsetIndex.trim();
    await active.timeIndex.trim();
    await active.trimLog();
    await active.flushIndexes();
    await active.logFile.file.fdatasync();
    this.metrics.flushes++;
  }

  /** Releases every resource of the log; never throws (failures are settled). */
  async release(): Promise<void> {
    this.flusher.stopTimer();
    this.local.cancelDeletes();
    // Paused for good: no round starts after close.
    await this.flusher.pause();
    // Returns direct staging memory (after a failure too); the O_DIRECT handle goes with it.
    await this.writeQueue.release(this.positions.state === 'open');
    this.tailCache.close();
    this.positions.state = this.positions.state === 'offline' ? 'offline' : 'closed';
    const closed = logClosed(this.dir);
    this.writtenWaiters.rejectAll(closed);
    this.durableWaiters.rejectAll(closed);
    await Promise.allSettled([this.epochCache.flush(), ...this.segments.all().map((segment) => segment.close())]);
    if (this.ownedPool !== null) await this.ownedPool.close();
    this.positions.state = 'closed';
  }
}
