// Log: one partition's segmented log (reference/kafka-storage.md §11–§23).
//
// On disk: the partition directory holds `<base>.log/.index/.timeindex`
// segments (see segment.ts) and `leader-epoch-checkpoint`; this class never
// writes any other file. Checkpoints of the recovery point and log start
// offset belong to the caller (LogManager): it passes them to open() and
// reads `durableOffset` / `logStartOffset` to write them.
//
// Positions, each monotonic except through truncation:
//   logStartOffset ≤ highWatermark ≤ logEndOffset,
//   durableOffset ≤ writtenOffset ≤ logEndOffset.
// - logEndOffset: accepted (offsets assigned, queued to the writer).
// - writtenOffset: every byte of every batch below it is in the file.
// - durableOffset (the recovery point): covered by a completed fdatasync of
//   the .log files (and a directory fsync for segment files created since
//   the previous flush). Index files of sealed segments are synced in the
//   flush that first covers them; the active segment's indexes are not
//   synced on the hot path: recovery rebuilds every segment from
//   floor(recovery point).
// - highWatermark: set by the caller, clamped to [logStartOffset, logEndOffset].
//
// Concurrency: mutations (appends, truncation, retention, deleteRecords,
// close) run one at a time in call order through one promise chain, so
// appends complete in order. One flusher runs at a time (group commit); it
// is paused while a mutation deletes or truncates segments. Reads run
// concurrently and see only written bytes.
//
// Placement (ARCHITECTURE.md "Placement"): an append whose storage work can
// be queued without waiting runs on the caller, synchronously inside
// appendAsLeader/appendAsFollower (tryAppendAsLeader/tryAppendAsFollower
// return the result itself) — only when no mutation is pending, so it never
// overtakes a pooled one; every other append is a mutation whose body runs
// as a BlockingPool task. Reads of cached tail bytes are served on the
// caller, others on the pool. Write modes: buffered or direct, per segment
// (log/write-queue.ts). Fail-stop: any write, fsync, rename, truncate or
// checkpoint failure takes the log offline (log/fail-stop.ts).
//
// Structure (Kafka's storage module as the model). This class is Kafka's
// UnifiedLog: the public API, the positions, producer state, HW/LSO,
// truncation's effect on them, open and close. Below it:
// - LocalLog (local-log.ts): the segments on disk: roll, file reads,
//   segment-level truncation, deletion; over LogSegments (log-segments.ts),
//   the ordered collection with floor lookups.
// - log/log-appender.ts: validation, placement and storing of appends.
// - log/log-reader.ts: reads as fetch plans (tail cache or file).
// - log/write-queue.ts: the active segment's writer and reservation.
// - log/log-flusher.ts: group commit (fdatasync rounds, flush.ms).
// - log/log-retention.ts: deleteOldSegments, deleteRecords.
// - log/log-truncation.ts: truncateTo, truncateFullyAndStartAt.
// - log/log-acks.ts: written(), durable() and the full flush.
// - log/log-closer.ts: close's flush, seal of the active segment and release.
// - log/mutation-queue.ts, log/fail-stop.ts: the call-order chain
//   of mutations and the I/O-error funnel every collaborator shares.
// - log/log-positions.ts: the positions and state they all read.
// - log/log-parts.ts: how the collaborators above are made and wired.

import { sealedFactsOf } from '../log-dir/sealed-sizes.js';
import type { SealedFacts } from '../log-dir/sealed-sizes.js';
import { assert } from '@seglog/common';
import { BlockingPool } from '@seglog/io';
import type { Io } from '@seglog/io';
import type { FetchPlan } from '../fetch-plan.js';
import { lastStableOffsetOf } from './append-accounting.js';
import type { TxnMarkerOptions } from './append-accounting.js';
import { loadLog } from '../recovery/log-loader.js';
import type { FailStop } from './fail-stop.js';
import type { LogAppender } from './log-appender.js';
import type { MutationQueue } from './mutation-queue.js';
import { LogPositions } from './log-positions.js';
import type { LogReader } from './log-reader.js';
import type { LogRetention } from './log-retention.js';
import type { LogTruncation } from './log-truncation.js';
import type { LogAcks } from './log-acks.js';
import type { LogCloser } from './log-closer.js';
import { buildLogParts } from './log-parts.js';
import type { LogFlusher } from './log-flusher.js';
import type { WriteQueue } from './write-queue.js';
import { newPlacementMetrics, snapshotPlacement } from './placement.js';
import type { PlacementMetrics } from './placement.js';
import type { LeaderEpochCache } from '../checkpoint/leader-epoch-cache.js';
import type { LogConfig } from '../log-config.js';
import type { ActiveWriteMode, AppendResult, LogMetrics, LogOpenOptions, LogState, ReadOptions } from './log-types.js';
import type { LocalLog } from './local-log.js';
import { rollJitter } from './local-log.js';
import type { LogSegments } from './log-segments.js';
import type { CleanerAccess } from '../cleaner/cleaner-access.js';
import type { Segment } from '../segment/segment.js';
import type { TimestampLookup } from '../segment/segment.js';
import type { ProducerStateManager } from '../producer/producer-state-manager.js';
import { TailCache } from '../cache/tail-cache.js';

