// LogManager: one data directory ("log dir") and the logs in it
// (reference/kafka-storage.md §1, §9, §21, §22).
//
// Files it owns in the data directory:
// - `.lock`: held (Io.lock: flock + a process-wide table) from open to close;
//   a second manager on the directory, in this process or another, gets
//   SEGLOG_ERR_LOG_LOCKED.
// - `.kafka_cleanshutdown`: JSON `{"version":0,"brokerEpoch":N}`. Its
//   presence means every log was flushed and closed. It is read and then
//   DELETED (unlink + directory fsync) before any log is loaded, so a crash
//   while loading counts as unclean. It is written on close() (`.tmp`, fsync,
//   rename, directory fsync) only if every log closed cleanly, the final
//   checkpoints were written and the directory never went offline.
// - `recovery-point-offset-checkpoint` (every log's durableOffset) and
//   `log-start-offset-checkpoint` (only logs whose logStartOffset is above
//   their first segment's base, as Kafka: the loader derives the others from
//   the first segment): OffsetCheckpoint, `0\n<count>\n<topic> <p> <offset>\n…`,
//   written atomically. A recovery-point checkpoint that cannot be read at
//   open makes every recovery point unknown (full scan, no cut but a zero
//   tail: never "0", which would license cutting everything); an unreadable
//   log-start checkpoint means log start 0. Both are noted in `notes`.
// - `<topic>-<partition>/`: one Log each. `<topic>-<p>.<uuid>-delete`
//   directories are removed at open (an interrupted deleteLog);
//   `-future`/`-stray` and unparseable names are skipped and listed in
//   `skipped`.
//
// Fail-stop (Kafka's LogDirFailureChannel): when any log goes offline, or a
// checkpoint or marker write fails, the whole directory is offline until the
// process reopens it: every log in it goes offline too (appends, markers,
// written()/durable() waiters reject), getOrCreateLog/deleteLog fail fast
// with SEGLOG_ERR_LOG_OFFLINE, no further checkpoint is written, and close()
// writes no marker. Reads keep working.
//
// Free space: a DiskGuard (internal/disk-guard.ts) checked by every Log
// before it accepts an append; below the floor, SEGLOG_ERR_LOG_DISK_FULL
// (retriable).
//
// Shared resources (ARCHITECTURE.md "Placement", "Tail cache"): one
// BlockingPool for every log's pool work, one AlignedArena for direct-mode
// staging (made when the first direct log opens), one TailCacheBudget whose
// reclaim runs on the pool (Priority.eviction; inline if the pool is full).
// placement() sums the logs' caller/pool counters.
//
// Collaborators in log-dir/: dir-lock.ts (the `.lock`), dir-start.ts (the
// marker and the checkpoints as open() reads them, the marker close()
// writes), dir-checkpointer.ts (the checkpoint writes and their timer),
// dir-resources.ts (the shared pool, arena and tail-cache budget),
// partition-dirs.ts (discovery, loading and removal of partition
// directories), refusal-notifier.ts (rate-limited refusal notices).

import { assert, SeglogError } from '@seglog/common';
import type { BlockingPool, Io, IoLock } from '@seglog/io';
import { FileNames } from './file-names.js';
import { DiskGuard } from './internal/disk-guard.js';
import { isTransientResourceError, logClosed, logOffline, logResourceUnavailable } from './internal/log-errors.js';
import { addPlacement, newPlacementMetrics } from './log/placement.js';
import type { PlacementMetrics } from './log/placement.js';
import type { TailCacheBudget } from './cache/tail-cache.js';
import { Log } from './log/log.js';
import type { CorruptionPolicy, DirectFallback } from './log/log.js';
import type { LogConfig } from './log-config.js';
import { DirCheckpointer } from './log-dir/dir-checkpointer.js';
import { LogCleaner } from './cleaner/log-cleaner.js';
import type { ComputeMode } from './cleaner/cleaner-compute.js';
import { writeSealedSizes } from './log-dir/sealed-sizes.js';
import { readStartState, startPositions, writeCleanShutdownMarker } from './log-dir/dir-start.js';
import type { StartState } from './log-dir/dir-start.js';
import { lockDataDir } from './log-dir/dir-lock.js';
import { DirResources } from './log-dir/dir-resources.js';
import type { HandleCacheStats } from './log-dir/handle-cache.js';
import type { IndexCacheStats } from './segment/index-residency.js';
import { deletePartitionDir, discoverPartitionDirs, join, loadPartitions, removeDeleteDirs } from './log-dir/partition-dirs.js';
import type { SkippedEntry } from './log-dir/partition-dirs.js';
import { RefusalNotifier } from './log-dir/refusal-notifier.js';
import type { RefusalNotice } from './log-dir/refusal-notifier.js';

