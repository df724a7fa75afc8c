// LocalLog: one partition's segments on local disk (Kafka's LocalLog): roll,
// reads of byte ranges from the segment files, truncation and deletion of
// segments. It knows offsets and files, not high watermarks, producers'
// sequences or the last stable offset: the Log (Kafka's UnifiedLog) above it
// owns those, sets the positions after a truncation and funnels every error
// of these methods into fail-stop.
//
// On disk: `<base>.log/.index/.timeindex/.txnindex` per segment (segment.ts).
// A removed segment's files are renamed to `.deleted` first, their handles
// dropped (a fetch plan still holding the .log keeps it open), and unlinked
// after file.delete.delay.ms; the caller fsyncs the directory (the flusher's
// syncDir) so a deleted set survives a power loss as a prefix.
//
// Invariants: the segments stay ordered with the active one last and never
// empty; only the active segment is written (through the WriteQueue). The
// callers run these methods inside a mutation, with the flusher paused
// around every removal or cut.

import { assert } from '@seglog/common';
import type { Io } from '@seglog/io';
import type { SegmentFileRef } from '../fetch-plan.js';
import type { LogFlusher } from './log-flusher.js';
import { isTransientResourceError, logResourceUnavailable } from '../internal/log-errors.js';
import type { LogPositions } from './log-positions.js';
import type { WriteQueue } from './write-queue.js';
import type { LogConfig } from '../log-config.js';
import type { LogSegments } from './log-segments.js';
import type { LogMetrics } from './log-types.js';
import type { ProducerStateManager } from '../producer/producer-state-manager.js';
import { Segment } from '../segment/segment.js';
import type { SegmentRange, TimestampLookup } from '../segment/segment.js';
import type { TailCache } from '../cache/tail-cache.js';
import type { AbortedTxn } from '../segment/txn-index.js';

const TIMER_MAX_MS = 0x7fffffff;
/** The largest segment tail readFileRange reads to see whether it holds only record-less batches (61 B each). */
const RECORDLESS_PROBE_BYTES = 4096;
/** v2 batch header fields: batchLength int32 at 8 (bytes after it), the records count int32 at 57. */
const BATCH_LENGTH_AT = 8;
const RECORDS_COUNT_AT = 57;
const BATCH_HEADER_BYTES = 61;

/** Whether every batch of `range` (whole batches) has a records count of 0. */
async function onlyRecordless(file: SegmentFileRef, range: SegmentRange): Promise<boolean> {
  const bytes = Buffer.allocUnsafe(range.length);
  if ((await file.file.pread(bytes, range.position, range.length)) !== range.length) return false;
  for (let at = 0; at < bytes.length;) {
    if (at + BATCH_HEADER_BYTES > bytes.length) return false;
    const batchLength = bytes.readInt32BE(at + BATCH_LENGTH_AT);
    if (batchLength < BATCH_HEADER_BYTES - 12 || bytes.readInt32BE(at + RECORDS_COUNT_AT) !== 0) return false;
    at += 12 + batchLength;
  }
  return true;
}

export interface LocalLogDeps {
  readonly io: Io;
  readonly dir: string;
  readonly config: LogConfig;
  readonly segments: LogSegments;
  readonly writeQueue: WriteQueue;
  readonly tailCache: TailCache;
  readonly flusher: LogFlusher;
  /** The roll takes Kafka's producer snapshot at the new base before creating the segment. */
  readonly producerState: ProducerStateManager;
  readonly positions: LogPositions;
  readonly metrics: LogMetrics;
  readonly now: () => number;
  readonly random: () => number;
  /** Fail-stop for background work (index write-backs, delayed unlinks). */
  readonly onFailure: (error: unknown) => void;
}

/** A byte range of one segment's .log, its handle retained for a fetch plan. */
export interface FileRange {
  readonly file: SegmentFileRef;
  readonly range: SegmentRange;
}

export class LocalLog {
  readonly segments: LogSegments;
  private readonly io: Io;
  private readonly dir: string;
  private readonly config: LogConfig;
  private readonly writeQueue: WriteQueue;
  private readonly tailCache: TailCache;
  private readonly flusher: LogFlusher;
  private readonly producerState: ProducerStateManager;
  private readonly positions: LogPositions;
  private readonly metrics: LogMetrics;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly onFailure: (error: unknown) => void;
  private readonly deleteTimers: Set<NodeJS.Timeout>;

  constructor(deps: LocalLogDeps) {
    this.segments = deps.segments;
    this.io = deps.io;
    this.dir = deps.dir;
    this.config = deps.config;
    this.writeQueue = deps.writeQueue;
    this.tailCache = deps.tailCache;
    this.flusher = deps.flusher;
    this.producerState = deps.producerState;
    this.positions = deps.positions;
    this.metrics = deps.metrics;
    this.now = deps.now;
    this.random = deps.random;
    this.onFailure = deps.onFailure;
    this.deleteTimers = new Set();
  }

  get active(): Segment {
    return this.segments.active;
  }

  // ---- roll --------------------------------------------------------------

