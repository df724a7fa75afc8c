// EmbeddedLog: one unreplicated log in a data directory, the front door for
// embedders (openLog() in open-log.ts makes one). It owns a LogManager over
// the directory (lock, clean-shutdown marker, offset checkpoints, recovery)
// holding exactly one partition directory, `log-0`, so the files are
// Kafka's layout: `.lock`, `recovery-point-offset-checkpoint`,
// `log-start-offset-checkpoint`, `.kafka_cleanshutdown` (after close()),
// `log-0/<20-digit base>.log|.index|.timeindex`, `log-0/leader-epoch-checkpoint`.
//
// Defined behaviour (issue 19):
// - append(records) builds one batch (CreateTime, stamped with the clock when
//   a record has no timestamp), splitting a list larger than maxMessageBytes
//   into several batches (each atomic, in order); no leader epoch (nothing
//   replicated: no epoch checkpoint fsync). The high watermark follows the
//   log end offset (a single replica: accepted = committed).
// - durable() / sync(): everything accepted so far is durable;
//   durable(offset) of an offset not appended rejects with
//   SEGLOG_ERR_LOG_OFFSET_NOT_APPENDED.
// - records() and read() give read-your-writes: an accepted offset not yet
//   written is awaited, not read as empty.
// - placement is a frozen snapshot.
// - Timers: none unless asked for (checkpointIntervalMs); close() stops it.

import { assert } from '@seglog/common';
import { buildBatch } from '@seglog/records';
import type { CodecId, LogRecord, RecordInput } from '@seglog/records';
import type { FetchPlan } from '../fetch-plan.js';
import type { Log } from '../log/log.js';
import type { ActiveWriteMode, AppendResult, ReadOptions } from '../log/log-types.js';
import type { PlacementMetrics } from '../log/placement.js';
import type { LogManager } from '../log-manager.js';
import { readRecords } from './record-stream.js';
import type { RecordsOptions } from './record-stream.js';

export interface AppendOptions {
  /** Compression codec of the batch. Default Codec.none (0). */
  readonly compression?: CodecId;
}

export class EmbeddedLog {
  /** The data directory. */
  readonly dir: string;
  /**
   * The engine's Log underneath (the low-level API brokers use). Appends
   * made through it directly do not wake records({ follow: true }).
   */
  readonly log: Log;
  /** Whether the previous run closed cleanly (false after a crash: recovery ran). */
  readonly hadCleanShutdown: boolean;
  private readonly manager: LogManager;
  private readonly now: () => number;
  private readonly maxMessageBytes: number;
  private tailWaiters: Array<(appended: boolean) => void>;
  private closing: Promise<void> | null;

  /** @internal Made by openLog(). */
  constructor(manager: LogManager, log: Log, now: () => number) {
    this.dir = manager.dir;
    this.log = log;
    this.hadCleanShutdown = manager.hadCleanShutdown;
    this.manager = manager;
    this.now = now;
    this.maxMessageBytes = log.config.maxMessageBytes;
    this.tailWaiters = [];
    this.closing = null;
  }

  /** The next offset to be assigned (offsets below it are accepted). */
  get logEndOffset(): number {
    return this.log.logEndOffset;
  }

  /** Everything below it is durable (the recovery point). */
  get durableOffset(): number {
    return this.log.durableOffset;
  }

  /** Everything below it is in the file (readable). */
  get writtenOffset(): number {
    return this.log.writtenOffset;
  }

  get logStartOffset(): number {
    return this.log.logStartOffset;
  }

  /** 'direct' or 'buffered' for the active segment. */
  get writeMode(): ActiveWriteMode {
    return this.log.writeMode;
  }

  /** A frozen snapshot of where appends and reads ran (caller or pool) and why. */
  get placement(): PlacementMetrics {
    return this.log.placementSnapshot();
  }