export interface LogManagerOptions {
  /** Config of logs whose topic has no entry in topicConfigs. */
  readonly defaultConfig: LogConfig;
  /** Per-topic configs. */
  readonly topicConfigs?: ReadonlyMap<string, LogConfig>;
  /** Wall clock in ms for the logs and the disk guard. Default Date.now. */
  readonly now?: () => number;
  /** Free-space floor of the directory. Default defaultConfig.minFreeBytes (64 MiB); 0 disables the guard. */
  readonly minFreeBytes?: number;
  /** Minimum time between two statfs calls of the disk guard. Default 1000. */
  readonly diskCheckIntervalMs?: number;
  /** Period of the background checkpoint (unref'd timer). Default 60000; 0 = none (close still writes them). */
  readonly checkpointIntervalMs?: number;
  /** Written into the clean-shutdown marker. Default -1 (unknown, Kafka's value when absent). */
  readonly brokerEpoch?: number;
  /** Passed to every Log.open. Default 'fail'. */
  readonly onCorruption?: CorruptionPolicy;
  /** Logs loaded at once during open. Default 2. */
  readonly loadConcurrency?: number;
  /** The BlockingPool shared by every log. Default: concurrency 4, 4096 queued (64 reserved for flushes and rolls). */
  readonly pool?: { readonly concurrency?: number; readonly maxQueued?: number; readonly reservedQueued?: number };
  /** Direct-mode staging arena: chunk size (default 1 MiB) and count (default 64). */
  readonly arena?: { readonly chunkBytes?: number; readonly chunkCount?: number };
  /** Tail caches: per log (default 8 MiB) and for all logs together (default 256 MiB). */
  readonly tailCache?: { readonly perLogBytes?: number; readonly totalBytes?: number; readonly chunkBytes?: number };
  /**
   * Descriptors of sealed segment files kept open for all logs together
   * (log-dir/handle-cache.ts): idle ones beyond this are closed and reopened
   * on the next read. Active segments, reads in flight and fetch plans keep
   * theirs on top of it. Default 1000.
   */
  readonly maxOpenSegmentFiles?: number;
  /**
   * Bytes of sealed segments' offset and time indexes kept in memory for all
   * logs together (segment/index-residency.ts): they load on first lookup,
   * and past this the least recently used are dropped (reloaded on the next
   * read). Active segments and reads in flight keep theirs on top of it.
   * Default 128 MiB.
   */
  readonly indexCacheBytes?: number;
  /**
   * Called once, synchronously, when the directory goes offline, with its
   * cause (the broker prints notice.message). Default: nothing. A throwing
   * hook is ignored: the failure path never throws.
   */
  readonly onOffline?: (notice: OfflineNotice) => void;
  /**
   * Called when appends or creations are refused for a transient cause
   * (SEGLOG_ERR_LOG_RESOURCE_UNAVAILABLE, SEGLOG_ERR_LOG_DISK_FULL): the
   * first at once, then at most one notice per refusalNoticeIntervalMs
   * (injected clock) carrying the count suppressed since the last one, so a
   * refused produce storm is visible without flooding. Default: nothing.
   */
  readonly onRefusal?: (notice: RefusalNotice) => void;
  /** Minimum time between two refusal notices. Default 10000. */
  readonly refusalNoticeIntervalMs?: number;
  /** The log cleaner of compacted logs (cleaner/log-cleaner.ts): on by default, Kafka's log.cleaner.* settings. */
  readonly cleaner?: { readonly enabled?: boolean; readonly offsetMapBytes?: number; readonly bytesPerSecond?: number; readonly backoffMs?: number; readonly compute?: ComputeMode };
  /** Told (synchronously) of each direct-mode segment written buffered instead, with its `<topic>-<partition>`. Default: nothing. */
  readonly onDirectFallback?: (partition: string, fallback: DirectFallback) => void;
}