  /**
   * Seals the active segment and starts a new one at max(expectedNextOffset,
   * logEndOffset): waits for the pending writes, writes the final time-index
   * entry, trims indexes (and a preallocated file), then requests a flush of
   * everything below the new base (Kafka flushes on roll asynchronously).
   */
  async roll(expectedNextOffset: number, nowMs: number): Promise<void> {
    const old = this.active;
    const base = Math.max(expectedNextOffset, this.positions.logEnd);
    if (base === old.baseOffset) {
      assert(old.isEmpty, 'Log.roll: a non-empty segment already has this base offset');
      return;
    }
    assert(base > old.baseOffset, 'Log.roll: new base below the active segment');
    await this.writeQueue.drain();
    // Writer closed (direct: page padding trimmed), reservation trimmed to the logical end, then the indexes.
    const trimmed = this.writeQueue.trimChangesFile;
    await this.writeQueue.deactivate(true);
    // The flusher only syncs segments holding undurable data: make the trim durable here (one fdatasync per roll).
    if (trimmed) {
      await old.logFile.file.fdatasync();
      this.metrics.flushes++;
    }
    await old.onBecomeInactive();
    // The sealed segment's trimmed indexes become durable now: its data may
    // already be durable (no later flush covers it), and after a power loss
    // an index below the recovery point is trusted, not rebuilt. Found by
    // test/crash-points.test.ts (ENGINE BUG 2/2b).
    await old.flushIndexes();
    // Kafka's roll: a producer snapshot at the new base (committed state only), with the new segment.
    if (base > this.producerState.mapEndOffset) this.producerState.updateMapEndOffset(base);
    const segment = await this.createSegmentOrResume(old, base, nowMs);
    old.pinFiles(false);
    segment.setFailureListener(this.onFailure);
    this.segments.push(segment);
    this.tailCache.roll(0);
    this.writeQueue.setCacheBase(segment);
    await this.writeQueue.activate(segment);
    this.flusher.markDirDirty();
    this.metrics.rolls++;
    this.flusher.request(base);
    // The first reservation step of the new segment (pool work: rolls run inside pooled appends).
    await this.writeQueue.growReservation(1);
  }

  /**
   * The roll's producer snapshot (Kafka's, at the new base: committed state
   * only) and new segment. When the snapshot or the segment's files cannot
   * be created for want of descriptors or space (nothing of any batch written
   * yet; a snapshot is derived state, rewritten by the next roll), the sealed
   * `old` segment becomes the active one again (index capacity restored, a
   * new writer) and the append is refused with the retriable
   * SEGLOG_ERR_LOG_RESOURCE_UNAVAILABLE: the log stays open, the next append
   * rolls again.
   */
  private async createSegmentOrResume(old: Segment, base: number, nowMs: number): Promise<Segment> {
    try {
      await this.producerState.takeSnapshot();
      return await Segment.create(this.io, this.dir, base, this.config, { nowMs, rollJitterMs: rollJitter(this.config, this.random) });
    } catch (error) {
      if (!isTransientResourceError(error)) throw error;
      await old.resizeIndexes();
      await this.writeQueue.activate(old);
      throw logResourceUnavailable(this.dir, `creating segment ${base}`, error);
    }
  }

  // ---- truncation --------------------------------------------------------

  /**
   * Cuts the segments to `offset` (≥ the first base): segments above it are
   * deleted, the one holding it truncated and made active again. The caller
   * pauses the flusher and sets the positions.
   */
  async truncateTo(offset: number): Promise<void> {
    await this.writeQueue.drain();
    await this.writeQueue.deactivate(false);
    const doomed = this.segments.removeAbove(offset);
    for (const segment of doomed) await this.deleteSegment(segment);
    const active = this.active;
    await active.truncateTo(offset, this.now());
    await active.resizeIndexes();
    // Lent cache bytes stay valid for their readers; the window keeps exactly the bytes below the cut.
    if (doomed.length > 0) this.tailCache.roll(active.size);
    else this.tailCache.truncate(active.size);
    await this.writeQueue.activate(active);
    if (doomed.length > 0) await this.flusher.syncDir();
  }

  /** Deletes every segment and starts one empty segment at `offset`. The caller pauses the flusher. */
  async replaceAll(offset: number): Promise<void> {
    await this.writeQueue.drain();
    await this.writeQueue.deactivate(false);
    const doomed = this.segments.removeAll();
    for (const segment of doomed) await this.deleteSegment(segment);
    const segment = await Segment.create(this.io, this.dir, offset, this.config, { nowMs: this.now(), rollJitterMs: rollJitter(this.config, this.random) });
    segment.setFailureListener(this.onFailure);
    this.segments.push(segment);
    this.tailCache.roll(0);
    await this.writeQueue.activate(segment);
    await this.flusher.syncDir();
  }

  // ---- deletion ----------------------------------------------------------

  /**
   * Renames a removed segment's files to `.deleted`, drops its handles (a
   * plan still holding the .log keeps it open) and schedules the unlink
   * after fileDeleteDelayMs. The caller fsyncs the directory.
   */
  async deleteSegment(segment: Segment): Promise<void> {
    await segment.renameToDeleted();
    await this.retireRenamed(segment);
  }

