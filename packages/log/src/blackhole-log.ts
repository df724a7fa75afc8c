// BlackholeLog: a partition that accepts appends exactly as Log does and
// throws the record bytes away (franz-go kfake's BlackholeProduce,
// reference/redpanda-franz-krabka.md §2.3). Purpose: keep storage out of
// client produce-throughput benchmarks while the broker still answers like
// a real one.
//
// What runs, identically to Log (the same code: log/append-accounting.ts):
// record validation, the segment-size guard, offset assignment, the leader
// epoch and LogAppendTime patches, duplicate detection, idempotent and
// transactional sequence/epoch checks, transaction markers, the high
// watermark, open and unreplicated transactions and the LSO, and byte counts.
// What does not exist: segments, indexes, caches, snapshots, files. Appends
// are complete when accepted (written = durable = log end offset), and read()
// rejects with SEGLOG_ERR_LOG_BLACKHOLE_READ. No file is ever written, so
// there is no on-disk format.
//
// Invariants: logStartOffset ≤ highWatermark ≤ logEndOffset; appends are
// answered in call order (each is planned and committed synchronously).

import { assert } from '@seglog/common';
import type { BatchSummary } from '@seglog/records';
import {
  commitProducerState, followerResult, lastStableOffsetOf, leaderResult, planFollowerAppend, planLeaderBatch, planMarker, validateLeaderBatch,
} from './log/append-accounting.js';
import type { PlanContext, TxnMarkerOptions } from './log/append-accounting.js';
import { blackholeRead, logClosed } from './internal/log-errors.js';
import type { AppendResult, ReadOptions } from './log/log-types.js';
import type { LogConfig } from './log-config.js';
import type { FetchPlan } from './fetch-plan.js';
import { ProducerStateManager } from './producer/producer-state-manager.js';

export interface BlackholeLogOptions {
  readonly topic: string;
  readonly partition: number;
  /** Default 0. */
  readonly logStartOffset?: number;
  /** Wall clock in ms (tests inject one). Default Date.now. */
  readonly now?: () => number;
}

/** Counters; one object shape, updated in place. */
export interface BlackholeMetrics {
  appends: number;
  /** Bytes accepted (and discarded). */
  appendedBytes: number;
  /** Duplicates answered with their original offsets. */
  duplicates: number;
}

const RESOLVED: Promise<void> = Promise.resolve();

export class BlackholeLog {
  readonly config: LogConfig;
  readonly topic: string;
  readonly partition: number;
  /** A name for errors (there is no directory). */
  readonly dir: string;
  readonly metrics: BlackholeMetrics;
  readonly producerState: ProducerStateManager;
  private logEndOffsetValue: number;
  private highWatermarkValue: number;
  private logStartOffsetValue: number;
  private sizeValue: number;
  private closed: boolean;
  private readonly now: () => number;

  private constructor(config: LogConfig, options: BlackholeLogOptions) {
    const logStartOffset = options.logStartOffset ?? 0;
    assert(Number.isSafeInteger(logStartOffset) && logStartOffset >= 0, 'BlackholeLog: logStartOffset must be a non-negative safe integer');
    this.config = config;
    this.topic = options.topic;
    this.partition = options.partition;
    this.dir = `blackhole:${options.topic}-${options.partition}`;
    this.metrics = { appends: 0, appendedBytes: 0, duplicates: 0 };
    this.producerState = ProducerStateManager.inMemory(config.producerIdExpirationMs);
    this.producerState.updateMapEndOffset(logStartOffset);
    this.logEndOffsetValue = logStartOffset;
    this.highWatermarkValue = logStartOffset;
    this.logStartOffsetValue = logStartOffset;
    this.sizeValue = 0;
    this.closed = false;
    this.now = options.now ?? Date.now;
  }

  /** Async like Log.open, so callers can swap one for the other. */
  static open(config: LogConfig, options: BlackholeLogOptions): Promise<BlackholeLog> {
    return Promise.resolve(new BlackholeLog(config, options));
  }

  // ---- positions ---------------------------------------------------------

  get logEndOffset(): number {
    return this.logEndOffsetValue;
  }

  /** Nothing is written: every accepted offset counts as written. */
  get writtenOffset(): number {
    return this.logEndOffsetValue;
  }

  /** Nothing is stored: every accepted offset counts as durable. */
  get durableOffset(): number {
    return this.logEndOffsetValue;
  }