export type { RefusalNotice } from './log-dir/refusal-notifier.js';

/** What took a data directory offline (LogManagerOptions.onOffline). */
export interface OfflineNotice {
  readonly dir: string;
  /** The `<topic>-<partition>` whose I/O failed first, or null (a checkpoint, the marker, a partition's creation or deletion). */
  readonly partition: string | null;
  /** The first failure (usually a SEGLOG_ERR_IO_* error). */
  readonly cause: unknown;
  /** One line for an operator: what failed, and what it means. */
  readonly message: string;
}

/** The operator's line for an offline transition: the cause's code and message, and the consequence. */
export function describeOffline(dir: string, partition: string | null, cause: unknown): string {
  const code = (cause as { code?: unknown } | null)?.code;
  const text = cause instanceof Error ? cause.message : String(cause);
  const where = partition === null ? '' : ` (first failure in partition ${partition})`;
  return `seglog: data directory ${dir} is OFFLINE${where}: ${typeof code === 'string' ? `${code}: ` : ''}${text}. ` +
    'Every log in it refuses appends (KAFKA_STORAGE_ERROR) until it is reopened (restart); reads of written data continue.';
}

export type LogManagerState = 'open' | 'offline' | 'closed';

export type { SkippedEntry } from './log-dir/partition-dirs.js';

export { CLEAN_SHUTDOWN_VERSION } from './log-dir/dir-start.js';
const DEFAULT_DISK_CHECK_INTERVAL_MS = 1000;
const DEFAULT_CHECKPOINT_INTERVAL_MS = 60_000;
const DEFAULT_REFUSAL_NOTICE_INTERVAL_MS = 10_000;

function unknownPartition(dir: string, topic: string, partition: number): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_UNKNOWN_PARTITION', `no log ${topic}-${partition} in data directory ${dir}`, {
    kafka: 'UNKNOWN_TOPIC_OR_PARTITION',
    context: { dir, topic, partition },
  });
}

function isCode(error: unknown, code: string): boolean {
  return (error as { code?: unknown } | null)?.code === code;
}

export class LogManager {
  readonly io: Io;
  readonly dir: string;
  readonly defaultConfig: LogConfig;
  readonly diskGuard: DiskGuard;
  /** Whether the previous run shut down cleanly (the marker was present at open). */
  readonly hadCleanShutdown: boolean;
  /** The broker epoch the marker held, or -1 (absent or unreadable). */
  readonly previousBrokerEpoch: number;
  /** Directory entries open() skipped, and notes about checkpoints it could not read. */
  readonly skipped: SkippedEntry[];
  readonly notes: readonly string[];
  private readonly topicConfigs: ReadonlyMap<string, LogConfig>;
  private readonly now: () => number;
  private readonly brokerEpoch: number;
  private readonly onCorruption: CorruptionPolicy;
  private readonly logsByName: Map<string, Log>;
  private readonly creating: Map<string, Promise<Log>>;
  /** The offset checkpoint files, written one at a time and on a timer. */
  private readonly checkpoints: DirCheckpointer;
  private lock: IoLock | null;
  private stateValue: LogManagerState;
  private failure: unknown;
  private closing: Promise<void> | null;
  private readonly appendGuard: (bytes: number) => void;
  private readonly onOfflineNotice: ((notice: OfflineNotice) => void) | null;
  private readonly refusals: RefusalNotifier;
  private readonly onDirectFallback: ((partition: string, fallback: DirectFallback) => void) | null;
  /** The pool every log's blocking work runs on. */
  readonly pool: BlockingPool;
  /** Cleans the compacted logs (cleaner-offset-checkpoint in this directory). */
  readonly cleaner: LogCleaner;
  /** The tail-cache budget across logs (LRU between logs). */
  readonly tailCacheBudget: TailCacheBudget;
  /** The pool, the direct-mode arena and the tail-cache budget every log shares. */
  private readonly resources: DirResources;

