// LogAppender: the append path of one log (ARCHITECTURE.md "The write
// path", "Placement"). It validates a batch, decides where it runs (the
// caller, synchronously, when its storage work can be queued without
// waiting; else a pooled mutation on the chain), plans it against producer
// state (log/append-accounting.ts), and stores it: leader-epoch
// checkpoint, roll, room, booking in the active segment, the write queue,
// the log end offset and the producer-state commit in one synchronous step.
//
// Invariants: a rejected batch changes nothing (plans are pure until
// committed); appends complete in call order (the caller path only runs
// with no mutation pending); an epoch change is durable before the append
// is acknowledged; every storage failure goes through FailStop.
//
// Hot path (caller-path append): no closure, promise or allocation per
// append beyond the plan and the result; the onAbortedTxn listener is made
// once per log. The pooled path makes one task closure per append.

import { assert } from '@seglog/common';
import type { BatchSummary, RecordBatch } from '@seglog/records';
import type { LeaderEpochCache } from '../checkpoint/leader-epoch-cache.js';
import type { LocalLog } from './local-log.js';
import type { LogConfig } from '../log-config.js';
import type { LogSegments } from './log-segments.js';
import type { AppendResult, LogMetrics } from './log-types.js';
import type { ProducerStateManager } from '../producer/producer-state-manager.js';
import type { Segment } from '../segment/segment.js';
import type { AbortedTxn } from '../segment/txn-index.js';
import { commitProducerState, followerResult, leaderResult, planFollowerAppend, planLeaderBatch, planMarker, validateLeaderBatch } from './append-accounting.js';
import type { FollowerPlan, LeaderPlan, PlanContext, TxnMarkerOptions } from './append-accounting.js';
import type { FailStop } from './fail-stop.js';
import type { LogFlusher } from './log-flusher.js';
import type { LogPositions } from './log-positions.js';
import type { MutationQueue } from './mutation-queue.js';
import type { PlacementMetrics, PlacementReason } from './placement.js';
import type { WriteQueue } from './write-queue.js';
import { RefusedAppend } from './refused-append.js';

/** A COMMIT/ABORT control batch is 78 bytes (reference/kafka-storage.md §4). */
const TXN_MARKER_BYTES = 78;

export interface LogAppenderDeps {
  readonly dir: string;
  readonly config: LogConfig;
  readonly positions: LogPositions;
  readonly segments: LogSegments;
  readonly local: LocalLog;
  readonly writeQueue: WriteQueue;
  readonly flusher: LogFlusher;
  readonly epochCache: LeaderEpochCache;
  readonly producerState: ProducerStateManager;
  readonly placement: PlacementMetrics;
  readonly metrics: LogMetrics;
  readonly mutations: MutationQueue;
  readonly failStop: FailStop;
  readonly now: () => number;
  readonly beforeAppend: ((bytes: number) => void) | null;
}

export class LogAppender {
  private readonly dir: string;
  private readonly config: LogConfig;
  private readonly positions: LogPositions;
  private readonly segments: LogSegments;
  private readonly local: LocalLog;
  private readonly writeQueue: WriteQueue;
  private readonly flusher: LogFlusher;
  private readonly epochCache: LeaderEpochCache;
  private readonly producerState: ProducerStateManager;
  private readonly placement: PlacementMetrics;
  private readonly metrics: LogMetrics;
  private readonly mutations: MutationQueue;
  private readonly failStop: FailStop;
  private readonly now: () => number;
  private readonly beforeAppend: ((bytes: number) => void) | null;
  /** Why the last followerOnCaller call returned null. */
  private followerReason: PlacementReason;
  /** The last batch tryAppendAsLeader declined, validated: appendAsLeader of it skips a second validation. */
  private readonly refused: RefusedAppend;

