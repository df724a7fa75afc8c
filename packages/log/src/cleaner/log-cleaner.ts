// LogCleaner: the log cleaner of one data directory (Kafka's LogCleaner and
// LogCleanerManager, one thread): picks the dirtiest compacted log whose
// dirty ratio reaches min.cleanable.dirty.ratio (or whose oldest dirty
// segment is past max.compaction.lag.ms), cleans it (clean-pass.ts), and
// records its progress in the data directory's `cleaner-offset-checkpoint`.
//
// On disk: `cleaner-offset-checkpoint`, OffsetCheckpoint format ("topic
// partition offset": the first dirty offset of each compacted log), written
// after every pass that moved it (tmp, fsync, rename, directory fsync). A
// stale or missing checkpoint costs a pass more work, never data: the clean
// section is cleaned against every new map, and an offset beyond the log end
// (a truncation) starts over at the log start. So a failed checkpoint write
// is kept as lastError, not fail-stop.
//
// Also `cleaner-stats` (cleaner-stats-checkpoint.ts: "topic partition
// lastCleanMs bytesSaved"), so that lastCleanMs and bytesSaved survive a
// restart (issue 20): read at load, rewritten the same atomic way after every
// pass that cleaned or saved bytes, after the offset checkpoint. A crash
// between the two writes loses that pass's figures (reports only, never used
// to decide what to clean); a missing file starts them at zero/null, an
// unreadable one too, kept as statsError. passes, failures and removedRecords
// count this process's passes only.
//
// Scheduling: at most one pass at a time. start() runs passes in the
// background, sleeping backoffMs (unref'd) when no log needs cleaning or a
// pass failed; stop() lets a running pass finish its current group (no new
// swap starts) and waits for it. pause(name) does the same for one log
// (deletion, reopen) until resume(name). Steps run on the shared pool at
// Priority.cleaner, every byte read and written charged to one throttle
// (bytesPerSecond). A pass that fails before a swap's commit point leaves
// the log as it was (lastError, failures) and is retried after backoffMs; a
// failure after it took the log offline through its fail-stop funnel.

import type { BlockingPool, Io } from '@seglog/io';
import { CLEANER_STATS_FILE, CleanerStatsCheckpoint } from '../checkpoint/cleaner-stats-checkpoint.js';
import type { CleanerStatsEntry } from '../checkpoint/cleaner-stats-checkpoint.js';
import { OffsetCheckpoint } from '../checkpoint/offset-checkpoint.js';
import { FileNames } from '../file-names.js';
import type { Log } from '../log/log.js';
import { cleanLog } from './clean-pass.js';
import type { ComputeMode } from './cleaner-compute.js';
import type { CleanPassStats } from './clean-pass.js';
import { cleanableRange, needsCleaning } from './cleanable.js';
import { idleSleepMs, Throttler } from './throttler.js';

export const CLEANER_OFFSET_CHECKPOINT = FileNames.cleanerOffsetCheckpoint;

export interface LogCleanerOptions {
  readonly io: Io;
  readonly dataDir: string;
  /** The directory's logs (LogManager.logs). */
  readonly logs: () => readonly Log[];
  readonly pool: BlockingPool | null;
  /** Offset map budget per pass (Kafka's log.cleaner.dedupe.buffer.size). Default 128 MiB. */
  readonly offsetMapBytes?: number;
  /** Kafka's log.cleaner.io.max.bytes.per.second. Default unlimited. */
  readonly bytesPerSecond?: number;
  /** Kafka's log.cleaner.backoff.ms: sleep when idle or after a failure. Default 15000. */
  readonly backoffMs?: number;
  readonly now?: () => number;
  /**
   * Where a pass's CPU work runs (cleaner-compute.ts): 'worker' (default), a
   * worker thread shared by the process, so the event loop holds only a
   * message per window; 'inline', the event loop in slices.
   */
  readonly compute?: ComputeMode;
}

/** What the cleaner knows of one log (CLI stats/verify). */
export interface CleanerLogState {
  readonly firstDirtyOffset: number | null;
  readonly dirtyRatio: number;
  readonly cleanBytes: number;
  readonly dirtyBytes: number;
  /** When the last pass that cleaned started (kept in cleaner-stats across restarts); null: none recorded. */
  readonly lastCleanMs: number | null;
  /** Passes of this process. */
  readonly passes: number;
  /** Failed passes of this process. */
  readonly failures: number;
  /** Bytes saved by every pass recorded in cleaner-stats, this process's included. */
  readonly bytesSaved: number;
  /** Records removed by this process's passes. */
  readonly removedRecords: number;
  readonly lastError: unknown;
  readonly paused: boolean;
}

interface Progress {
  lastCleanMs: number | null;
  passes: number;
  failures: number;
  bytesSaved: number;
  removedRecords: number;
  lastError: unknown;
  retryAfterMs: number;
  /** The earliest delete horizon the last pass left: a pass is due then even with nothing dirty. */
  nextHorizonMs: number;
}

