// The "log start inside a segment" crash workload (issue 23 item 1): two
// idempotent producers (pids 1 and 5) and two transactional ones (pids 2,
// 3) write into the first 1 KiB segment of crash-workload.ts's log; then
// deleteRecords moves the log start offset into the middle of that segment,
// past producer 1's only batch and past the first batches of pids 2 and 3
// (transaction 3 is still open across it); more appends, an ABORT, a roll,
// and a second deleteRecords (into the second segment) follow. Run with
// `crashAt: k` it stops at the crash.
//
// checkProducerRetries() then re-sends the last batch of every producer the
// recovered log holds (what Kafka guarantees across a reload: a snapshot keeps
// one batch per producer): each must be answered with its original offsets
// and write nothing — producer 1's batch below the log start included. Before the fix the loader replayed producer
// state only from the log start offset, so producer 1 was forgotten after an
// unclean reload and its retry was written again at a new offset.

import { isIoError } from '@seglog/io';
import type { SimIo } from '@seglog/io';
import type { AppendResult, Log } from '@seglog/log';
import { buildControlBatch, RecordBatch } from '@seglog/records';
import { NOW, openLog } from './crash-workload.js';
import { recordCountAt, T0 } from './expected-log.js';
import { CheckFailure } from './log-checker.js';
import type { LogSnapshot } from './log-checker.js';
import { dataBatch, TxnLedger } from './reliability-txn-workload.js';

export class ProducerStartWorkload {
  private log: Log | null = null;
  private readonly sequences = new Map<number, number>();

  constructor(readonly io: SimIo, readonly ledger: TxnLedger) {}

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
    if (this.log === null) throw new Error('producer-start workload: no open log');
    return this.log;
  }

  private async step(name: string, body: (log: Log) => Promise<unknown>): Promise<void> {
    await body(this.open);
    this.ledger.observe(this.open);
    this.ledger.steps.push(name);
    if (this.io.halted) throw Object.assign(new Error('halted'), { code: 'SEGLOG_ERR_IO_CRASHED' });
  }

  private produce(producerId: number, transactional: boolean): Promise<AppendResult> {
    const base = this.ledger.next;
    const count = recordCountAt(base);
    const baseSequence = this.sequences.get(producerId) ?? 0;
    this.sequences.set(producerId, baseSequence + count);
    const producer = { producerId, baseSequence, transactional, count };
    const expected = dataBatch(base, producer);
    const view = new RecordBatch(expected);
    view.setBaseOffset(base);
    view.setPartitionLeaderEpoch(0);
    this.ledger.bytes.set(base, expected);
    this.ledger.produced.set(base, producer);
    this.ledger.epochs.set(base, 0);
    this.ledger.next = base + count;
    return this.open.appendAsLeader(dataBatch(base, producer), { leaderEpoch: 0 }).then((result) => this.expectAt(result, base, count));
  }

  private marker(type: 'COMMIT' | 'ABORT', producerId: number): Promise<AppendResult> {
    const base = this.ledger.next;
    const timestamp = T0 + base;
    this.ledger.bytes.set(base, buildControlBatch({ type, producerId, producerEpoch: 0, coordinatorEpoch: 0, timestamp, baseOffset: base, partitionLeaderEpoch: 0 }));
    this.ledger.epochs.set(base, 0);
    this.ledger.next = base + 1;
    return this.open.appendMarker({ type, producerId, producerEpoch: 0, coordinatorEpoch: 0, leaderEpoch: 0, timestamp }).then((result) => this.expectAt(result, base, 1));
  }

  private expectAt(result: AppendResult, base: number, count: number): AppendResult {
    if (result.firstOffset !== base || result.lastOffset !== base + count - 1) {
      this.ledger.problems.push(`append at ${base} resolved with ${result.firstOffset}–${result.lastOffset}, expected ${base}–${base + count - 1}`);
    }
    return result;
  }

  private async durableEnd(): Promise<void> {
    const end = this.open.logEndOffset;
    await this.open.durable(end - 1);
    this.ledger.ack(end);
  }

  /** deleteRecords to `offset` (bounded by the high watermark = the durable offset), as a checkpoint would record it. */
  private async deleteRecords(offset: number): Promise<void> {
    const log = this.open;
    const hw = log.updateHighWatermark(log.durableOffset);
    this.ledger.logStartCeiling = Math.max(this.ledger.logStartCeiling, hw);
    const start = await log.deleteRecords(Math.min(hw, offset));
    this.ledger.checkpointLogStart = Math.max(this.ledger.checkpointLogStart, start);
    await log.deleteOldSegments(NOW);
    this.ledger.retainedFrom = Math.max(this.ledger.retainedFrom, log.segmentBaseOffsets()[0]!);
  }

  private async steps(): Promise<void> {
    this.log = await openLog(this.io, { recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: false });
    this.ledger.steps.push('open');
    let afterProducer1 = 0;
    await this.step('idempotent 1 and 5, txn 2 and 3, durable', async () => {
      afterProducer1 = (await this.produce(1, false)).lastOffset + 1;
      await this.produce(5, false);
      await this.produce(2, true);
      await this.produce(3, true);
      await this.durableEnd();
    });
    await this.step('COMMIT 2, idempotent 5, durable', async () => {
      await this.marker('COMMIT', 2);
      await this.produce(5, false);
      await this.durableEnd();
    });
    // The log start moves past producer 1's only batch, into the first segment (txn 3 still open).
    await this.step('deleteRecords inside the first segment', () => this.deleteRecords(afterProducer1 + 1));
    await this.step('txn 3 more, txn 2 again, idempotent 5 (unsynced)', async () => {
      await this.produce(3, true);
      await this.produce(2, true);
      await this.produce(5, false);
    });
    await this.step('ABORT 3, durable', async () => {
      await this.marker('ABORT', 3);
      await this.durableEnd();
    });
    await this.step('forceRoll, txn 2 more, idempotent 5, durable', async (log) => {
      await log.forceRoll();
      await this.produce(2, true);
      await this.produce(5, false);
      await this.durableEnd();
    });
    // Retention again, now inside the second segment: the first one goes, producer 1's batch with it.
    await this.step('deleteRecords inside the second segment', (log) => this.deleteRecords((log.segmentBaseOffsets()[1] ?? 0) + 1));
    await this.step('idempotent 5, COMMIT 2 (unsynced)', async () => {
      await this.produce(5, false);
      await this.marker('COMMIT', 2);
    });
    const end = this.open.logEndOffset;
    await this.open.close();
    this.ledger.ack(end);
    this.ledger.checkpointLogStart = Math.max(this.ledger.checkpointLogStart, this.open.logStartOffset);
    this.ledger.steps.push('close');
    this.log = null;
  }
}