  private constructor(io: Io, dir: string, options: LogManagerOptions, lock: IoLock, start: StartState, guard: DiskGuard) {
    this.io = io;
    this.dir = dir;
    this.defaultConfig = options.defaultConfig;
    this.diskGuard = guard;
    this.hadCleanShutdown = start.hadCleanShutdown;
    this.previousBrokerEpoch = start.brokerEpoch;
    this.skipped = [];
    this.notes = start.notes;
    this.topicConfigs = options.topicConfigs ?? new Map();
    this.now = options.now ?? Date.now;
    this.brokerEpoch = options.brokerEpoch ?? -1;
    this.onCorruption = options.onCorruption ?? 'fail';
    this.logsByName = new Map();
    this.creating = new Map();
    this.checkpoints = new DirCheckpointer(io, dir);
    this.lock = lock;
    this.stateValue = 'open';
    this.failure = undefined;
    this.closing = null;
    this.appendGuard = (bytes) => this.checkAppend(bytes);
    this.onOfflineNotice = options.onOffline ?? null;
    this.onDirectFallback = options.onDirectFallback ?? null;
    this.refusals = new RefusalNotifier(dir, options.onRefusal ?? null, {
      intervalMs: options.refusalNoticeIntervalMs ?? DEFAULT_REFUSAL_NOTICE_INTERVAL_MS,
      now: this.now,
    });
    const resources = new DirResources(options);
    this.pool = resources.pool;
    this.tailCacheBudget = resources.tailCacheBudget;
    this.resources = resources;
    this.cleaner = new LogCleaner({ io, dataDir: dir, logs: () => this.logs(), pool: this.pool, now: this.now, ...options.cleaner });
  }

  /** The handle cache's budget and use (seglog stats, tests). */
  handleStats(): HandleCacheStats {
    return this.resources.handles.stats();
  }

  /** The sealed indexes' byte budget and use (seglog stats, tests). */
  indexStats(): IndexCacheStats {
    return this.resources.indexStats();
  }

  /** Caller vs pool counts of every open log, summed. */
  placement(): PlacementMetrics {
    const total = newPlacementMetrics();
    for (const log of this.logsByName.values()) addPlacement(total, log.placement);
    return total;
  }

  /**
   * Locks `dir` (creating it if missing), consumes the clean-shutdown marker,
   * reads the checkpoints and loads every partition directory. On any
   * failure, every log opened so far is closed and the lock released.
   */
  static async open(io: Io, dir: string, options: LogManagerOptions): Promise<LogManager> {
    const interval = options.diskCheckIntervalMs ?? DEFAULT_DISK_CHECK_INTERVAL_MS;
    const checkpointMs = options.checkpointIntervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS;
    assert(Number.isSafeInteger(checkpointMs) && checkpointMs >= 0, 'LogManager.open: checkpointIntervalMs must be a non-negative safe integer');
    const brokerEpoch = options.brokerEpoch ?? -1;
    assert(Number.isSafeInteger(brokerEpoch) && brokerEpoch >= -1, 'LogManager.open: brokerEpoch must be a safe integer >= -1');
    const lock = await lockDataDir(io, dir);
    let manager: LogManager | null = null;
    try {
      const start = await readStartState(io, dir);
      const guard = new DiskGuard(io, dir, {
        minFreeBytes: options.minFreeBytes ?? options.defaultConfig.minFreeBytes,
        checkIntervalMs: interval,
        now: options.now ?? Date.now,
      });
      manager = new LogManager(io, dir, options, lock, start, guard);
      await guard.refresh();
      await manager.loadLogs(options.loadConcurrency ?? 2, start);
      await manager.cleaner.load(start.notes);
    } catch (error) {
      if (manager !== null) await manager.closeHandles();
      else await lock.release();
      throw error;
    }
    manager.startCheckpointTimer(checkpointMs);
    if (options.cleaner?.enabled !== false) manager.cleaner.start();
    return manager;
  }

