// A small deterministic workload over one Log on SimIo, and the ledger of
// what it was told (reliability.md §3.5, §3.6).
//
// The workload mixes, on 1 KiB segments with a 128-byte index interval:
// leader appends of small batches (several in flight at once), durable()
// waits interleaved with appends, flush(), size rolls and a forceRoll, leader
// epoch changes (each writes leader-epoch-checkpoint: tmp, fdatasync, rename,
// directory fsync), the high watermark, deleteRecords and deleteOldSegments
// (rename to .deleted, directory fsync), a clean close and reopen, and a final
// close. Run on a SimIo with `crashAt: k`, it stops at the first error once
// the simulated machine has halted.
//
// The ledger counts only what resolved: an append's offsets when its promise
// resolved (and they must be the offsets the harness predicted), the offset
// of every resolved durable() (and the log end offset at the start of a
// resolved flush() or close()), the durableOffset and writtenOffset the log
// reported between steps (a checkpoint writer would have trusted them), the
// first segment after a completed deleteOldSegments (its deletions were
// fsynced), and the log start offset a checkpoint would hold.

import { isIoError } from '@seglog/io';
import type { AlignedArena, SimIo } from '@seglog/io';
import { Log, LogConfig } from '@seglog/log';
import type { AppendResult, WriteMode } from '@seglog/log';
import { expectedBatchAt, producerBatchAt, recordCountAt, T0 } from './expected-log.js';
import type { Expectation } from './log-checker.js';

export const DIR = '/data/crash-0';
export const TOPIC = 'crash';
/** The workload's clock: fixed, an hour after the first record's timestamp (no time-based roll or retention). */
export const NOW = T0 + 3_600_000;
const now = (): number => NOW;

/** How the workload's log is opened (reliability suite: direct write mode with a shared staging arena). */
export interface WorkloadOptions {
  readonly writeMode?: WriteMode;
  readonly arena?: AlignedArena;
}

export function crashConfig(options: WorkloadOptions = {}): LogConfig {
  return new LogConfig({
    writeMode: options.writeMode ?? 'buffered',
    segmentBytes: 1024,
    indexIntervalBytes: 128,
    segmentIndexBytes: 1024,
    retentionMs: -1,
    retentionBytes: -1,
    fileDeleteDelayMs: 60_000,
  });
}

export function openLog(io: SimIo, options: { recoveryPoint: number; logStartOffset: number; hadCleanShutdown: boolean }, workload: WorkloadOptions = {}): Promise<Log> {
  const arena = workload.arena === undefined ? {} : { arena: workload.arena };
  return Log.open(io, DIR, crashConfig(workload), { topic: TOPIC, partition: 0, now, ...arena, ...options });
}

/** What the harness knows, outside the system under test. */
export class Ledger {
  /** Base offset → leader epoch of every attempted append (the harness predicts the offsets). */
  readonly epochs = new Map<number, number>();
  /** The offset the next append must get. */
  next = 0;
  /** Highest offset + 1 covered by a resolved durable(), flush() or close(). */
  acked = 0;
  /** Highest durableOffset the log reported after a step (what a recovery-point checkpoint would hold). */
  claimedDurable = 0;
  /** Highest writtenOffset the log reported (in the page cache: survives a process crash). */
  written = 0;
  /** The log start offset a log-start checkpoint would hold (after a resolved deleteRecords or clean close). */
  checkpointLogStart = 0;
  /** The first segment base after the last completed deleteOldSegments: those deletions are durable. */
  retainedFrom = 0;
  /** The highest high watermark at any deleteRecords / deleteOldSegments call: retention never goes beyond it. */
  logStartCeiling = 0;
  /** Steps that completed, for failure messages. */
  readonly steps: string[] = [];
  /** Broken promises seen while running (e.g. an append resolved with offsets other than predicted). */
  readonly problems: string[] = [];

  observe(log: Log): void {
    this.claimedDurable = Math.max(this.claimedDurable, log.durableOffset);
    this.written = Math.max(this.written, log.writtenOffset);
  }

  ack(end: number): void {
    this.acked = Math.max(this.acked, end);
  }

  /**
   * The expectation after a crash. `checkpoints`: the recovered log was
   * opened with the checkpointed log start offset (else 0). `processCrash`:
   * the page cache survived, so everything written must be there too.
   */
  expectation(options: { checkpoints: boolean; processCrash: boolean; epochOverrides?: ReadonlyMap<number, number> }): Expectation {
    const epochs = this.epochs;
    const overrides = options.epochOverrides;
    const passedStart = options.checkpoints ? this.checkpointLogStart : 0;
    return {
      expectedBatch: (base) => {
        const epoch = overrides?.get(base) ?? epochs.get(base);
        return epoch === undefined ? undefined : expectedBatchAt(base, epoch);
      },
      attemptedEnd: this.next,
      durable: Math.max(this.acked, this.claimedDurable, options.processCrash ? this.written : 0),
      logStartMin: Math.max(passedStart, this.retainedFrom),
      logStartMax: Math.max(passedStart, this.logStartCeiling),
    };
  }
}

/** An error that only says the simulated machine halted (the workload stops there). */
function isCrashAftermath(io: SimIo, error: unknown): boolean {
  if (!io.halted) return false;
  if (isIoError(error)) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SEGLOG_ERR_');
}