export type { CorruptionPolicy } from '../recovery/log-loader.js';
export { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from './log-types.js';
export type { ActiveWriteMode, AppendResult, DirectFallback, LogMetrics, LogOpenOptions, LogState, ReadOptions, TailCacheOptionsForLog } from './log-types.js';
export type { TxnMarkerOptions } from './append-accounting.js';
export type { PlacementMetrics, PlacementReasons, PlacementReason } from './placement.js';

const noop = (): void => undefined;
/**
 * The leader epoch of an unreplicated append (Kafka's
 * NO_PARTITION_LEADER_EPOCH, -1): stamped into the batch, never assigned in
 * the leader-epoch cache, so it never writes (or fsyncs) the checkpoint.
 * One shared object: the default costs no allocation per append.
 */
const UNREPLICATED: { readonly leaderEpoch: number } = Object.freeze({ leaderEpoch: -1 });
const MiB = 1024 * 1024;
const DEFAULT_TAIL_CACHE_BYTES = 8 * MiB;

export class Log {
  readonly io: Io;
  readonly dir: string;
  readonly config: LogConfig;
  readonly topic: string;
  readonly partition: number;
  readonly metrics: LogMetrics;
  readonly epochCache: LeaderEpochCache;
  /** Idempotent/transactional producer state (the log drives it; read it, do not mutate it). */
  readonly producerState: ProducerStateManager;
  /** Where appends and reads ran, and why: the live counters (one shape, updated in place); placementSnapshot() copies them. */
  readonly placement: PlacementMetrics;
  /** The newest bytes of the active segment (read it for metrics; the log drives it). */
  readonly tailCache: TailCache;
  readonly pool: BlockingPool;
  private readonly positions: LogPositions;
  private readonly failStop: FailStop;
  /** Mutations queued or running on the chain (the caller path needs 0). */
  private readonly mutations: MutationQueue;
  private readonly segments: LogSegments;
  private readonly writeQueue: WriteQueue;
  private readonly local: LocalLog;
  private readonly retention: LogRetention;
  private readonly truncation: LogTruncation;
  private readonly acks: LogAcks;
  private readonly closer: LogCloser;
  private readonly reader: LogReader;
  private readonly appender: LogAppender;
  private readonly flusher: LogFlusher;
  private readonly now: () => number;

  private constructor(io: Io, dir: string, config: LogConfig, options: LogOpenOptions, loaded: Awaited<ReturnType<typeof loadLog>>) {
    this.io = io;
    this.dir = dir;
    this.config = config;
    this.topic = options.topic;
    this.partition = options.partition;
    this.metrics = { appends: 0, appendedBytes: 0, writes: 0, flushes: 0, writeSyncAcks: 0, dirSyncs: 0, rolls: 0, deletedSegments: 0, directSegments: 0, directFallbacks: 0 };
    this.epochCache = loaded.epochCache;
    this.producerState = loaded.producerState;
    this.placement = newPlacementMetrics();
    const cacheOptions = options.tailCache ?? {};
    this.tailCache = new TailCache({
      maxBytes: cacheOptions.maxBytes ?? DEFAULT_TAIL_CACHE_BYTES,
      ...(cacheOptions.chunkBytes === undefined ? {} : { chunkBytes: cacheOptions.chunkBytes }),
      ...(cacheOptions.budget === undefined ? {} : { budget: cacheOptions.budget }),
    });
    this.pool = options.pool ?? new BlockingPool({ concurrency: 4, maxQueued: 4096, reservedQueued: 64 });
    this.positions = new LogPositions(loaded);
    this.now = options.now ?? Date.now;
    const parts = buildLogParts({
      io, dir, config, options, segments: loaded.segments, positions: this.positions, tailCache: this.tailCache,
      epochCache: this.epochCache, producerState: this.producerState, metrics: this.metrics, placement: this.placement,
      pool: this.pool, where: this, now: this.now,
    });
    this.failStop = parts.failStop;
    this.mutations = parts.mutations;
    this.segments = parts.segments;
    this.writeQueue = parts.writeQueue;
    this.local = parts.local;
    this.retention = parts.retention;
    this.acks = parts.acks;
    this.truncation = parts.truncation;
    this.closer = parts.closer;
    this.reader = parts.reader;
    this.appender = parts.appender;
    this.flusher = parts.flusher;
  }

  /** Opens (creating, loading and if needed recovering) the log in `dir`. */
  static async open(io: Io, dir: string, config: LogConfig, options: LogOpenOptions): Promise<Log> {
    assert(options.recoveryPoint === null || (Number.isSafeInteger(options.recoveryPoint) && options.recoveryPoint >= 0), 'Log.open: recoveryPoint must be null or a non-negative safe integer');
    assert(Number.isSafeInteger(options.logStartOffset) && options.logStartOffset >= 0, 'Log.open: logStartOffset must be a non-negative safe integer');
    const now = options.now ?? Date.now;
    const random = options.random ?? Math.random;
    const loaded = await loadLog(io, dir, config, {
      recoveryPoint: options.recoveryPoint,
      logStartOffset: options.logStartOffset,
      hadCleanShutdown: options.hadCleanShutdown,
      ...(options.sealedSizes === undefined ? {} : { sealedSizes: options.sealedSizes }),
      onCorruption: options.onCorruption ?? 'fail',
      nowMs: now(),
      jitter: () => rollJitter(config, random),
    });
    const log = new Log(io, dir, config, options, loaded);
    try {
      log.tailCache.roll(log.active.size);
      await log.writeQueue.activate(log.active);
    } catch (error) {
      await log.closer.release().catch(noop);
      throw error;
    }
    return log;
  }

  /** A plain, deeply frozen copy of `placement` (compare phases with two snapshots). */
  placementSnapshot(): PlacementMetrics {
    return snapshotPlacement(this.placement);
  }

  /** How the active segment is written now ('direct' may fall back to 'buffered' per segment). */
  get writeMode(): ActiveWriteMode {
    return this.writeQueue.mode;
  }

  // ---- positions ---------------------------------------------------------

  get logEndOffset(): number {
    return this.positions.logEnd;
  }

  get writtenOffset(): number {
    return this.positions.written;
  }

  /** The recovery point: everything below it is durable. */
  get durableOffset(): number {
    return this.positions.durable;
  }

  get highWatermark(): number {
    return this.positions.highWatermark;
  }

  /**
   * The last stable offset (§17): the first offset of the earliest open (or
   * completed but not yet replicated) transaction, clamped to the log start
   * offset, if it is below the high watermark; else the high watermark.
   */
  get lastStableOffset(): number {
    return lastStableOffsetOf(this.producerState, this.positions.highWatermark, this.positions.logStart);
  }

  get logStartOffset(): number {
    return this.positions.logStart;
  }

  get state(): LogState {
    return this.positions.state;
  }

  /** The first I/O failure (offline), or undefined. */
  get failureCause(): unknown {
    return this.positions.failure;
  }

  /** Base offsets of the segments, ascending. */
  segmentBaseOffsets(): number[] {
    return this.segments.baseOffsets();
  }

  /** What a clean close records of the sealed segments (log-dir/sealed-sizes.ts). */
  sealedFacts(): Array<readonly [number, SealedFacts]> {
    return sealedFactsOf(this.segments.all());
  }

  get numberOfSegments(): number {
    return this.segments.length;
  }

  /** Sum of the segments' logical sizes. */
  get size(): number {
    return this.segments.sizeInBytes;
  }

  /** Sets the high watermark, clamped to [logStartOffset, logEndOffset]; returns the value set. */
  updateHighWatermark(offset: number): number {
    assert(Number.isSafeInteger(offset), 'Log.updateHighWatermark: offset must be a safe integer');
    this.positions.highWatermark = Math.min(Math.max(offset, this.positions.logStart), this.positions.logEnd);
    this.producerState.onHighWatermarkUpdated(this.positions.highWatermark);
    return this.positions.highWatermark;
  }

  /**
   * Resolves once the record at `offset` is in the file (writtenOffset >
   * offset). Offline, only records durable before the failure still answer
   * (nothing is acknowledged past a failure).
   */
  written(offset: number): Promise<void> {
    return this.acks.written(offset);
  }

  /** Resolves once the record at `offset` is durable (durableOffset > offset); starts a flush if none runs. */
  durable(offset: number): Promise<void> {
    return this.acks.durable(offset);
  }

  // ---- append ----------------------------------------------------------

  /**
   * Appends one producer batch: validation (Kafka's order), offsets assigned
   * in place from the log end offset, leader epoch stamped, LogAppendTime
   * restamped. The log takes ownership of `buffer`. Resolves when the batch
   * is accepted (queued for writing); use written()/durable() to wait for
   * more. A rejected batch changes nothing. Placed on the caller (the
   * returned promise is already resolved, nothing was awaited) when the
   * rules allow, else on the pool; a full queue rejects with the retriable
   * SEGLOG_ERR_LOG_QUEUE_FULL. `leaderEpoch` is the replication epoch
   * (Kafka's partition leader epoch); omit it for a log that is not
   * replicated: -1 is stamped and the leader-epoch checkpoint is never
   * written, so no append pays a checkpoint fsync for it.
   */
  appendAsLeader(buffer: Buffer, options: { readonly leaderEpoch?: number } = UNREPLICATED): Promise<AppendResult> {
    return this.appender.appendAsLeader(buffer, options.leaderEpoch === undefined ? UNREPLICATED : options as { readonly leaderEpoch: number });
  }

  /**
   * The synchronous form of appendAsLeader: the result when the append runs
   * on the caller; null when it must go to the pool (nothing changed: call
   * appendAsLeader with the same, unchanged buffer next, which reuses this
   * validation). Invalid batches throw.
   */
  tryAppendAsLeader(buffer: Buffer, options: { readonly leaderEpoch?: number } = UNREPLICATED): AppendResult | null {
    return this.appender.tryAppendAsLeader(buffer, options.leaderEpoch === undefined ? UNREPLICATED : options as { readonly leaderEpoch: number });
  }

  /**
   * Appends a transaction marker (WriteTxnMarkers, coordinator origin): a
   * COMMIT or ABORT control batch for `producerId` at the log end offset. Only
   * the producer epoch (SEGLOG_ERR_PRODUCER_FENCED_EPOCH) and the coordinator
   * epoch (SEGLOG_ERR_PRODUCER_COORDINATOR_FENCED) are checked. A marker that
   * closes a transaction completes it; an aborted one is recorded in the
   * active segment's .txnindex. A marker with no open transaction is written
   * but completes nothing. Always pool work.
   */
  appendMarker(marker: TxnMarkerOptions): Promise<AppendResult> {
    return this.appender.appendMarker(marker);
  }

  /**
   * Appends leader-assigned batches verbatim (replication): framing and CRC
   * checked, offsets increasing and starting at or above the log end offset
   * (gaps allowed), leader epochs taken from each batch, producer state
   * replayed without sequence checks. Bytes after the last complete batch
   * are ignored. Placed like appendAsLeader; every batch's epoch is checked.
   */
  appendAsFollower(buffer: Buffer): Promise<AppendResult> {
    return this.appender.appendAsFollower(buffer);
  }

  /** The synchronous form of appendAsFollower: the result on the caller, or null (nothing changed). */
  tryAppendAsFollower(buffer: Buffer): AppendResult | null {
    return this.appender.tryAppendAsFollower(buffer);
  }

  // ---- roll --------------------------------------------------------------

  /** Rolls now (tests, tools, retention): a new empty active segment at the log end offset. */
  forceRoll(): Promise<void> {
    return this.mutations.run(async () => {
      this.failStop.checkWritable();
      if (this.active.isEmpty) return;
      try {
        await this.local.roll(this.positions.logEnd, this.now());
      } catch (error) {
        throw this.failStop.failWith(error);
      }
    });
  }

  // ---- flush / group commit --------------------------------------------

  /**
   * Makes everything accepted so far durable: waits for queued appends,
   * fdatasyncs the .log files and the directory if needed.
   */
  flush(): Promise<void> {
    return this.mutations.run(() => this.acks.flushAll());
  }

  // ---- read --------------------------------------------------------------

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
    return this.reader.read(offset, maxBytes, options);
  }

  /** The synchronous form of read: the plan when the caller can serve it, else null (read() goes to the pool). Throws read()'s errors. */
  tryRead(offset: number, maxBytes: number, options: ReadOptions = {}): FetchPlan | null {
    return this.reader.tryRead(offset, maxBytes, options);
  }

  /**
   * Kafka's offsetsForTimes: EARLIEST (-2) → log start offset, LATEST (-1)
   * → log end offset; otherwise the first record with timestamp ≥ target
   * (in the first segment whose largest timestamp reaches it), or null.
   */
  offsetForTimestamp(timestamp: number): Promise<TimestampLookup | null> {
    return this.reader.offsetForTimestamp(timestamp);
  }

  // ---- truncation ------------------------------------------------------

  /**
   * Follower truncation (§18): removes every batch with lastOffset ≥ offset
   * (the whole batch holding `offset`); LEO becomes `offset`. Resolves false
   * when offset ≥ logEndOffset (nothing to do).
   */
  truncateTo(offset: number): Promise<boolean> {
    assert(Number.isSafeInteger(offset) && offset >= 0, 'Log.truncateTo: offset must be a non-negative safe integer');
    return this.mutations.run(() => {
      this.failStop.checkWritable();
      return this.truncation.truncateTo(offset);
    });
  }

  /** Deletes every segment and starts empty at `offset` (§18); logStartOffset defaults to `offset`. */
  truncateFullyAndStartAt(offset: number, logStartOffset?: number): Promise<void> {
    assert(Number.isSafeInteger(offset) && offset >= 0, 'Log.truncateFullyAndStartAt: offset must be a non-negative safe integer');
    return this.mutations.run(() => {
      this.failStop.checkWritable();
      return this.truncation.replaceAllSegments(offset, logStartOffset);
    });
  }

  // ---- retention -------------------------------------------------------

  /**
   * Kafka's deleteOldSegments (§19): start-offset breach, then size
   * (retentionBytes ≥ 0), then time (retentionMs ≥ 0). Only whole segments
   * entirely below the high watermark, oldest first; the log always keeps a
   * segment (it rolls first when every segment goes). Returns the count.
   */
  deleteOldSegments(nowMs?: number): Promise<number> {
    return this.mutations.run(async () => {
      this.failStop.checkWritable();
      return this.retention.deleteOldSegments(nowMs ?? this.now());
    });
  }

  /**
   * deleteRecords: advances the log start offset to `offset` (-1 = the high
   * watermark). Above the high watermark (or negative) is
   * SEGLOG_ERR_LOG_OFFSET_OUT_OF_RANGE. The data goes with the next
   * deleteOldSegments. Resolves with the log start offset.
   */
  deleteRecords(offset: number): Promise<number> {
    assert(Number.isSafeInteger(offset), 'Log.deleteRecords: offset must be a safe integer');
    return this.mutations.run(async () => {
      this.failStop.checkWritable();
      return this.retention.deleteRecords(offset);
    });
  }

  // ---- close / failure ---------------------------------------------------

  /**
   * Waits for queued appends and writes, makes everything durable, writes
   * the final time-index entry, trims the active segment's indexes (and a
   * preallocated .log), flushes the leader-epoch checkpoint and closes every
   * handle. An offline log only closes its handles. Plans not yet released
   * keep their .log handles until released.
   */
  close(): Promise<void> {
    if (this.positions.state === 'closed') return this.mutations.tail;
    return this.mutations.run(() => this.closer.close());
  }

  /**
   * Takes the log offline because its data directory failed elsewhere (a
   * checkpoint or marker write, another log: Kafka's LogDirFailureChannel).
   * Nothing more is acknowledged; reads of written data keep working.
   * No-op unless open.
   */
  markOffline(cause: unknown): void {
    this.failStop.fail(cause);
  }

  /** What the log cleaner (cleaner/) reads and swaps; for nothing else. */
  cleanerAccess(): CleanerAccess {
    return {
      io: this.io, dir: this.dir, topic: this.topic, partition: this.partition, config: this.config, segments: this.segments,
      positions: this.positions, producerState: this.producerState, flusher: this.flusher, local: this.local,
      failStop: this.failStop, now: this.now, runMutation: (op) => this.mutations.run(op),
    };
  }

  private get active(): Segment {
    return this.segments.active;
  }
}