export function logName(log: Log): string {
  return `${log.topic}-${log.partition}`;
}

export class LogCleaner {
  readonly offsetMapBytes: number;
  readonly backoffMs: number;
  readonly throttler: Throttler;
  readonly compute: ComputeMode;
  private readonly logs: () => readonly Log[];
  private readonly pool: BlockingPool | null;
  private readonly now: () => number;
  private readonly checkpointFile: OffsetCheckpoint;
  private readonly statsFile: CleanerStatsCheckpoint;
  private readonly checkpointed: Map<string, number>;
  private readonly progress: Map<string, Progress>;
  private readonly paused: Set<string>;
  private running: { name: string; done: Promise<unknown> } | null;
  private stopping: boolean;
  private loop: Promise<void> | null;
  private wake: (() => void) | null;
  /** The last checkpoint write failure (null: the last write succeeded). */
  checkpointError: unknown;
  /** As checkpointError, for cleaner-stats: unreadable at load (the figures started over), or the last write failed. */
  statsError: unknown;

  constructor(options: LogCleanerOptions) {
    this.offsetMapBytes = options.offsetMapBytes ?? 128 * 1024 * 1024;
    this.backoffMs = options.backoffMs ?? 15_000;
    this.throttler = new Throttler({ bytesPerSecond: options.bytesPerSecond ?? Number.POSITIVE_INFINITY });
    this.compute = options.compute ?? 'worker';
    this.logs = options.logs;
    this.pool = options.pool;
    this.now = options.now ?? Date.now;
    this.checkpointFile = new OffsetCheckpoint(options.io, `${options.dataDir}/${CLEANER_OFFSET_CHECKPOINT}`);
    this.statsFile = new CleanerStatsCheckpoint(options.io, `${options.dataDir}/${CLEANER_STATS_FILE}`);
    this.checkpointed = new Map();
    this.progress = new Map();
    this.paused = new Set();
    this.running = null;
    this.stopping = false;
    this.loop = null;
    this.wake = null;
    this.checkpointError = null;
    this.statsError = null;
  }

  /**
   * Reads the checkpoint (an unreadable one counts as empty: the passes start
   * over) and cleaner-stats (an unreadable one counts as empty: the figures
   * start at zero/null, statsError says why and a line in `notes` says so).
   */
  async load(notes: string[] = []): Promise<void> {
    try {
      for (const [name, offset] of OffsetCheckpoint.toMap(await this.checkpointFile.read())) this.checkpointed.set(name, offset);
    } catch (error) {
      this.checkpointError = error;
    }
    try {
      for (const [name, entry] of CleanerStatsCheckpoint.toMap(await this.statsFile.read())) {
        const progress = this.progressOf(name);
        progress.lastCleanMs = entry.lastCleanMs < 0 ? null : entry.lastCleanMs;
        progress.bytesSaved = entry.bytesSaved;
      }
    } catch (error) {
      this.statsError = error;
      notes.push(`${this.statsFile.path} could not be read (${(error as Error).message}); the cleaner's last clean times and bytes saved start over`);
    }
  }

  /** Background passes until stop(). */
  start(): void {
    if (this.loop !== null || this.stopping) return;
    this.loop = this.runLoop();
  }

  /** Stops the background loop; a running pass finishes its current group first. Idempotent. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
    await this.running?.done.catch(() => undefined);
  }

  /** No pass on this log until resume(); waits for a running one to stop. */
  async pause(name: string): Promise<void> {
    this.paused.add(name);
    if (this.running?.name === name) await this.running.done.catch(() => undefined);
  }

  resume(name: string): void {
    this.paused.delete(name);
  }

  /** Drops what the cleaner knows of a deleted log. */
  forget(name: string): void {
    this.checkpointed.delete(name);
    this.progress.delete(name);
  }

  /** The compacted log most in need of a pass, or null. */
  dirtiest(): Log | null {
    const now = this.now();
    let best: Log | null = null;
    let bestRatio = -1;
    for (const log of this.logs()) {
      const name = logName(log);
      if (!log.config.compacted || log.state !== 'open' || this.paused.has(name)) continue;
      if ((this.progress.get(name)?.retryAfterMs ?? 0) > now) continue;
      const range = cleanableRange(log.cleanerAccess(), this.checkpointed.get(name), now);
      const horizonDue = now >= (this.progress.get(name)?.nextHorizonMs ?? Number.POSITIVE_INFINITY);
      if (!needsCleaning(range, log.config) && !horizonDue) continue;
      const ratio = range.maxLagExceeded || horizonDue ? Number.POSITIVE_INFINITY : range.dirtyRatio;
      if (ratio > bestRatio) {
        best = log;
        bestRatio = ratio;
      }
    }
    return best;
  }