  get highWatermark(): number {
    return this.highWatermarkValue;
  }

  get lastStableOffset(): number {
    return lastStableOffsetOf(this.producerState, this.highWatermarkValue, this.logStartOffsetValue);
  }

  get logStartOffset(): number {
    return this.logStartOffsetValue;
  }

  /** Bytes accepted (what a Log of the same appends would hold, before retention). */
  get size(): number {
    return this.sizeValue;
  }

  get state(): 'open' | 'closed' {
    return this.closed ? 'closed' : 'open';
  }

  /** Sets the high watermark, clamped to [logStartOffset, logEndOffset]; returns the value set. */
  updateHighWatermark(offset: number): number {
    assert(Number.isSafeInteger(offset), 'BlackholeLog.updateHighWatermark: offset must be a safe integer');
    this.highWatermarkValue = Math.min(Math.max(offset, this.logStartOffsetValue), this.logEndOffsetValue);
    this.producerState.onHighWatermarkUpdated(this.highWatermarkValue);
    return this.highWatermarkValue;
  }

  written(offset: number): Promise<void> {
    assert(Number.isSafeInteger(offset), 'BlackholeLog.written: offset must be a safe integer');
    return RESOLVED;
  }

  durable(offset: number): Promise<void> {
    assert(Number.isSafeInteger(offset), 'BlackholeLog.durable: offset must be a safe integer');
    return RESOLVED;
  }

  // ---- append ------------------------------------------------------------

  /** Log.appendAsLeader without the write: same checks, offsets and answers. */
  appendAsLeader(buffer: Buffer, options: { readonly leaderEpoch: number }): Promise<AppendResult> {
    const nowMs = this.now();
    try {
      const summary: BatchSummary = validateLeaderBatch(buffer, this.config, nowMs);
      this.checkOpen();
      const plan = planLeaderBatch(this.producerState, summary, options.leaderEpoch, this.planContext(nowMs));
      if (plan.duplicate !== null) this.metrics.duplicates++;
      else this.accept(plan, plan.lastOffset, plan.sizeInBytes);
      return Promise.resolve(leaderResult(plan, this.logStartOffsetValue));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Log.appendMarker without the write (the marker still completes its transaction). */
  appendMarker(marker: TxnMarkerOptions): Promise<AppendResult> {
    assert(Number.isSafeInteger(marker.producerId) && marker.producerId >= 0, 'BlackholeLog.appendMarker: producerId must be a safe integer >= 0');
    try {
      this.checkOpen();
      const plan = planMarker(this.producerState, marker, this.planContext(this.now()));
      this.accept(plan, plan.lastOffset, plan.sizeInBytes);
      return Promise.resolve(leaderResult(plan, this.logStartOffsetValue));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Log.appendAsFollower without the write. */
  appendAsFollower(buffer: Buffer): Promise<AppendResult> {
    try {
      this.checkOpen();
      const plan = planFollowerAppend(this.producerState, buffer, this.planContext(this.now()));
      this.accept(plan, plan.lastOffset, plan.sizeInBytes);
      return Promise.resolve(followerResult(plan, this.logStartOffsetValue));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Blackhole reads are refused: the bytes were never kept. */
  read(offset: number, maxBytes: number, options: ReadOptions = {}): Promise<FetchPlan> {
    assert(Number.isSafeInteger(offset), 'BlackholeLog.read: offset must be a safe integer');
    assert(Number.isSafeInteger(maxBytes) && maxBytes >= 0, 'BlackholeLog.read: maxBytes must be a non-negative safe integer');
    void options;
    return Promise.reject(blackholeRead(this.dir, offset));
  }

  close(): Promise<void> {
    this.closed = true;
    return RESOLVED;
  }

  private accept(plan: Parameters<typeof commitProducerState>[1], lastOffset: number, sizeInBytes: number): void {
    this.logEndOffsetValue = lastOffset + 1;
    this.sizeValue += sizeInBytes;
    this.metrics.appends++;
    this.metrics.appendedBytes += sizeInBytes;
    commitProducerState(this.producerState, plan, lastOffset + 1, null);
  }

  private planContext(nowMs: number): PlanContext {
    return { dir: this.dir, config: this.config, logEndOffset: this.logEndOffsetValue, nowMs };
  }

  private checkOpen(): void {
    if (this.closed) throw logClosed(this.dir);
  }
}