  get state(): LogManagerState {
    return this.stateValue;
  }

  /** The first failure that took the directory offline, or undefined. */
  get failureCause(): unknown {
    return this.failure;
  }

  getLog(topic: string, partition: number): Log | undefined {
    return this.logsByName.get(`${topic}-${partition}`);
  }

  /** Every loaded log, in partition-directory name order of loading then creation. */
  logs(): Log[] {
    return [...this.logsByName.values()];
  }

  /**
   * The log of topic-partition, created (directory made and fsynced in the
   * data directory) if missing. The config is `config`, else the topic's,
   * else the default; it is used only when the log is created. An illegal
   * topic or partition throws SEGLOG_ERR_LOG_INVALID_TOPIC / _PARTITION and
   * creates nothing. Concurrent calls for one partition share one creation.
   */
  getOrCreateLog(topic: string, partition: number, config?: LogConfig): Promise<Log> {
    let name: string;
    try {
      name = FileNames.partitionDirName(topic, partition);
      this.checkUsable();
    } catch (error) {
      return Promise.reject(error);
    }
    const existing = this.logsByName.get(name);
    if (existing !== undefined) return Promise.resolve(existing);
    const pending = this.creating.get(name);
    if (pending !== undefined) return pending;
    const created = this.createLog(name, topic, partition, config ?? this.configFor(topic)).finally(() => this.creating.delete(name));
    this.creating.set(name, created);
    return created;
  }

  private async createLog(name: string, topic: string, partition: number, config: LogConfig): Promise<Log> {
    const path = join(this.dir, name);
    try {
      if (!(await this.io.exists(path))) {
        await this.io.mkdir(path);
        await this.io.fsyncDir(this.dir);
      }
      const log = await this.openLog(path, config, { topic, partition, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: true });
      this.logsByName.set(name, log);
      if (this.stateValue !== 'open') await this.refuseLate(log);
      return log;
    } catch (error) {
      // Out of descriptors or space while making a new, empty log: nothing
      // of any batch was at risk, so this is a retriable refusal and the
      // directory stays open (the next call finds the directory, if mkdir
      // got that far, and opens it). Other errors are fail-stop.
      if (isTransientResourceError(error)) throw this.refusals.refuse(logResourceUnavailable(path, 'creating the partition', error), name);
      throw this.failWith(error);
    }
  }

  /** A log created while the directory went offline or closed: closed again, and the caller refused. */
  private async refuseLate(log: Log): Promise<never> {
    await log.close().catch(() => undefined);
    throw this.stateValue === 'offline' ? logOffline(this.dir, this.failure) : logClosed(this.dir);
  }

  /**
   * Closes the log and deletes its directory: renamed to
   * `<topic>-<p>.<uuid>-delete` (FileNames.deleteDirName: the topic cut to
   * fit 255 bytes, as Kafka; directory fsynced: from here on the
   * deletion survives a crash, finished by the next open), then its files
   * and the directory removed. Unknown partitions:
   * SEGLOG_ERR_LOG_UNKNOWN_PARTITION.
   */
  async deleteLog(topic: string, partition: number): Promise<void> {
    const name = FileNames.partitionDirName(topic, partition);
    this.checkUsable();
    const log = this.logsByName.get(name);
    if (log === undefined) throw unknownPartition(this.dir, topic, partition);
    this.logsByName.delete(name);
    await this.cleaner.pause(name);
    this.cleaner.forget(name);
    this.cleaner.resume(name);
    try {
      await log.close();
      await deletePartitionDir(this.io, this.dir, topic, partition);
    } catch (error) {
      throw this.failWith(error);
    }
  }

