// LogFlusher: the group commit of one log. Each round captures the written
// offset, fdatasyncs the .log of every segment holding data in
// [durable, written) (and the directory when segment files were created or
// removed since the last directory fsync), then advances the durable
// position and releases every durable() waiter below it. One round runs at a
// time; waiters above it start the next round once their bytes are written.
//
// A write of the active segment may carry the fdatasync itself (one pool job,
// IoFile.pwritevDatasync): wantsSyncWith() decides as the write is issued,
// syncedByWrite() acknowledges when it completed — only when nothing but the
// active segment's file holds non-durable data, no directory fsync is due,
// the flusher is not paused and the active segment's due index write-backs
// have landed (deferred entries, fewer than a page: sparse-index.ts, are not
// waited for); otherwise the waiters stay for a round (which syncs again).
//
// Invariants: the durable position only advances after the fdatasync that
// covers it completed (never acknowledge before the sync, never retry a
// failed one: a failure is fail-stop through onFailure). Sealed segments'
// indexes are synced in the flush that first covers them (trusted below the
// recovery point); the active segment's are only drained (recovery rebuilds
// them). The flusher is paused (pause/resume, counted) while a mutation
// deletes or truncates segments, so a round never syncs a removed file.
// Owns: the flush target, the directory-dirty flag, the flush.ms timer.

import { assert } from '@seglog/common';
import { Priority } from '@seglog/io';
import type { Io } from '@seglog/io';
import type { LogConfig } from '../log-config.js';
import type { LogSegments } from './log-segments.js';
import type { LogMetrics } from './log-types.js';
import type { Segment } from '../segment/segment.js';
import type { LogPositions } from './log-positions.js';
import type { OffsetWaiters } from './offset-waiters.js';
import { runOnPool } from './placement.js';
import type { PoolPlacement } from './placement.js';
import { seams } from '../internal/test-seams.js';

const NEVER = Number.MAX_SAFE_INTEGER;
const TIMER_MAX_MS = 0x7fffffff;

export interface LogFlusherDeps {
  readonly io: Io;
  readonly dir: string;
  readonly config: LogConfig;
  readonly positions: LogPositions;
  readonly segments: LogSegments;
  readonly durableWaiters: OffsetWaiters;
  readonly metrics: LogMetrics;
  readonly where: PoolPlacement;
  readonly now: () => number;
  /** Fail-stop: the log goes offline. */
  readonly onFailure: (error: unknown) => void;
}

export class LogFlusher {
  private readonly io: Io;
  private readonly dir: string;
  private readonly config: LogConfig;
  private readonly positions: LogPositions;
  private readonly segments: LogSegments;
  private readonly durableWaiters: OffsetWaiters;
  private readonly metrics: LogMetrics;
  private readonly where: PoolPlacement;
  private readonly now: () => number;
  private readonly onFailure: (error: unknown) => void;
  private flushing: Promise<void> | null;
  /** Writes carrying the fdatasync issued and not yet completed (wantsSyncWith said yes). */
  private syncWrites: number;
  private paused: number;
  private target: number;
  private dirDirty: boolean;
  private lastFlushMs: number;
  private timer: NodeJS.Timeout | null;

  constructor(deps: LogFlusherDeps) {
    this.io = deps.io;
    this.dir = deps.dir;
    this.config = deps.config;
    this.positions = deps.positions;
    this.segments = deps.segments;
    this.durableWaiters = deps.durableWaiters;
    this.metrics = deps.metrics;
    this.where = deps.where;
    this.now = deps.now;
    this.onFailure = deps.onFailure;
    this.flushing = null;
    this.syncWrites = 0;
    this.paused = 0;
    this.target = 0;
    this.dirDirty = false;
    this.lastFlushMs = this.now();
    this.timer = null;
  }

  /** Asks for everything below `upTo` to become durable (flush.messages, roll, flush.ms). */
  request(upTo: number): void {
    if (upTo > this.target) this.target = upTo;
    this.maybeStart();
  }

  /** A truncation to `offset`: nothing above it is wanted any more. */
  clampTarget(offset: number): void {
    this.target = Math.min(this.target, offset);
  }

  /** Segment files were created or removed: the next round fsyncs the directory. */
  markDirDirty(): void {
    this.dirDirty = true;
  }

  get isDirDirty(): boolean {
    return this.dirDirty;
  }

  /** Fsyncs the directory now (the caller funnels a failure). */
  async syncDir(): Promise<void> {
    this.dirDirty = false;
    await this.io.fsyncDir(this.dir);
    this.metrics.dirSyncs++;
  }

  private wanted(): boolean {
    const written = this.positions.written;
    const durable = this.positions.durable;
    if (written <= durable) return false;
    const waiter = this.durableWaiters.minOffset();
    return (waiter !== undefined && waiter < written) || this.target > durable;
  }