/**
 * Re-sends the last data batch of every producer in the recovered log (from
 * the first segment's base: below the log start too). Kafka's snapshot keeps
 * one batch per producer, so that is the retry a reload must still
 * recognise: it must be answered with its original offsets, writing nothing.
 * Returns the number of retries checked.
 */
export async function checkProducerRetries(log: Log, snapshot: LogSnapshot, ledger: TxnLedger): Promise<number> {
  const byProducer = new Map<number, number[]>();
  for (const scanned of snapshot.segments.flatMap((s) => s.batches)) {
    const batch = new RecordBatch(scanned.bytes);
    if (batch.isControl || batch.producerId < 0) continue;
    const list = byProducer.get(batch.producerId) ?? [];
    list.push(batch.baseOffset);
    byProducer.set(batch.producerId, list);
  }
  let checked = 0;
  for (const [producerId, bases] of byProducer) {
    for (const base of bases.slice(-1)) {
      const producer = ledger.produced.get(base);
      if (producer === undefined) throw new CheckFailure('duplicates', `recovered batch at ${base} of producer ${producerId} was never produced`);
      const end = log.logEndOffset;
      let result: AppendResult;
      try {
        result = await log.appendAsLeader(dataBatch(base, producer), { leaderEpoch: ledger.epochs.get(base)! });
      } catch (error) {
        throw new CheckFailure('duplicates', `a retry of producer ${producerId}'s batch at ${base} (sequence ${producer.baseSequence}) was rejected: ${(error as Error).message}`);
      }
      if (result.firstOffset !== base || result.lastOffset !== base + producer.count - 1 || log.logEndOffset !== end) {
        throw new CheckFailure('duplicates', `a retry of producer ${producerId}'s batch at ${base} (sequence ${producer.baseSequence}) was answered ` +
          `${result.firstOffset}–${result.lastOffset} (log end ${end} → ${log.logEndOffset}, log start ${log.logStartOffset})`);
      }
      checked++;
    }
  }
  return checked;
}