  /**
   * Appends `records` (key, value, headers, timestamp optional) and resolves
   * when they are accepted (offsets assigned): `firstOffset`..`lastOffset`.
   * Records without a timestamp get the current time. A list larger than
   * maxMessageBytes is split into several batches, each atomic, accepted
   * in order; a rejection leaves the earlier ones accepted.
   */
  async append(records: readonly RecordInput[], options: AppendOptions = {}): Promise<AppendResult> {
    assert(records.length > 0, 'EmbeddedLog.append: records must not be empty');
    const batch = buildBatch({ records, now: this.now, ...(options.compression === undefined ? {} : { compression: options.compression }) });
    if (batch.length > this.maxMessageBytes && records.length > 1) {
      const half = records.length >>> 1;
      const first = await this.append(records.slice(0, half), options);
      const second = await this.append(records.slice(half), options);
      return { ...second, firstOffset: first.firstOffset, recordsCount: first.recordsCount + second.recordsCount, sizeInBytes: first.sizeInBytes + second.sizeInBytes };
    }
    return this.appendBatch(batch);
  }

  /** Appends one producer batch (record batch v2, e.g. from buildBatch); the log takes ownership of `batch`. */
  async appendBatch(batch: Buffer): Promise<AppendResult> {
    const result = await this.log.appendAsLeader(batch);
    this.log.updateHighWatermark(this.log.logEndOffset);
    this.wakeTail(true);
    return result;
  }

  /** Resolves once the record at `offset` (default: every record accepted so far) is in the file. */
  written(offset?: number): Promise<void> {
    if (offset !== undefined) return this.log.written(offset);
    const end = this.log.logEndOffset;
    return end > this.log.writtenOffset ? this.log.written(end - 1) : Promise.resolve();
  }

  /**
   * Resolves once the record at `offset` is durable; without an argument,
   * once every record accepted so far is (one fdatasync covers every waiter:
   * group commit). An offset not appended yet rejects with
   * SEGLOG_ERR_LOG_OFFSET_NOT_APPENDED.
   */
  durable(offset?: number): Promise<void> {
    if (offset !== undefined) return this.log.durable(offset);
    const end = this.log.logEndOffset;
    return end > this.log.durableOffset ? this.log.durable(end - 1) : Promise.resolve();
  }

  /** durable(): makes everything accepted so far durable. */
  sync(): Promise<void> {
    return this.durable();
  }

  /**
   * The records from `from` (default the log start offset) in offset order,
   * CRC-checked, across segments; ends at the log end offset as of the
   * start of the iteration, or with `follow: true` waits for new appends
   * and ends when the log closes. Breaking out of the loop releases
   * everything.
   */
  records(options: RecordsOptions = {}): AsyncGenerator<LogRecord, void, undefined> {
    return readRecords(this.log, (offset) => this.waitForAppend(offset), options);
  }

  /**
   * The low-level read (whole batches from the batch holding `offset`, as a
   * FetchPlan: release it), with read-your-writes: an accepted offset not
   * yet written is awaited first.
   */
  async read(offset: number, maxBytes: number, options: ReadOptions = {}): Promise<FetchPlan> {
    if (offset < this.log.logEndOffset && offset >= this.log.writtenOffset) await this.log.written(offset);
    return this.log.read(offset, maxBytes, options);
  }

  /**
   * Makes everything durable, writes the checkpoints and the clean-shutdown
   * marker, releases the lock; following iterations end. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= this.manager.close().finally(() => this.wakeTail(false));
    return this.closing;
  }

  private waitForAppend(offset: number): Promise<boolean> {
    if (this.closing !== null || this.log.state !== 'open') return Promise.resolve(false);
    if (this.log.logEndOffset > offset) return Promise.resolve(true);
    return new Promise((resolve) => this.tailWaiters.push(resolve));
  }

  private wakeTail(appended: boolean): void {
    const waiters = this.tailWaiters;
    if (waiters.length === 0) return;
    this.tailWaiters = [];
    for (const wake of waiters) wake(appended);
  }
}
