// The transactional crash workload (reliability suite, workload "txn"): one
// idempotent producer (pid 1) and two transactional ones (pids 2, 3) on the
// 1 KiB-segment log of crash-workload.ts, with appendMarker COMMIT/ABORT,
// open transactions across a roll and across a clean close and reopen, a
// duplicate retry answered with the original offsets, and durable waits.
//
// Every batch the harness appends has a known, exact byte image (records
// with timestamps T0 + offset and values valueAt(offset), markers built with
// buildControlBatch and the timestamp T0 + offset passed explicitly), kept in
// TxnLedger.bytes: the crash checker compares recovered batches with it.
//
// checkTransactions() then checks what read_committed shows after recovery
// against a reference computed from the recovered batches alone (a trivial
// replay: open transactions, aborted ranges): the last stable offset, the
// aborted transactions of a chained read_committed, and that re-sending the
// idempotent producer's last recovered batch is answered with exactly the
// offsets it had before the crash (and writes nothing).

import type { SimIo } from '@seglog/io';
import type { AppendResult, Log } from '@seglog/log';
import { buildBatch, buildControlBatch, RecordBatch, readTxnMarker } from '@seglog/records';
import { isIoError } from '@seglog/io';
import { Ledger, NOW, openLog } from './crash-workload.js';
import type { WorkloadOptions } from './crash-workload.js';
import { recordCountAt, T0, valueAt } from './expected-log.js';
import { CheckFailure } from './log-checker.js';
import type { Expectation, LogSnapshot } from './log-checker.js';

export const IDEMPOTENT_PID = 1;

interface ProducerBatch {
  readonly producerId: number;
  readonly baseSequence: number;
  readonly transactional: boolean;
  readonly count: number;
}

export class TxnLedger extends Ledger {
  /** Base offset → the exact bytes the log must hold there. */
  readonly bytes = new Map<number, Buffer>();
  /** Base offset → how the batch was produced (for duplicate retries). */
  readonly produced = new Map<number, ProducerBatch>();

  override expectation(options: { checkpoints: boolean; processCrash: boolean; epochOverrides?: ReadonlyMap<number, number> }): Expectation {
    const base = super.expectation(options);
    const bytes = this.bytes;
    const overrides = options.epochOverrides;
    return {
      ...base,
      expectedBatch: (offset) => {
        const own = bytes.get(offset);
        if (own !== undefined) return own;
        return overrides?.has(offset) === true ? base.expectedBatch(offset) : undefined;
      },
    };
  }
}

export function dataBatch(base: number, producer: ProducerBatch): Buffer {
  const records = [];
  for (let i = 0; i < producer.count; i++) records.push({ key: `k${base + i}`, value: valueAt(base + i), timestamp: T0 + base + i, headers: [] });
  return buildBatch({ records, producerId: producer.producerId, producerEpoch: 0, baseSequence: producer.baseSequence, transactional: producer.transactional });
}

function settle<T>(promises: readonly Promise<T>[]): Promise<T[]> {
  return Promise.allSettled(promises).then((results) => {
    const failed = results.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
    return results.map((r) => (r as PromiseFulfilledResult<T>).value);
  });
}

export class TxnWorkload {
  private log: Log | null = null;
  private readonly sequences = new Map<number, number>();

  constructor(readonly io: SimIo, readonly ledger: TxnLedger, readonly options: WorkloadOptions = {}) {}

  get current(): Log | null {
    return this.log;
  }

  async run(): Promise<'completed' | 'crashed'> {
    try {
      await this.steps();
      return 'completed';
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (!this.io.halted || !(isIoError(error) || (typeof code === 'string' && code.startsWith('SEGLOG_ERR_')))) throw error;
      await this.log?.close().catch(() => undefined);
      return 'crashed';
    }
  }

  private get open(): Log {
    if (this.log === null) throw new Error('txn workload: no open log');
    return this.log;
  }

  private async step(name: string, body: (log: Log) => Promise<unknown>): Promise<void> {
    await body(this.open);
    this.ledger.observe(this.open);
    this.ledger.steps.push(name);
    if (this.io.halted) throw Object.assign(new Error('halted'), { code: 'SEGLOG_ERR_IO_CRASHED' });
  }

