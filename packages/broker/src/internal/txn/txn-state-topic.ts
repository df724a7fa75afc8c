// TxnStateTopic: the transaction coordinator's storage, Kafka's internal
// `__transaction_state` topic through the engine (TopicStore → LogManager),
// and the broker's TxnPersistence (markers through Log.appendMarker).
//
// Layout (Kafka's): a transactional id's records all go to partition
// Utils.abs(transactionalId.hashCode()) % partitions (as __consumer_offsets,
// offsetsPartitionFor), one uncompressed v2 batch per write, key and value in
// Kafka's formats (txn-records.ts). Loading replays every partition in log
// order (last write per id wins; a null value deletes).
//
// Durability: store() and every marker resolve when acknowledged as a produce
// with acks=-1 is (--sync-on-ack: covered by an fdatasync; otherwise written),
// and move the partition's high watermark (so the LSO moves past a marker).
// A marker on __consumer_offsets completes the transaction's group offsets
// (the group coordinator applies or drops them) once all markers are written.

import { assert } from '@seglog/common';
import { buildBatch } from '@seglog/records';
import type { BrokerContext } from '../broker-context.js';
import { LEADER_EPOCH } from '../broker-context.js';
import { errorMessageOf } from '../errors.js';
import { OFFSETS_TOPIC, offsetsPartitionFor } from '../group/offsets-topic.js';
import { completeTxnOffsets } from '../group/txn-offsets.js';
import { advanceHighWatermark } from '../handlers/produce.js';
import { scanBatches } from '../partition-scan.js';
import type { PartitionLog } from '../topic-store.js';
import type { TxnMarker, TxnPersistence } from './txn-persistence.js';
import { decodeTxnRecord, encodeTxnRecord, type StoredTxn, type TxnPartition, type TxnRecord } from './txn-records.js';

export const TXN_STATE_TOPIC = '__transaction_state';

/** The topic configs __transaction_state is created with (Kafka's transaction.state.log.* defaults: compacted, 100 MiB segments). */
export const TXN_STATE_TOPIC_CONFIGS: Readonly<Record<string, string>> = Object.freeze({
  'cleanup.policy': 'compact',
  'segment.bytes': String(100 * 1024 * 1024),
});

export class TxnStateTopic implements TxnPersistence {
  private readonly ctx: BrokerContext;
  private readonly logs: readonly PartitionLog[];

  private constructor(ctx: BrokerContext, logs: readonly PartitionLog[]) {
    this.ctx = ctx;
    this.logs = logs;
  }

  /** Opens (creating on first start) the topic with `partitions` partitions; an existing topic keeps its count. */
  static async open(ctx: BrokerContext, partitions: number): Promise<TxnStateTopic> {
    if (!ctx.store.has(TXN_STATE_TOPIC)) await ctx.store.createInternal(TXN_STATE_TOPIC, partitions, TXN_STATE_TOPIC_CONFIGS);
    const count = ctx.store.partitionCount(TXN_STATE_TOPIC);
    const logs: PartitionLog[] = [];
    for (let partition = 0; partition < count; partition++) {
      const log = ctx.store.get(TXN_STATE_TOPIC, partition);
      assert(log !== undefined, 'TxnStateTopic.open: a partition is missing');
      logs.push(log);
    }
    return new TxnStateTopic(ctx, logs);
  }

  /** One record (a tombstone when `value` is null), acknowledged as an acks=-1 produce is. */
  async store(transactionalId: string, value: StoredTxn | null): Promise<void> {
    const log = this.logs[offsetsPartitionFor(transactionalId, this.logs.length)];
    assert(log !== undefined, 'TxnStateTopic.store: no partition');
    const batch = buildBatch({ records: [{ ...encodeTxnRecord({ transactionalId, value }), timestamp: Date.now() }] });
    const result = await log.appendAsLeader(batch, { leaderEpoch: LEADER_EPOCH });
    await acknowledged(this.ctx, log, result.lastOffset);
  }

  writeMarkers(partitions: readonly TxnPartition[], marker: TxnMarker): Promise<void> {
    return writeTxnMarkers(this.ctx, partitions, marker);
  }

  /** Every record of every partition, partition by partition, each in log order. */
  async load(): Promise<TxnRecord[]> {
    const out: TxnRecord[] = [];
    for (const log of this.logs) await this.loadPartition(log, out);
    return out;
  }

  private async loadPartition(log: PartitionLog, out: TxnRecord[]): Promise<void> {
    await scanBatches(log, (batch) => {
      if (batch.isControl) return;
      for (const record of batch.toRecords()) {
        if (record.key === null) continue;
        try {
          const decoded = decodeTxnRecord(record.key, record.value);
          if (decoded !== null) out.push(decoded);
        } catch (error) {
          this.ctx.options.log(`seglog broker: transactions: skipped an unreadable record at ${log.topic}-${log.partition}@${record.offset}: ${errorMessageOf(error)}`);
        }
      }
    });
  }
}

async function acknowledged(ctx: BrokerContext, log: PartitionLog, lastOffset: number): Promise<void> {
  if (ctx.options.ackMode === 'sync') await log.durable(lastOffset);
  else await log.written(lastOffset);
  advanceHighWatermark(ctx, log, lastOffset + 1);
}

/**
 * A marker on every partition (in parallel; a partition deleted meanwhile is
 * skipped), each acknowledged and its HW moved; then the transaction's group
 * offsets are completed if a marker went to __consumer_offsets.
 */
export async function writeTxnMarkers(ctx: BrokerContext, partitions: readonly TxnPartition[], marker: TxnMarker): Promise<void> {
  let groupOffsets = false;
  await Promise.all(partitions.map(async ({ topic, partition }) => {
    const log = ctx.store.get(topic, partition);
    if (log === undefined) return;
    if (topic === OFFSETS_TOPIC) groupOffsets = true;
    const result = await log.appendMarker({
      type: marker.commit ? 'COMMIT' : 'ABORT', producerId: marker.producerId, producerEpoch: marker.producerEpoch,
      coordinatorEpoch: 0, leaderEpoch: LEADER_EPOCH,
    });
    await acknowledged(ctx, log, result.lastOffset);
  }));
  if (groupOffsets) completeTxnOffsets(ctx.groups, marker.producerId, marker.commit);
}