  /**
   * Whether a write of `segment` whose last batch ends at `lastOffset` should
   * carry the fdatasync: a durable() waiter wants an offset it covers, or the
   * flush policy wants a flush, and the sync alone would make the log durable
   * up to its end (see syncedByWrite).
   */
  wantsSyncWith(segment: Segment, lastOffset: number): boolean {
    // One fdatasync of the file at a time: while a round's is in flight, a second one's success could be
    // seen before the first one's failure and acknowledge pages that failure lost (fsyncgate).
    if (this.flushing !== null || !this.syncAloneSuffices(segment)) return false;
    const waiter = this.durableWaiters.minOffset();
    const wanted = (waiter !== undefined && waiter <= lastOffset) || this.target > this.positions.durable;
    if (wanted) this.syncWrites++;
    return wanted;
  }

  /**
   * A write of `segment` that carried the fdatasync completed: every offset
   * below `upTo` is in its file and durable. Advances the durable position
   * and releases the waiters below it, unless something else still needs a
   * round (then the waiters wait for it).
   */
  syncedByWrite(segment: Segment, upTo: number): void {
    this.metrics.flushes++;
    this.syncWrites--;
    if (!this.syncAloneSuffices(segment) || !segment.indexesSettled) return;
    assert(upTo <= this.positions.written, 'LogFlusher.syncedByWrite: synced beyond the written position');
    this.metrics.writeSyncAcks++;
    if (upTo > this.positions.durable) this.positions.durable = upTo;
    this.lastFlushMs = this.now();
    this.durableWaiters.releaseBelow(this.positions.durable);
  }

  /**
   * An fdatasync of `segment`'s file alone makes everything written durable:
   * the log is open, the flusher not paused (no truncation or deletion under
   * way), no directory fsync is due, `segment` is the active one and every
   * offset below its base is durable already.
   */
  private syncAloneSuffices(segment: Segment): boolean {
    if (this.positions.state !== 'open' || this.paused > 0 || this.dirDirty) return false;
    return segment === this.segments.active && this.positions.durable >= segment.baseOffset;
  }

  /** Starts a round unless one runs, the flusher is paused, or nothing is wanted. */
  maybeStart(): void {
    // Not beside a write carrying the sync (see wantsSyncWith): its completion calls here again.
    if (this.flushing !== null || this.syncWrites > 0 || this.paused > 0 || this.positions.state !== 'open') return;
    if (!this.wanted()) return;
    this.flushing = this.run().finally(() => {
      this.flushing = null;
      // A durable() waiter added after run's last check but before this
      // callback saw `flushing` set and started nothing: look again.
      this.maybeStart();
    });
  }

  private async run(): Promise<void> {
    try {
      while (this.positions.state === 'open' && this.paused === 0 && this.wanted()) {
        const target = this.positions.written;
        const from = this.positions.durable;
        if (seams.ackBeforeSync) this.durableWaiters.releaseBelow(target); // mutant: acknowledge first
        await runOnPool(this.where, () => this.syncRange(from, target), Priority.flush);
        if (this.positions.state !== 'open') return;
        if (target > this.positions.durable) this.positions.durable = target;
        this.lastFlushMs = this.now();
        this.durableWaiters.releaseBelow(this.positions.durable);
      }
    } catch (error) {
      this.onFailure(error);
    }
  }

  private async syncRange(from: number, to: number): Promise<void> {
    const targets: Segment[] = [];
    for (let i = 0; i < this.segments.length; i++) {
      const segment = this.segments.at(i) as Segment;
      const end = this.segments.endOf(i);
      if (segment.baseOffset < to && end > from) targets.push(segment);
    }
    const dirDirty = this.dirDirty;
    this.dirDirty = false;
    for (const segment of targets) {
      // Not writer.sync(): a roll during this flush replaces the writer.
      await segment.logFile.file.fdatasync();
      this.metrics.flushes++;
      // Sealed: indexes synced (trusted below the recovery point). Active:
      // rebuilt by recovery, so not synced, but the write-backs issued must
      // have landed: a durable acknowledgement never follows a failed index
      // write (the failure is fail-stop). Deferred entries (sparse-index.ts)
      // are not written here.
      if (segment !== this.segments.active) await segment.flushIndexes();
      else await segment.drainIndexes();
    }
    if (dirDirty && !seams.skipSegmentDirFsync) {
      await this.io.fsyncDir(this.dir);
      this.metrics.dirSyncs++;
    }
  }

  /** Pauses the flusher and waits for a running round (segments are about to be removed or cut). */
  async pause(): Promise<void> {
    this.paused++;
    if (this.flushing !== null) await this.flushing;
  }

  resume(): void {
    this.paused--;
    this.maybeStart();
  }

  /** Starts the flush.ms timer (none when flush.ms is unbounded). */
  startTimer(): void {
    const interval = this.config.flushIntervalMs;
    if (interval >= NEVER) return;
    this.timer = setInterval(() => {
      if (this.now() - this.lastFlushMs >= interval) this.request(this.positions.logEnd);
    }, Math.max(1, Math.min(interval, TIMER_MAX_MS)));
    this.timer.unref();
  }

  stopTimer(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