  private produce(producerId: number, transactional: boolean, epoch: number): Promise<AppendResult> {
    const base = this.ledger.next;
    const count = recordCountAt(base);
    const baseSequence = this.sequences.get(producerId) ?? 0;
    this.sequences.set(producerId, baseSequence + count);
    const producer = { producerId, baseSequence, transactional, count };
    const expected = dataBatch(base, producer);
    const view = new RecordBatch(expected);
    view.setBaseOffset(base);
    view.setPartitionLeaderEpoch(epoch);
    this.ledger.bytes.set(base, expected);
    this.ledger.produced.set(base, producer);
    this.ledger.epochs.set(base, epoch);
    this.ledger.next = base + count;
    return this.open.appendAsLeader(dataBatch(base, producer), { leaderEpoch: epoch }).then((result) => this.expectAt(result, base, count));
  }

  private marker(type: 'COMMIT' | 'ABORT', producerId: number, epoch: number): Promise<AppendResult> {
    const base = this.ledger.next;
    const timestamp = T0 + base;
    this.ledger.bytes.set(base, buildControlBatch({ type, producerId, producerEpoch: 0, coordinatorEpoch: 0, timestamp, baseOffset: base, partitionLeaderEpoch: epoch }));
    this.ledger.epochs.set(base, epoch);
    this.ledger.next = base + 1;
    return this.open.appendMarker({ type, producerId, producerEpoch: 0, coordinatorEpoch: 0, leaderEpoch: epoch, timestamp }).then((result) => this.expectAt(result, base, 1));
  }

  private expectAt(result: AppendResult, base: number, count: number): AppendResult {
    if (result.firstOffset !== base || result.lastOffset !== base + count - 1) {
      this.ledger.problems.push(`append at ${base} resolved with ${result.firstOffset}–${result.lastOffset}, expected ${base}–${base + count - 1}`);
    }
    return result;
  }

  private async durableEnd(): Promise<void> {
    const end = this.open.logEndOffset;
    if (end === 0) return;
    await this.open.durable(end - 1);
    this.ledger.ack(end);
  }

  /** Re-sends the batch at `base` (a producer retry): answered with the original offsets, nothing written. */
  private async retry(base: number): Promise<void> {
    const producer = this.ledger.produced.get(base)!;
    const end = this.open.logEndOffset;
    const result = await this.open.appendAsLeader(dataBatch(base, producer), { leaderEpoch: this.ledger.epochs.get(base)! });
    if (result.firstOffset !== base || this.open.logEndOffset !== end) {
      this.ledger.problems.push(`duplicate of ${base} answered ${result.firstOffset} (log end ${end} → ${this.open.logEndOffset})`);
    }
  }

  private async steps(): Promise<void> {
    this.log = await openLog(this.io, { recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: false }, this.options);
    this.ledger.steps.push('open');
    await this.step('2 idempotent, durable', async () => {
      await settle([this.produce(1, false, 0), this.produce(1, false, 0)]);
      await this.durableEnd();
    });
    await this.step('txn 2 (2 batches), txn 3 (1), durable', async () => {
      await settle([this.produce(2, true, 0), this.produce(3, true, 0), this.produce(2, true, 0)]);
      await this.durableEnd();
    });
    await this.step('COMMIT 2, ABORT 3, durable', async () => {
      await this.marker('COMMIT', 2, 0);
      await this.marker('ABORT', 3, 0);
      await this.durableEnd();
    });
    await this.step('idempotent, retry it, durable', async () => {
      const result = await this.produce(1, false, 0);
      await this.retry(result.firstOffset);
      await this.durableEnd();
    });
    await this.step('txn 2 and 3 open, forceRoll', async (log) => {
      await settle([this.produce(2, true, 1), this.produce(3, true, 1)]);
      await log.forceRoll();
    });
    await this.step('txn 2 more, ABORT 2, durable, COMMIT 3 (unsynced)', async () => {
      await this.produce(2, true, 1);
      await this.marker('ABORT', 2, 1);
      await this.durableEnd();
      await this.marker('COMMIT', 3, 1);
    });
    await this.step('idempotent ×3 (unsynced)', () => settle([this.produce(1, false, 1), this.produce(1, false, 1), this.produce(1, false, 1)]));
    const end = this.open.logEndOffset;
    await this.open.close();
    this.ledger.ack(end);
    this.ledger.observe(this.open);
    this.ledger.steps.push('close');
    this.log = await openLog(this.io, { recoveryPoint: end, logStartOffset: 0, hadCleanShutdown: true }, this.options);
    this.ledger.steps.push('reopen (clean)');
    await this.step('idempotent ×2 + retry of the last, durable', async () => {
      const results = await settle([this.produce(1, false, 2), this.produce(1, false, 2)]);
      await this.retry(results[1]!.firstOffset);
      await this.durableEnd();
    });
    await this.step('txn 3 open (unsynced), idempotent, durable', async () => {
      await settle([this.produce(3, true, 2), this.produce(1, false, 2)]);
      await this.durableEnd();
    });
    await this.step('txn 3 more, COMMIT 3 (unsynced)', async () => {
      await this.produce(3, true, 2);
      await this.marker('COMMIT', 3, 2);
    });
    const last = this.open.logEndOffset;
    await this.open.close();
    this.ledger.ack(last);
    this.ledger.steps.push('close');
    this.log = null;
  }
}

