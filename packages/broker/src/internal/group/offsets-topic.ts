// OffsetsTopic: the group coordinator's storage, Kafka's internal
// `__consumer_offsets` topic through the engine (TopicStore → LogManager).
//
// Layout (Kafka's): a group's records all go to partition
// Utils.abs(groupId.hashCode()) % partitions (Java's String.hashCode over
// UTF-16 code units), one uncompressed v2 batch per coordinator write, keys and
// values in Kafka's record formats (group-records.ts). So a group's records
// are in one log, in the order the coordinator wrote them, and loading replays
// them in that order (last write per key wins; a null value deletes).
//
// Durability: append() resolves when the batch is acknowledged as a produce
// with acks=-1 is (--sync-on-ack: covered by an fdatasync; otherwise written
// to the file), and moves the partition's high watermark. A write the log
// refuses rejects with the log's error (the coordinator answers an error).
//
// Compaction: created compacted (OFFSETS_TOPIC_CONFIGS). A topic an older
// broker made with cleanup.policy=delete (retention would drop the commits of
// idle groups) is switched to compact at open, its other overrides kept,
// through TopicStore.setConfigs (persisted, every partition reopened) before
// anything is loaded or written, and the switch is logged.
//
// Load: every partition is read from its log start to its end before the
// coordinator answers; a record that does not decode is reported (once, with
// its place) and skipped: one damaged record must not take every group down.
//
// Transactional offsets (TxnOffsetCommit, txn-offsets.ts): a transactional
// batch of the producer, sequenced as a producer would (0 at a new epoch, then
// consecutive; the next sequence per producer is rebuilt while loading). On
// load its records count only from the COMMIT marker that follows (an ABORT
// drops them); those without a marker yet are pendingAtLoad.

import { assert } from '@seglog/common';
import { RecordBatch, buildBatch } from '@seglog/records';
import type { BrokerContext } from '../broker-context.js';
import { LEADER_EPOCH } from '../broker-context.js';
import { errorMessageOf } from '../errors.js';
import { advanceHighWatermark } from '../handlers/produce.js';
import { scanBatches } from '../partition-scan.js';
import type { PartitionLog } from '../topic-store.js';
import type { GroupPersistence, GroupRecord, PendingTxnOffset, TxnProducer } from './group-persistence.js';
import { decodeGroupRecord, encodeGroupRecord } from './group-records.js';

export const OFFSETS_TOPIC = '__consumer_offsets';
/** Bytes read per step while loading. */

/** Kafka's Utils.abs(String.hashCode()) % count. */
export function offsetsPartitionFor(groupId: string, count: number): number {
  assert(Number.isInteger(count) && count >= 1, 'offsetsPartitionFor: count must be positive');
  let hash = 0;
  for (let i = 0; i < groupId.length; i++) hash = (Math.imul(hash, 31) + groupId.charCodeAt(i)) | 0;
  const abs = hash === -2147483648 ? 0 : Math.abs(hash);
  return abs % count;
}

/** The topic configs __consumer_offsets is created with (Kafka's GroupCoordinator.offsetsTopicConfigs). */
export const OFFSETS_TOPIC_CONFIGS: Readonly<Record<string, string>> = Object.freeze({
  'cleanup.policy': 'compact',
  'segment.bytes': String(100 * 1024 * 1024),
});

/** An existing __consumer_offsets that is not compacted (an older broker's, cleanup.policy=delete) becomes compacted. */
async function maybeSwitchToCompact(ctx: BrokerContext): Promise<void> {
  if (ctx.store.logConfigOf(OFFSETS_TOPIC).compacted) return;
  const configs = ctx.store.configsOf(OFFSETS_TOPIC);
  const before = configs['cleanup.policy'] ?? `${ctx.store.defaultConfig.cleanupPolicy} (the broker default)`;
  await ctx.store.setConfigs(OFFSETS_TOPIC, { ...configs, 'cleanup.policy': OFFSETS_TOPIC_CONFIGS['cleanup.policy'] as string });
  assert(ctx.store.logConfigOf(OFFSETS_TOPIC).compacted, 'OffsetsTopic: __consumer_offsets must be compacted after the switch');
  ctx.options.log(`seglog broker: groups: ${OFFSETS_TOPIC} had cleanup.policy=${before}; switched to compact (committed offsets are kept per key, not by retention)`);
}

export class OffsetsTopic implements GroupPersistence {
  private readonly ctx: BrokerContext;
  private readonly logs: readonly PartitionLog[];
  /** Per partition and producer id (`partition:producerId`): the epoch and next sequence, as the partition's producer state expects them. */
  private readonly sequences: Map<string, { epoch: number; next: number }>;
  /** Transactional offsets read without their marker (by producer id), for the group coordinator after load(). */
  readonly pendingAtLoad: Map<number, PendingTxnOffset[]>;

  private constructor(ctx: BrokerContext, logs: readonly PartitionLog[]) {
    this.ctx = ctx;
    this.logs = logs;
    this.sequences = new Map();
    this.pendingAtLoad = new Map();
  }