  /** One pass on the dirtiest log; null when none needs one. Rejects with the pass's failure. */
  async cleanOnce(): Promise<CleanPassStats | null> {
    const log = this.dirtiest();
    return log === null ? null : this.clean(log);
  }

  /** One pass on `log` now, whatever its ratio or horizons (tests, tools); waits for a running pass first. */
  async clean(log: Log): Promise<CleanPassStats> {
    while (this.running !== null) await this.running.done.catch(() => undefined);
    const name = logName(log);
    const done = this.pass(log, name);
    this.running = { name, done };
    try {
      return await done;
    } finally {
      this.running = null;
    }
  }

  private async pass(log: Log, name: string): Promise<CleanPassStats> {
    const progress = this.progressOf(name);
    const now = this.now();
    let stats: CleanPassStats;
    try {
      stats = await cleanLog(log.cleanerAccess(), {
        checkpointedOffset: this.checkpointed.get(name), offsetMapBytes: this.offsetMapBytes, nowMs: now,
        throttler: this.throttler, pool: this.pool, shouldStop: () => this.stopping || this.paused.has(name), horizonDue: true,
        compute: this.compute,
      });
    } catch (error) {
      progress.failures++;
      progress.lastError = error;
      progress.retryAfterMs = now + this.backoffMs;
      throw error;
    }
    progress.passes++;
    progress.bytesSaved += stats.bytesSaved;
    progress.removedRecords += stats.removedRecords;
    progress.lastError = null;
    if (stats.outcome === 'cleaned') {
      progress.lastCleanMs = now;
      progress.nextHorizonMs = stats.earliestHorizonMs;
      if (this.checkpointed.get(name) !== stats.firstDirtyOffset) {
        this.checkpointed.set(name, stats.firstDirtyOffset);
        await this.writeCheckpoint();
      }
    }
    if (stats.outcome === 'cleaned' || stats.bytesSaved > 0) await this.writeStats();
    return stats;
  }

  /** Rewrites cleaner-stats with every live log's figures; a failure is kept as statsError. */
  private async writeStats(): Promise<void> {
    const live = new Set(this.logs().map(logName));
    const entries: CleanerStatsEntry[] = [];
    for (const [name, progress] of this.progress) {
      if (!live.has(name) || (progress.lastCleanMs === null && progress.bytesSaved === 0)) continue;
      const dash = name.lastIndexOf('-');
      entries.push({ topic: name.slice(0, dash), partition: Number(name.slice(dash + 1)), lastCleanMs: progress.lastCleanMs ?? -1, bytesSaved: progress.bytesSaved });
    }
    try {
      await this.statsFile.write(entries);
      this.statsError = null;
    } catch (error) {
      this.statsError = error;
    }
  }

  private async writeCheckpoint(): Promise<void> {
    const live = new Set(this.logs().map(logName));
    const entries = [];
    for (const [name, offset] of this.checkpointed) {
      if (!live.has(name)) continue;
      const dash = name.lastIndexOf('-');
      entries.push({ topic: name.slice(0, dash), partition: Number(name.slice(dash + 1)), offset });
    }
    try {
      await this.checkpointFile.write(entries);
      this.checkpointError = null;
    } catch (error) {
      this.checkpointError = error;
    }
  }

  private progressOf(name: string): Progress {
    let progress = this.progress.get(name);
    if (progress === undefined) {
      progress = { lastCleanMs: null, passes: 0, failures: 0, bytesSaved: 0, removedRecords: 0, lastError: null, retryAfterMs: 0, nextHorizonMs: Number.POSITIVE_INFINITY };
      this.progress.set(name, progress);
    }
    return progress;
  }

  /** What the cleaner knows of `log` now. */
  stateOf(log: Log): CleanerLogState {
    const name = logName(log);
    const range = cleanableRange(log.cleanerAccess(), this.checkpointed.get(name), this.now());
    const progress = this.progressOf(name);
    return {
      firstDirtyOffset: this.checkpointed.get(name) ?? null, dirtyRatio: range.dirtyRatio, cleanBytes: range.cleanBytes,
      dirtyBytes: range.dirtyBytes, lastCleanMs: progress.lastCleanMs, passes: progress.passes, failures: progress.failures,
      bytesSaved: progress.bytesSaved, removedRecords: progress.removedRecords, lastError: progress.lastError, paused: this.paused.has(name),
    };
  }

  private async runLoop(): Promise<void> {
    while (!this.stopping) {
      let worked = false;
      try {
        worked = (await this.cleanOnce()) !== null;
      } catch {
        // Kept in the log's progress (lastError, failures); retried after backoffMs.
      }
      if (this.stopping) break;
      if (!worked) await this.idle();
    }
  }

  private idle(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = () => resolve();
      void idleSleepMs(this.backoffMs).then(() => resolve());
    }).then(() => {
      this.wake = null;
    });
  }
}
