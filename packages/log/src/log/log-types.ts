// The public types of a Log (options, results, counters) and Kafka's
// ListOffsets sentinels, in their own module so the append accounting and
// BlackholeLog can name them without importing the Log class (no import
// circle between log.ts and its collaborators).

import type { SealedFacts } from '../log-dir/sealed-sizes.js';
import type { AlignedArena, BlockingPool } from '@seglog/io';
import type { IsolationLevel } from '../fetch-plan.js';
import type { CorruptionPolicy } from '../recovery/log-loader.js';
import type { BufferedWriterLimits } from '../segment/segment-writer.js';
import type { TailCacheBudget } from '../cache/tail-cache.js';

export interface TailCacheOptionsForLog {
  /** Chunk memory of this log's cache (pinned, unwritten bytes excepted). Default 8 MiB. */
  readonly maxBytes?: number;
  /** Bytes per cache chunk. Default 256 KiB. */
  readonly chunkBytes?: number;
  /** The budget shared by the logs of a LogManager. */
  readonly budget?: TailCacheBudget;
}

/** Why a direct-mode segment is written buffered (LogOpenOptions.onDirectFallback). */
export interface DirectFallback {
  /** Base offset of the segment written buffered. */
  readonly segmentBaseOffset: number;
  /** 'unsupported': the file system refused O_DIRECT; 'descriptors': no descriptor for the second handle; 'staging': no aligned staging chunk free. */
  readonly reason: 'unsupported' | 'descriptors' | 'staging';
  /** The typed error behind it (SEGLOG_ERR_IO_DIRECT_UNSUPPORTED, SEGLOG_ERR_IO_TOO_MANY_FILES, SEGLOG_ERR_LOG_STAGING_EXHAUSTED). */
  readonly cause: unknown;
}

export interface LogOpenOptions {
  readonly topic: string;
  readonly partition: number;
  /**
   * The checkpointed recovery point: everything below it was durable. null:
   * unknown (the checkpoint could not be read): recovery scans every segment
   * and refuses to cut anything but a zero tail.
   */
  readonly recoveryPoint: number | null;
  /** The checkpointed log start offset. */
  readonly logStartOffset: number;
  readonly hadCleanShutdown: boolean;
  /** What the clean close knew of the sealed segments, by base offset (log-dir/sealed-sizes.ts): they are opened without a stat. */
  readonly sealedSizes?: ReadonlyMap<number, SealedFacts>;
  /** Wall clock in ms (tests inject one). Default Date.now. */
  readonly now?: () => number;
  /** Random in [0, 1) for the per-segment roll jitter. Default Math.random. */
  readonly random?: () => number;
  /**
   * Damage below the recovery point after an unclean stop: 'fail' (default)
   * throws SEGLOG_ERR_LOG_CORRUPTION and changes nothing; 'truncate' cuts the
   * log there as Kafka does (an operator's explicit choice).
   */
  readonly onCorruption?: CorruptionPolicy;
  /** Bounds of one coalesced write (tests use small ones). */
  readonly writerLimits?: BufferedWriterLimits;
  /**
   * Called (synchronously) with the buffer's length before an append is
   * validated; throwing rejects the append and changes nothing. LogManager's
   * free-space guard and offline data directory use it.
   */
  readonly beforeAppend?: (bytes: number) => void;
  /** Called once when the log goes offline (LogManager takes its data directory offline). */
  readonly onOffline?: (cause: unknown) => void;
  /**
   * Called (synchronously) with each retriable SEGLOG_ERR_LOG_RESOURCE_UNAVAILABLE
   * refusal of a mutation (out of descriptors or space before any byte was
   * at risk); the log stays open. LogManager reports them, rate-limited.
   */
  readonly onRefusal?: (refusal: unknown) => void;
  /**
   * Called (synchronously) each time a segment of a direct-mode log falls
   * back to buffered writes (also counted in metrics.directFallbacks).
   * Default: nothing. A throwing hook is ignored.
   */
  readonly onDirectFallback?: (fallback: DirectFallback) => void;
  /** Pool for blocking work (LogManager shares one). Default: a private pool (4 running, 4096 queued), closed with the log. */
  readonly pool?: BlockingPool;
  /** Staging memory of direct-mode writers (LogManager shares one). Default: a private 8 × 1 MiB arena made for the first direct segment. */
  readonly arena?: AlignedArena;
  readonly tailCache?: TailCacheOptionsForLog;
  /** Reservation step when config.preallocate is on. Default min(16 MiB, segment.bytes rounded up to the alignment). */
  readonly reservationStepBytes?: number;
  /** Mutations (pooled appends, truncations, …) that may wait per log; more are refused with SEGLOG_ERR_LOG_QUEUE_FULL. Default 4096. */
  readonly maxPendingMutations?: number;
}

export interface AppendResult {
  readonly firstOffset: number;
  readonly lastOffset: number;
  readonly maxTimestamp: number;
  readonly offsetOfMaxTimestamp: number;
  /** The broker time stamped into a LogAppendTime batch, else -1. */
  readonly logAppendTime: number;
  readonly logStartOffset: number;
  readonly recordsCount: number;
  readonly sizeInBytes: number;
}

export interface ReadOptions {
  /** Only batches whose last offset is below this; default (and at most) writtenOffset. */
  readonly maxOffset?: number;
  /** read_committed: only batches below the last stable offset, with the aborted transactions overlapping them. */
  readonly isolation?: IsolationLevel;
  /** Return the first batch even when it is larger than maxBytes (Kafka's rule). Default true. */
  readonly minOneMessage?: boolean;
  /**
   * Pass over the rest of a sealed segment when it is only batches with no
   * records (at most 4 KiB of them: the empty batches the cleaner keeps) and
   * read the next segment instead. For consumers, which need nothing from
   * them; a client that finds no record in an answer may fetch the same
   * offset again forever (kafkajs 2.2.4). Default false: every batch, as a
   * replica needs them.
   */
  readonly skipRecordless?: boolean;
  /**
   * A buffer a file read may read the range into (one pread that also
   * checks the framing): when the whole range fits, the plan's file part
   * carries those bytes (`bytes`, a view of `into`), so a reader such as
   * PlanBatchReader does not read them again. Give at least maxBytes + 61
   * bytes. The caller must not reuse `into` while it uses the plan's bytes;
   * a read served from the tail cache ignores it.
   */
  readonly into?: Buffer;
}

export type LogState = 'open' | 'offline' | 'closed';

/** Counters; one object shape, updated in place. */
export interface LogMetrics {
  appends: number;
  appendedBytes: number;
  /** pwritev calls of the segment writers. */
  writes: number;
  /** .log fdatasync calls (rounds' and those carried by a write). */
  flushes: number;
  /** Writes that carried the fdatasync and acknowledged durable() waiters without a flush round. */
  writeSyncAcks: number;
  dirSyncs: number;
  rolls: number;
  deletedSegments: number;
  /** Segments written with O_DIRECT, and direct segments that fell back to buffered (no staging chunk, O_DIRECT refused). */
  directSegments: number;
  directFallbacks: number;
}

/** How the active segment is being written. */
export type ActiveWriteMode = 'buffered' | 'direct';

/** Kafka's ListOffsets sentinels. */
export const EARLIEST_TIMESTAMP = -2;
export const LATEST_TIMESTAMP = -1;