  /**
   * Closes the log (flushed: a clean close) and opens it again with `config`:
   * how a topic's changed settings reach an open partition. The closed log
   * stays listed until the new one replaces it, so a checkpoint in between
   * still names it. Unknown partitions: SEGLOG_ERR_LOG_UNKNOWN_PARTITION.
   */
  async reopenLog(topic: string, partition: number, config: LogConfig): Promise<Log> {
    const name = FileNames.partitionDirName(topic, partition);
    this.checkUsable();
    const log = this.logsByName.get(name);
    if (log === undefined) throw unknownPartition(this.dir, topic, partition);
    await this.cleaner.pause(name);
    try {
      await log.close();
      const positions = { topic, partition, recoveryPoint: log.durableOffset, logStartOffset: log.logStartOffset, hadCleanShutdown: true };
      const reopened = await this.openLog(join(this.dir, name), config, positions);
      this.logsByName.set(name, reopened);
      return reopened;
    } catch (error) {
      throw this.failWith(error);
    } finally {
      this.cleaner.resume(name);
    }
  }

  /**
   * Writes both checkpoint files from every log's durableOffset and
   * logStartOffset. Runs one at a time; a failure takes the directory
   * offline (SEGLOG_ERR_LOG_OFFLINE), except out of descriptors or space
   * (EMFILE/ENFILE/ENOSPC): the write is atomic (tmp, fsync, rename), so the
   * previous checkpoint is intact and only staler; that is the retriable
   * SEGLOG_ERR_LOG_RESOURCE_UNAVAILABLE and the next checkpoint tries again.
   * Refused when offline or closed.
   */
  checkpoint(): Promise<void> {
    return this.checkpoints.serialize(() => {
      this.checkUsable();
      return this.writeCheckpoints();
    });
  }

  private async writeCheckpoints(): Promise<void> {
    try {
      await this.checkpoints.write(this.logsByName.values());
    } catch (error) {
      if (isTransientResourceError(error)) throw this.refusals.refuse(logResourceUnavailable(this.dir, 'writing the offset checkpoints', error), null);
      throw this.failWith(error);
    }
  }