  /** deleteSegment's second half, for a segment whose files are already `.deleted` (the cleaner's swap). */
  async retireRenamed(segment: Segment): Promise<void> {
    await segment.close();
    this.metrics.deletedSegments++;
    const paths = (['log', 'index', 'timeindex', 'txnindex'] as const).map((kind) => Segment.path(this.dir, segment.baseOffset, kind, 'deleted'));
    const timer = setTimeout(() => {
      this.deleteTimers.delete(timer);
      void this.removeFiles(paths);
    }, Math.min(this.config.fileDeleteDelayMs, TIMER_MAX_MS));
    timer.unref();
    this.deleteTimers.add(timer);
  }

  private async removeFiles(paths: readonly string[]): Promise<void> {
    if (this.positions.state === 'closed') return;
    try {
      for (const path of paths) if (await this.io.exists(path)) await this.io.unlink(path);
    } catch (error) {
      this.onFailure(error);
    }
  }

  /** Close: the pending delayed unlinks are dropped. */
  cancelDeletes(): void {
    for (const timer of this.deleteTimers) clearTimeout(timer);
    this.deleteTimers.clear();
  }

  // ---- reads -------------------------------------------------------------

  /**
   * Whole batches from the batch holding `offset`, below `boundOffset`, from
   * the first segment at or after the floor segment that has any: the range
   * with its .log handle retained (release it with the plan), or null (an
   * empty read). Pool work: the buffered handle, never past the written position.
   *
   * `skipRecordless`: a range that is the whole rest of a sealed segment,
   * at most RECORDLESS_PROBE_BYTES, and made only of batches with no records
   * (what the cleaner leaves: a producer's last batch, a cleaned group's last
   * batch) is passed over for the next segment's batches, as a consumer needs
   * nothing from them (Kafka's empty cleaned segments are passed over the
   * same way). A client that learns its next offset only from records
   * (kafkajs 2.2.4) otherwise fetches such a segment's offset forever.
   */
  async readFileRange(offset: number, maxBytes: number, boundOffset: number, minOneMessage: boolean, skipRecordless = false, into: Buffer | null = null): Promise<FileRange | null> {
    let segment: Segment | undefined = this.segments.at(this.segments.floorIndex(offset));
    while (segment !== undefined) {
      const file = segment.logFile.retain();
      let kept = false;
      try {
        const range = await segment.readRange(offset, maxBytes, boundOffset, minOneMessage, into);
        const next: Segment | undefined = this.segments.higher(segment.baseOffset);
        if (range !== null) {
          if (range.length === 0) return null;
          const passOver = skipRecordless && next !== undefined && range.nextOffset < boundOffset &&
            range.length <= RECORDLESS_PROBE_BYTES && range.position + range.length === segment.readablePosition &&
            (await onlyRecordless(file, range));
          if (!passOver) {
            kept = true;
            return { file, range };
          }
        }
        segment = next;
      } finally {
        if (!kept) await file.release();
      }
    }
    return null;
  }

  /**
   * Kafka's collectAbortedTransactions: the aborted transactions with
   * lastOffset ≥ fetchOffset and firstOffset < upperBound, from the .txnindex
   * of the segment holding fetchOffset onward, until an index reports the
   * search complete (an entry whose LSO reaches upperBound).
   */
  collectAbortedTxns(fetchOffset: number, upperBound: number): AbortedTxn[] {
    const found: AbortedTxn[] = [];
    for (let i = this.segments.floorIndex(fetchOffset); i < this.segments.length; i++) {
      const index = (this.segments.at(i) as Segment).txnIndex;
      if (index === null || index.isEmpty()) continue;
      const result = index.collectAbortedTxns(fetchOffset, upperBound);
      for (const txn of result.txns) found.push(txn);
      if (result.isComplete) break;
    }
    return found;
  }

  /** The first record with timestamp ≥ `timestamp` at or above the log start offset, in the first segment whose largest timestamp reaches it, or null. */
  async findOffsetByTimestamp(timestamp: number): Promise<TimestampLookup | null> {
    for (const segment of this.segments.all().slice()) {
      if (segment.stateKnown && segment.largestTimestamp < timestamp) continue;
      if (segment.logFile.isClosed) continue;
      const file = segment.logFile.retain();
      try {
        // A clean open left a sealed segment's max timestamp unknown (segment-state.ts).
        await segment.ensureState();
        if (segment.largestTimestamp < timestamp) continue;
        const found = await segment.findOffsetByTimestamp(timestamp, this.positions.logStart);
        if (found !== null) return found;
      } finally {
        await file.release();
      }
    }
    return null;
  }
}

/** The per-segment roll jitter (segment.jitter.ms, bounded by segment.ms). */
export function rollJitter(config: LogConfig, random: () => number): number {
  const bound = Math.min(config.segmentJitterMs, config.segmentMs);
  return bound <= 0 ? 0 : Math.floor(random() * bound);
}
