// LogParts: the collaborators of one Log and how they are wired (log.ts:
// Kafka's UnifiedLog over LocalLog over LogSegments). No files of its own:
// every byte on disk is written by the parts it makes.
//
// Invariants:
// - Construction order is dependency order: the waiters and the fail-stop
//   funnel first, then the mutation chain, the segments (every segment and
//   the leader-epoch cache report index and checkpoint failures to the
//   funnel), the flusher, the write queue (a placeholder over the active
//   segment until Log.open activates it), the local log, and the parts that
//   only combine those (retention, acks, truncation, closer, reader,
//   appender). Each part gets only what it uses.
// - Going offline stops the flusher's timer, then tells the owner
//   (LogOpenOptions.onOffline).
// - The flusher's timer starts last, once every part exists.

import type { BlockingPool, Io } from '@seglog/io';
import type { TailCache } from '../cache/tail-cache.js';
import type { LeaderEpochCache } from '../checkpoint/leader-epoch-cache.js';
import type { LogConfig } from '../log-config.js';
import type { ProducerStateManager } from '../producer/producer-state-manager.js';
import type { Segment } from '../segment/segment.js';
import { DEFAULT_WRITER_LIMITS } from '../segment/segment-writer.js';
import { FailStop } from './fail-stop.js';
import { LocalLog } from './local-log.js';
import { LogAcks } from './log-acks.js';
import { LogAppender } from './log-appender.js';
import { LogCloser } from './log-closer.js';
import { LogFlusher } from './log-flusher.js';
import type { LogPositions } from './log-positions.js';
import { LogReader } from './log-reader.js';
import { LogRetention } from './log-retention.js';
import { LogSegments } from './log-segments.js';
import { LogTruncation } from './log-truncation.js';
import type { LogMetrics, LogOpenOptions } from './log-types.js';
import { MutationQueue } from './mutation-queue.js';
import { OffsetWaiters } from './offset-waiters.js';
import type { PlacementMetrics, PoolPlacement } from './placement.js';
import { WriteQueue } from './write-queue.js';

const MiB = 1024 * 1024;
const DEFAULT_RESERVATION_STEP_BYTES = 16 * MiB;
const DEFAULT_MAX_PENDING_MUTATIONS = 4096;

/** What the Log made or loaded itself (its public fields) and hands to its parts. */
export interface LogPartsInput {
  readonly io: Io;
  readonly dir: string;
  readonly config: LogConfig;
  readonly options: LogOpenOptions;
  /** The loaded segments, ascending (the last is the active one). */
  readonly segments: Segment[];
  readonly positions: LogPositions;
  readonly tailCache: TailCache;
  readonly epochCache: LeaderEpochCache;
  readonly producerState: ProducerStateManager;
  readonly metrics: LogMetrics;
  readonly placement: PlacementMetrics;
  readonly pool: BlockingPool;
  /** Where pool work runs and is counted (the Log itself). */
  readonly where: PoolPlacement;
  readonly now: () => number;
}

export interface LogParts {
  readonly failStop: FailStop;
  readonly mutations: MutationQueue;
  readonly segments: LogSegments;
  readonly writeQueue: WriteQueue;
  readonly local: LocalLog;
  readonly retention: LogRetention;
  readonly acks: LogAcks;
  readonly truncation: LogTruncation;
  readonly closer: LogCloser;
  readonly reader: LogReader;
  readonly appender: LogAppender;
  /** Group commit; the cleaner pauses it around a segment swap. */
  readonly flusher: LogFlusher;
}

/** Makes and wires the parts of one Log; the flusher's timer is running when it returns. */
export function buildLogParts(input: LogPartsInput): LogParts {
  const { io, dir, config, options, positions, tailCache, epochCache, producerState, metrics, placement, pool, where, now } = input;
  const random = options.random ?? Math.random;
  const writtenWaiters = new OffsetWaiters();
  const durableWaiters = new OffsetWaiters();
  const onOffline = options.onOffline ?? null;
  const failStop = new FailStop({
    dir, positions, writtenWaiters, durableWaiters,
    afterOffline: (cause) => {
      flusher.stopTimer();
      onOffline?.(cause);
    },
    onRefusal: options.onRefusal ?? null,
  });
  const mutations = new MutationQueue(dir, options.maxPendingMutations ?? DEFAULT_MAX_PENDING_MUTATIONS, where);
  const segments = new LogSegments(input.segments);
  for (const segment of segments.all()) segment.setFailureListener(failStop.onFailure);
  epochCache.setFailureListener(failStop.onFailure);
  const flusher = new LogFlusher({
    io, dir, config, positions, segments, durableWaiters,
    metrics, where, now, onFailure: failStop.onFailure,
  });
  // A placeholder over the active segment until activate() (Log.open) makes its writer and reservation.
  const writeQueue = new WriteQueue({
    io, dir, config, positions, tailCache, writtenWaiters,
    flusher, metrics, arena: options.arena ?? null,
    writerLimits: options.writerLimits ?? DEFAULT_WRITER_LIMITS,
    reservationStepBytes: options.reservationStepBytes ?? DEFAULT_RESERVATION_STEP_BYTES, onFailure: failStop.onFailure,
    onDirectFallback: options.onDirectFallback ?? null,
  }, segments.active);
  const local = new LocalLog({
    io, dir, config, segments, writeQueue, tailCache, flusher,
    producerState, positions, metrics, now, random,
    onFailure: failStop.onFailure,
  });
  const failWith = (error: unknown): unknown => failStop.failWith(error);
  const retention = new LogRetention({
    dir, config, positions, segments, local, flusher,
    producerState, epochCache, now, failWith,
  });
  const acks = new LogAcks({ positions, failStop, flusher, writeQueue, writtenWaiters, durableWaiters });
  const truncation = new LogTruncation({
    dir, positions, segments, local, flusher,
    producerState, epochCache, writtenWaiters,
    durableWaiters, now, failWith,
  });
  const closer = new LogCloser({
    dir, positions, segments, local, flusher, acks, failStop, producerState,
    writeQueue, tailCache, epochCache, writtenWaiters,
    durableWaiters, metrics, ownedPool: options.pool === undefined ? pool : null,
  });
  const reader = new LogReader({
    dir, positions, segments, local, writeQueue,
    tailCache, producerState, epochCache, where,
  });
  const appender = new LogAppender({
    dir, config, positions, segments, local, writeQueue,
    flusher, epochCache, producerState, placement,
    metrics, mutations, failStop, now,
    beforeAppend: options.beforeAppend ?? null,
  });
  flusher.startTimer();
  return { failStop, mutations, segments, writeQueue, local, retention, acks, truncation, closer, reader, appender, flusher };
}