/** Awaits every promise (so none is left unhandled) and rethrows the first rejection. */
async function settle<T>(promises: readonly Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

export class CrashWorkload {
  private log: Log | null = null;

  constructor(readonly io: SimIo, readonly ledger: Ledger, readonly options: WorkloadOptions = {}) {}

  /** The log the workload has open (after a fault: the offline log, for the fault suite's checks). */
  get current(): Log | null {
    return this.log;
  }

  /** Runs to the end or to the crash; 'crashed' when the machine halted. Other errors propagate. */
  async run(): Promise<'completed' | 'crashed'> {
    try {
      await this.steps();
      return 'completed';
    } catch (error) {
      if (!isCrashAftermath(this.io, error)) throw error;
      await this.log?.close().catch(() => undefined);
      return 'crashed';
    }
  }

  private get open(): Log {
    if (this.log === null) throw new Error('workload: no open log');
    return this.log;
  }

  private async step(name: string, body: (log: Log) => Promise<void>): Promise<void> {
    const log = this.open;
    await body(log);
    this.ledger.observe(log);
    this.ledger.steps.push(name);
    // A background failure (a flush after the crash) makes the next step throw; stop right here instead.
    if (this.io.halted) throw Object.assign(new Error('halted'), { code: 'SEGLOG_ERR_IO_CRASHED' });
  }

  private append(epoch: number): Promise<AppendResult> {
    const log = this.open;
    const base = this.ledger.next;
    const count = recordCountAt(base);
    this.ledger.epochs.set(base, epoch);
    this.ledger.next = base + count;
    return log.appendAsLeader(producerBatchAt(base), { leaderEpoch: epoch }).then((result) => {
      if (result.firstOffset !== base || result.lastOffset !== base + count - 1) {
        this.ledger.problems.push(`append at ${base} resolved with ${result.firstOffset}–${result.lastOffset}, expected ${base}–${base + count - 1}`);
      }
      return result;
    });
  }

  private appendMany(count: number, epoch: number): Promise<AppendResult>[] {
    const out: Promise<AppendResult>[] = [];
    for (let i = 0; i < count; i++) out.push(this.append(epoch));
    return out;
  }

  private durable(offset: number): Promise<void> {
    return this.open.durable(offset).then(() => this.ledger.ack(offset + 1));
  }

  private async appendThenDurable(count: number, epoch: number): Promise<void> {
    const results = await settle(this.appendMany(count, epoch));
    await this.durable(results[results.length - 1]!.lastOffset);
  }

  private async flush(): Promise<void> {
    const end = this.open.logEndOffset;
    await this.open.flush();
    this.ledger.ack(end);
  }

  private async retention(deleteTo: (log: Log) => number): Promise<void> {
    const log = this.open;
    const hw = log.updateHighWatermark(log.durableOffset);
    this.ledger.logStartCeiling = Math.max(this.ledger.logStartCeiling, hw);
    const start = await log.deleteRecords(Math.min(hw, deleteTo(log)));
    this.ledger.checkpointLogStart = Math.max(this.ledger.checkpointLogStart, start);
    await log.deleteOldSegments(NOW);
    this.ledger.retainedFrom = Math.max(this.ledger.retainedFrom, log.segmentBaseOffsets()[0]!);
  }

  private async closeLog(): Promise<void> {
    const log = this.open;
    const end = log.logEndOffset;
    await log.close();
    this.ledger.ack(end);
    this.ledger.checkpointLogStart = Math.max(this.ledger.checkpointLogStart, log.logStartOffset);
    this.ledger.observe(log);
    this.ledger.steps.push('close');
    this.log = null;
  }

  private async steps(): Promise<void> {
    this.log = await openLog(this.io, { recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: false }, this.options);
    this.ledger.steps.push('open');
    // Epoch 0: three appends in flight, then a durable wait on the last.
    await this.step('3 appends, durable', () => this.appendThenDurable(3, 0));
    // durable() of one batch racing the next appends (group commit across them).
    await this.step('append, durable racing 2 appends', async () => {
      const first = await this.append(0);
      await settle<unknown>([this.durable(first.lastOffset), ...this.appendMany(2, 0)]);
    });
    await this.step('flush', () => this.flush());
    // Epoch 1: the leader-epoch checkpoint is written before the first append; the size roll follows.
    await this.step('4 appends epoch 1 (unsynced)', async () => void (await settle(this.appendMany(4, 1))));
    await this.step('forceRoll', (log) => log.forceRoll());
    await this.step('3 appends, durable', () => this.appendThenDurable(3, 1));
    await this.step('deleteRecords + deleteOldSegments', () => this.retention((log) => log.segmentBaseOffsets()[1] ?? 0) );
    await this.step('5 appends, 2 durable waits', async () => {
      const appends = this.appendMany(5, 1);
      const waits = [appends[1]!, appends[3]!].map((p) => p.then((r) => this.durable(r.lastOffset)));
      await settle<unknown>([...appends, ...waits]);
    });
    await this.closeLog();
    this.log = await openLog(this.io, { recoveryPoint: this.ledger.next, logStartOffset: this.ledger.checkpointLogStart, hadCleanShutdown: true }, this.options);
    this.ledger.steps.push('reopen (clean)');
    // Epoch 3 after the clean reopen.
    await this.step('4 appends epoch 3, durable', () => this.appendThenDurable(4, 3));
    await this.step('3 appends (unsynced)', async () => void (await settle(this.appendMany(3, 3))));
    await this.step('retention to the high watermark', () => this.retention((log) => log.highWatermark));
    await this.step('2 appends, durable', () => this.appendThenDurable(2, 3));
    await this.closeLog();
  }
}