  constructor(deps: LogAppenderDeps) {
    this.dir = deps.dir;
    this.config = deps.config;
    this.positions = deps.positions;
    this.segments = deps.segments;
    this.local = deps.local;
    this.writeQueue = deps.writeQueue;
    this.flusher = deps.flusher;
    this.epochCache = deps.epochCache;
    this.producerState = deps.producerState;
    this.placement = deps.placement;
    this.metrics = deps.metrics;
    this.mutations = deps.mutations;
    this.failStop = deps.failStop;
    this.now = deps.now;
    this.beforeAppend = deps.beforeAppend;
    this.followerReason = 'pending';
    this.refused = new RefusedAppend();
  }

  private get active(): Segment {
    return this.segments.active;
  }

  /** Log.appendAsLeader (documented there). */
  appendAsLeader(buffer: Buffer, options: { readonly leaderEpoch: number }): Promise<AppendResult> {
    const nowMs = this.now();
    try {
      this.beforeAppend?.(buffer.length);
      const summary = this.refused.take(buffer) ?? validateLeaderBatch(buffer, this.config, nowMs);
      const reason = this.leaderPlacement(summary, options.leaderEpoch, nowMs);
      if (reason === null) return Promise.resolve(this.appendLeaderOnCaller(summary, options.leaderEpoch, nowMs));
      return this.mutations.runPooled(reason, () => {
        this.failStop.checkWritable();
        // Producer-state checks depend on every earlier append: planned in order.
        const plan = planLeaderBatch(this.producerState, summary, options.leaderEpoch, this.planContext(nowMs));
        return this.appendPlanned(plan, options.leaderEpoch, nowMs);
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Log.tryAppendAsLeader (documented there). */
  tryAppendAsLeader(buffer: Buffer, options: { readonly leaderEpoch: number }): AppendResult | null {
    const nowMs = this.now();
    this.beforeAppend?.(buffer.length);
    this.refused.forget();
    const summary = validateLeaderBatch(buffer, this.config, nowMs);
    if (this.leaderPlacement(summary, options.leaderEpoch, nowMs) !== null) {
      this.refused.remember(buffer, summary);
      return null;
    }
    return this.appendLeaderOnCaller(summary, options.leaderEpoch, nowMs);
  }

  /** Log.appendMarker (documented there). */
  appendMarker(marker: TxnMarkerOptions): Promise<AppendResult> {
    assert(Number.isSafeInteger(marker.producerId) && marker.producerId >= 0, 'Log.appendMarker: producerId must be a safe integer >= 0');
    const nowMs = this.now();
    try {
      this.beforeAppend?.(TXN_MARKER_BYTES);
      this.failStop.checkWritable();
      return this.mutations.runPooled(this.mutations.pending > 0 ? 'pending' : 'control', async () => {
        this.failStop.checkWritable();
        const plan = planMarker(this.producerState, marker, this.planContext(nowMs));
        const result = await this.appendPlanned(plan, marker.leaderEpoch, nowMs);
        await this.drainTxnIndex();
        return result;
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private planContext(nowMs: number): PlanContext {
    return { dir: this.dir, config: this.config, logEndOffset: this.positions.logEnd, nowMs };
  }

  /**
   * Where a validated producer batch runs: null = the caller, else the first
   * rule that sends it to the pool. Throws the log's refusal (offline, closed).
   */
  private leaderPlacement(summary: BatchSummary, leaderEpoch: number, nowMs: number): PlacementReason | null {
    this.failStop.checkWritable();
    if (this.mutations.pending > 0) return 'pending';
    if (!this.writeQueue.ready) return 'init';
    if (summary.isTransactional) return 'transactional';
    if (this.config.messageTimestampType === 'LogAppendTime') return 'timestamp';
    const firstOffset = this.positions.logEnd;
    if (this.epochCache.hasUnwrittenChanges || (leaderEpoch >= 0 && this.epochCache.isUpdateNeeded(leaderEpoch, firstOffset))) return 'epoch';
    return this.storagePlacement(summary.sizeInBytes, summary.maxTimestamp, firstOffset + summary.lastOffsetDelta, nowMs);
  }

  /** The storage rules of the caller path: no roll, no forced flush, reserved room, writer room. */
  private storagePlacement(sizeInBytes: number, maxTimestamp: number, lastOffset: number, nowMs: number): PlacementReason | null {
    const active = this.active;
    if (active.shouldRoll(sizeInBytes, maxTimestamp, lastOffset, nowMs)) return 'roll';
    if (lastOffset + 1 - this.positions.durable >= this.config.flushIntervalMessages) return 'flush';
    return this.writeQueue.roomFor(sizeInBytes);
  }

  /** The caller path of a leader append: plan (may throw, nothing changed), book, queue, commit. */
  private appendLeaderOnCaller(summary: BatchSummary, leaderEpoch: number, nowMs: number): AppendResult {
    const plan = planLeaderBatch(this.producerState, summary, leaderEpoch, this.planContext(nowMs));
    this.placement.append.caller++;
    if (plan.batch !== null) {
      try {
        this.storeLeader(plan, nowMs);
      } catch (error) {
        throw this.failStop.failWith(error);
      }
    }
    return leaderResult(plan, this.positions.logStart);
  }

  /**
   * Stores a planned leader append: leader-epoch assign, roll, segment
   * bookkeeping, writer, LEO, and the producer-state commit in the same
   * synchronous step. A duplicate writes nothing and answers its original
   * offsets. The roll's snapshot encodes committed state, without this batch.
   */
  private async appendPlanned(plan: LeaderPlan, leaderEpoch: number, nowMs: number): Promise<AppendResult> {
    if (plan.batch !== null) {
      try {
        await this.settleEpoch(leaderEpoch, plan.firstOffset);
        if (this.active.shouldRoll(plan.sizeInBytes, plan.maxTimestamp, plan.lastOffset, nowMs)) await this.local.roll(plan.firstOffset, nowMs);
        await this.writeQueue.ensureRoom(plan.sizeInBytes);
        this.storeLeader(plan, nowMs);
      } catch (error) {
        throw this.failStop.failWith(error);
      }
    }
    return leaderResult(plan, this.positions.logStart);
  }

  private storeLeader(plan: LeaderPlan, nowMs: number): void {
    this.active.appendBatch(plan.sizeInBytes, plan.lastOffset, plan.maxTimestamp, nowMs);
    this.enqueueWrite((plan.batch as RecordBatch).bytes(), plan.lastOffset);
    commitProducerState(this.producerState, plan, plan.lastOffset + 1, this.onAbortedTxn);
  }

  /**
   * The conservative epoch rule: an epoch change is assigned (its checkpoint
   * written) and any unwritten checkpoint change (a truncation's background
   * rewrite) is made durable before the append is acknowledged.
   */
  private async settleEpoch(epoch: number, startOffset: number): Promise<void> {
    if (epoch >= 0 && this.epochCache.isUpdateNeeded(epoch, startOffset)) await this.epochCache.assign(epoch, startOffset);
    if (this.epochCache.hasUnwrittenChanges) await this.epochCache.flush();
  }

  /**
   * A marker's acknowledgement depends on its .txnindex entry (the record
   * read_committed fetches use to skip the aborted data): wait for the active
   * segment's write-back, so a failed one refuses the marker (the log is
   * offline) instead of surfacing at close(). COMMIT markers and markers
   * that abort nothing find nothing to write. Markers are rare pool work.
   */
  private async drainTxnIndex(): Promise<void> {
    const index = this.active.txnIndex;
    if (index === null) return;
    try {
      await index.drain();
    } catch (error) {
      throw this.failStop.failWith(error);
    }
    // The listener may have taken the log offline meanwhile (another index).
    this.failStop.checkWritable();
  }

  /** Records an aborted transaction in the active segment (the one holding its ABORT marker). */
  private readonly onAbortedTxn = (txn: AbortedTxn): void => {
    if (this.active.appendAbortedTxn(txn)) this.flusher.markDirDirty();
  };

  /** Log.appendAsFollower (documented there). */
  appendAsFollower(buffer: Buffer): Promise<AppendResult> {
    try {
      const result = this.followerOnCaller(buffer);
      if (result !== null) return Promise.resolve(result);
      return this.mutations.runPooled(this.followerReason, () => {
        this.failStop.checkWritable();
        const plan = planFollowerAppend(this.producerState, buffer, this.planContext(this.now()));
        return this.appendFollowerBatches(buffer, plan);
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Log.tryAppendAsFollower (documented there). */
  tryAppendAsFollower(buffer: Buffer): AppendResult | null {
    return this.followerOnCaller(buffer);
  }

  private followerOnCaller(buffer: Buffer): AppendResult | null {
    this.beforeAppend?.(buffer.length);
    this.failStop.checkWritable();
    if (this.mutations.pending > 0) {
      this.followerReason = 'pending';
      return null;
    }
    const nowMs = this.now();
    // Nothing is pending, so this is the plan the chain would make; it is pure until committed.
    const plan = planFollowerAppend(this.producerState, buffer, this.planContext(nowMs));
    const reason = this.followerPlacement(plan, nowMs);
    if (reason !== null) {
      this.followerReason = reason;
      return null;
    }
    this.placement.append.caller++;
    try {
      this.storeFollower(buffer, plan, nowMs);
    } catch (error) {
      throw this.failStop.failWith(error);
    }
    return followerResult(plan, this.positions.logStart);
  }

  private followerPlacement(plan: FollowerPlan, nowMs: number): PlacementReason | null {
    if (!this.writeQueue.ready) return 'init';
    for (const batch of plan.batches) {
      if (batch.isControl) return 'control';
      if (batch.isTransactional) return 'transactional';
      const epoch = batch.partitionLeaderEpoch;
      if (epoch >= 0 && this.epochCache.isUpdateNeeded(epoch, batch.baseOffset)) return 'epoch';
    }
    if (this.epochCache.hasUnwrittenChanges) return 'epoch';
    const last = plan.batches[plan.batches.length - 1] as RecordBatch;
    return this.storagePlacement(plan.sizeInBytes, plan.maxTimestamp, last.lastOffset, nowMs);
  }

  private async appendFollowerBatches(buffer: Buffer, plan: FollowerPlan): Promise<AppendResult> {
    const batches = plan.batches;
    const first = batches[0] as RecordBatch;
    const last = batches[batches.length - 1] as RecordBatch;
    const size = plan.sizeInBytes;
    const nowMs = this.now();
    try {
      for (const batch of batches) {
        const epoch = batch.partitionLeaderEpoch;
        if (epoch >= 0 && this.epochCache.isUpdateNeeded(epoch, batch.baseOffset)) await this.epochCache.assign(epoch, batch.baseOffset);
      }
      await this.settleEpoch(-1, 0);
      if (this.active.shouldRoll(size, plan.maxTimestamp, last.lastOffset, nowMs)) await this.local.roll(first.baseOffset, nowMs);
      await this.writeQueue.ensureRoom(size);
      this.storeFollower(buffer, plan, nowMs);
    } catch (error) {
      throw this.failStop.failWith(error);
    }
    return followerResult(plan, this.positions.logStart);
  }

  private storeFollower(buffer: Buffer, plan: FollowerPlan, nowMs: number): void {
    const last = plan.batches[plan.batches.length - 1] as RecordBatch;
    for (const batch of plan.batches) this.active.appendBatch(batch.sizeInBytes, batch.lastOffset, batch.maxTimestamp, nowMs);
    this.enqueueWrite(buffer.subarray(0, plan.sizeInBytes), last.lastOffset);
    commitProducerState(this.producerState, plan, last.lastOffset + 1, this.onAbortedTxn);
  }

  /** Queues accepted bytes (already booked in the active segment), caches them, and advances the log end offset. */
  private enqueueWrite(bytes: Buffer, lastOffset: number): void {
    this.writeQueue.enqueue(bytes, lastOffset);
    this.positions.logEnd = lastOffset + 1;
    this.metrics.appends++;
    this.metrics.appendedBytes += bytes.length;
    if (this.positions.logEnd - this.positions.durable >= this.config.flushIntervalMessages) this.flusher.request(this.positions.logEnd);
  }
}