  /**
   * Flushes and closes every log, writes the checkpoints and, if all of that
   * succeeded and the directory is not offline, the clean-shutdown marker;
   * then releases the lock. Handles are released in every case. Throws
   * SEGLOG_ERR_LOG_OFFLINE if closing itself failed; closing a directory
   * that was already offline resolves (without a marker).
   */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    if (this.stateValue === 'closed') return;
    this.checkpoints.stopTimer();
    await this.cleaner.stop();
    await this.checkpoints.idle();
    await Promise.allSettled([...this.creating.values()]);
    const wasOpen = this.stateValue === 'open';
    let failure: unknown;
    try {
      const offlineBefore = this.logs().some((log) => log.state === 'offline');
      const results = await Promise.allSettled(this.logs().map((log) => log.close()));
      const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (rejected !== undefined) throw rejected.reason;
      if (wasOpen && !offlineBefore && this.stateValue === 'open') {
        await this.writeCheckpoints();
        await writeSealedSizes(this.io, this.dir, [...this.logsByName].map(([name, log]) => [name, log.sealedFacts()] as const));
        await writeCleanShutdownMarker(this.io, this.dir, this.brokerEpoch);
      }
    } catch (error) {
      failure = error;
      this.markOffline(error, null);
    }
    await this.diskGuard.idle();
    await this.closeHandles();
    if (wasOpen && failure !== undefined) throw logOffline(this.dir, this.failure);
  }

  // ---- internals -----------------------------------------------------------

  private configFor(topic: string): LogConfig {
    return this.topicConfigs.get(topic) ?? this.defaultConfig;
  }

  private openLog(path: string, config: LogConfig, positions: { topic: string; partition: number; recoveryPoint: number | null; logStartOffset: number; hadCleanShutdown: boolean }): Promise<Log> {
    return Log.open(this.resources.ioFor(this.io), path, config, {
      ...positions,
      now: this.now,
      onCorruption: this.onCorruption,
      beforeAppend: this.appendGuard,
      onOffline: (cause) => this.markOffline(cause, `${positions.topic}-${positions.partition}`),
      onRefusal: (refusal) => this.refusals.note(refusal, `${positions.topic}-${positions.partition}`),
      onDirectFallback: (fallback: DirectFallback) => this.onDirectFallback?.(`${positions.topic}-${positions.partition}`, fallback),
      ...this.resources.forLog(config),
    });
  }

  private async loadLogs(concurrency: number, start: StartState): Promise<void> {
    assert(Number.isSafeInteger(concurrency) && concurrency >= 1, 'LogManager.open: loadConcurrency must be a positive integer');
    const { toLoad, toDelete } = await discoverPartitionDirs(this.io, this.dir, this.skipped);
    await loadPartitions(toLoad, concurrency, async (tp) => {
      const name = `${tp.topic}-${tp.partition}`;
      const log = await this.openLog(join(this.dir, name), this.configFor(tp.topic), startPositions(start, tp));
      this.logsByName.set(name, log);
    });
    await removeDeleteDirs(this.io, this.dir, toDelete);
  }

  private checkAppend(bytes: number): void {
    if (this.stateValue === 'offline') throw logOffline(this.dir, this.failure);
    try {
      this.diskGuard.check(bytes);
    } catch (error) {
      this.refusals.note(error, null);
      throw error;
    }
  }

  /** Refuses creates, deletes and checkpoints when offline, closed or closing (a log created during close would leak). */
  private checkUsable(): void {
    if (this.stateValue === 'offline') throw logOffline(this.dir, this.failure);
    if (this.stateValue === 'closed' || this.closing !== null) throw logClosed(this.dir);
  }

  /**
   * Takes the directory offline (once; the first cause is kept), and with it
   * every log in it (a failed checkpoint or marker write, or one failed log,
   * is a failed directory: nothing in it is acknowledged any more). Never
   * throws: Log calls it from its failure path.
   */
  private markOffline(cause: unknown, partition: string | null): void {
    if (this.stateValue !== 'open') return;
    this.stateValue = 'offline';
    this.failure = cause;
    this.checkpoints.stopTimer();
    for (const log of this.logsByName.values()) log.markOffline(cause);
    const hook = this.onOfflineNotice;
    if (hook === null) return;
    try {
      hook({ dir: this.dir, partition, cause, message: describeOffline(this.dir, partition, cause) });
    } catch {
      // The failure path never throws; the directory is offline either way.
    }
  }

  /** The I/O-error funnel: the directory goes offline and the caller gets SEGLOG_ERR_LOG_OFFLINE. */
  private failWith(error: unknown): unknown {
    if (isCode(error, 'SEGLOG_ERR_LOG_OFFLINE') && this.stateValue === 'offline') return error;
    if (this.stateValue === 'closed') return error;
    this.markOffline(error, null);
    return logOffline(this.dir, this.failure);
  }

  private startCheckpointTimer(intervalMs: number): void {
    this.checkpoints.startTimer(intervalMs, () => {
      if (this.stateValue === 'open') void this.checkpoint().catch(() => undefined);
    });
  }

  /** Closes every log (offline ones only drop handles) and releases the lock; the manager ends closed. */
  private async closeHandles(): Promise<void> {
    this.checkpoints.stopTimer();
    await this.cleaner.stop();
    await Promise.allSettled(this.logs().map((log) => log.close()));
    await this.pool.close();
    const lock = this.lock;
    this.lock = null;
    this.stateValue = 'closed';
    if (lock !== null) await lock.release();
  }
}