  /** Opens (creating on first start) the topic with `partitions` partitions; an existing topic keeps its count. */
  static async open(ctx: BrokerContext, partitions: number): Promise<OffsetsTopic> {
    // Kafka's configs for __consumer_offsets: compacted (every record is keyed by group, or by
    // group, topic and partition; a null value is a tombstone), 100 MiB segments
    // (offsets.topic.segment.bytes), so the log cleaner keeps the latest record per key.
    if (!ctx.store.has(OFFSETS_TOPIC)) await ctx.store.createInternal(OFFSETS_TOPIC, partitions, OFFSETS_TOPIC_CONFIGS);
    else await maybeSwitchToCompact(ctx);
    const count = ctx.store.partitionCount(OFFSETS_TOPIC);
    const logs: PartitionLog[] = [];
    for (let partition = 0; partition < count; partition++) {
      const log = ctx.store.get(OFFSETS_TOPIC, partition);
      assert(log !== undefined, 'OffsetsTopic.open: a partition is missing');
      logs.push(log);
    }
    return new OffsetsTopic(ctx, logs);
  }

  get partitions(): number {
    return this.logs.length;
  }

  /** The partition holding `groupId`'s records. */
  partitionOf(groupId: string): number {
    return offsetsPartitionFor(groupId, this.logs.length);
  }

  async append(groupId: string, records: readonly GroupRecord[], producer?: TxnProducer): Promise<void> {
    assert(records.length > 0, 'OffsetsTopic.append: no records');
    const log = this.logs[offsetsPartitionFor(groupId, this.logs.length)];
    assert(log !== undefined, 'OffsetsTopic.append: no partition');
    const timestamp = Date.now();
    const encoded = records.map((record) => ({ ...encodeGroupRecord(record), timestamp }));
    let batch: Buffer;
    let sequence: { epoch: number; next: number } | null = null;
    if (producer === undefined) batch = buildBatch({ records: encoded });
    else {
      const known = this.sequences.get(`${log.partition}:${producer.producerId}`);
      sequence = { epoch: producer.producerEpoch, next: known !== undefined && known.epoch === producer.producerEpoch ? known.next : 0 };
      batch = buildBatch({
        records: encoded, producerId: producer.producerId, producerEpoch: producer.producerEpoch, baseSequence: sequence.next, transactional: true,
      });
    }
    const result = await log.appendAsLeader(batch, { leaderEpoch: LEADER_EPOCH });
    if (producer !== undefined && sequence !== null) {
      this.sequences.set(`${log.partition}:${producer.producerId}`, { epoch: sequence.epoch, next: sequence.next + records.length });
    }
    if (this.ctx.options.ackMode === 'sync') await log.durable(result.lastOffset);
    else await log.written(result.lastOffset);
    advanceHighWatermark(this.ctx, log, result.lastOffset + 1);
  }

  /** Every record of every partition, partition by partition, each in log order. */
  async load(): Promise<GroupRecord[]> {
    const out: GroupRecord[] = [];
    for (const log of this.logs) await this.loadPartition(log, out);
    return out;
  }

  private async loadPartition(log: PartitionLog, out: GroupRecord[]): Promise<void> {
    await scanBatches(log, (batch) => this.readBatch(log, batch, out));
  }

  private readBatch(log: PartitionLog, batch: RecordBatch, out: GroupRecord[]): void {
    if (batch.isControl) {
      this.readMarker(batch, out);
      return;
    }
    const transactional = batch.isTransactional && batch.producerId >= 0;
    if (transactional) this.sequences.set(`${log.partition}:${batch.producerId}`, { epoch: batch.producerEpoch, next: batch.lastSequence + 1 });
    for (const record of batch.toRecords()) {
      if (record.key === null) continue;
      try {
        const decoded = decodeGroupRecord(record.key, record.value);
        if (decoded === null) continue;
        if (!transactional) out.push(decoded);
        else if (decoded.kind === 'offset' && decoded.value !== null) {
          const pending = this.pendingAtLoad.get(batch.producerId) ?? [];
          pending.push({ groupId: decoded.groupId, topic: decoded.topic, partition: decoded.partition, value: decoded.value });
          this.pendingAtLoad.set(batch.producerId, pending);
        }
      } catch (error) {
        this.ctx.options.log(`seglog broker: groups: skipped an unreadable record at ${log.topic}-${log.partition}@${record.offset}: ${errorMessageOf(error)}`);
      }
    }
  }

  /** A COMMIT marker hands the producer's pending offsets to the load (in marker order); an ABORT drops them. */
  private readMarker(batch: RecordBatch, out: GroupRecord[]): void {
    const pending = this.pendingAtLoad.get(batch.producerId);
    if (pending === undefined) return;
    this.pendingAtLoad.delete(batch.producerId);
    const [marker] = batch.toRecords();
    // Control record key: version int16, type int16 (0 ABORT, 1 COMMIT).
    const commit = marker !== undefined && marker.key !== null && marker.key.length >= 4 && marker.key.readInt16BE(2) === 1;
    if (!commit) return;
    for (const p of pending) out.push({ kind: 'offset', groupId: p.groupId, topic: p.topic, partition: p.partition, value: p.value });
  }
}