interface RefTxn {
  readonly producerId: number;
  readonly firstOffset: number;
  lastOffset: number;
}

/**
 * read_committed on a recovered log against a replay of its recovered
 * batches: LSO = min(HW, first offset of any open transaction), the aborted
 * transactions a chained read_committed from the log start reports equal
 * those of the replay that overlap [log start, LSO), and a retry of the
 * idempotent producer's last recovered batch gets its original offsets.
 * Sets the high watermark to the log end (a leader with no followers).
 */
export async function checkTransactions(log: Log, snapshot: LogSnapshot, ledger: TxnLedger): Promise<void> {
  const hw = log.updateHighWatermark(log.logEndOffset);
  const open = new Map<number, number>();
  const aborted: RefTxn[] = [];
  let lastIdempotent: number | null = null;
  for (const scanned of snapshot.segments.flatMap((s) => s.batches)) {
    const batch = new RecordBatch(scanned.bytes);
    if (batch.producerId === IDEMPOTENT_PID && !batch.isTransactional) lastIdempotent = batch.baseOffset;
    if (!batch.isTransactional) continue;
    if (!batch.isControl) {
      if (!open.has(batch.producerId)) open.set(batch.producerId, batch.baseOffset);
      continue;
    }
    const marker = readTxnMarker(batch);
    const first = open.get(batch.producerId);
    open.delete(batch.producerId);
    if (marker?.type === 'ABORT' && first !== undefined) aborted.push({ producerId: batch.producerId, firstOffset: first, lastOffset: batch.baseOffset });
  }
  const lso = Math.min(hw, ...open.values());
  if (log.lastStableOffset !== lso) throw new CheckFailure('transactions', `lastStableOffset ${log.lastStableOffset}, the replay of the recovered batches gives ${lso} (open ${JSON.stringify([...open])}, HW ${hw})`);
  const seen = new Set<string>();
  let offset = log.logStartOffset;
  while (offset < lso) {
    const plan = await log.read(offset, 700, { isolation: 'read_committed' });
    try {
      for (const t of plan.abortedTransactions) seen.add(`${t.producerId}@${Math.max(t.firstOffset, log.logStartOffset)}`);
      if (plan.lastStableOffset !== lso) throw new CheckFailure('transactions', `read_committed(${offset}).lastStableOffset ${plan.lastStableOffset} ≠ ${lso}`);
      if (plan.nextOffset <= offset) throw new CheckFailure('transactions', `read_committed(${offset}) below the LSO ${lso} returned nothing`);
      if (plan.nextOffset > lso) throw new CheckFailure('transactions', `read_committed(${offset}) returned up to ${plan.nextOffset}, beyond the LSO ${lso}`);
      offset = plan.nextOffset;
    } finally {
      await plan.release();
    }
  }
  // First offsets below the log start are compared as the log start: a reader cannot fetch below it, and a
  // transaction begun in a segment retention already removed is known from an older .txnindex entry (its real
  // first offset) or from the batches left (a later one); both filter the same records.
  const expected = new Set(aborted.filter((t) => t.lastOffset >= log.logStartOffset && t.firstOffset < lso)
    .map((t) => `${t.producerId}@${Math.max(t.firstOffset, log.logStartOffset)}`));
  const missing = [...expected].filter((t) => !seen.has(t));
  const extra = [...seen].filter((t) => !expected.has(t));
  if (missing.length > 0 || extra.length > 0) {
    throw new CheckFailure('transactions', `read_committed aborted transactions: missing ${missing.join(',') || '-'}, unexpected ${extra.join(',') || '-'}`);
  }
  if (lastIdempotent !== null) {
    const producer = ledger.produced.get(lastIdempotent)!;
    const end = log.logEndOffset;
    const result = await log.appendAsLeader(dataBatch(lastIdempotent, producer), { leaderEpoch: ledger.epochs.get(lastIdempotent)! });
    if (result.firstOffset !== lastIdempotent || log.logEndOffset !== end) {
      throw new CheckFailure('duplicates', `a retry of the recovered idempotent batch at ${lastIdempotent} was answered ${result.firstOffset}–${result.lastOffset} (log end ${end} → ${log.logEndOffset})`);
    }
  }
}

export { NOW };
