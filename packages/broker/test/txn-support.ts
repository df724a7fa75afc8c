// Test support for the transaction coordinator: a simulated clock whose
// timers fire only when a test advances it, and a broker context over a
// TopicStore on SimIo (sync acks), with the coordinator persisting to a real
// __transaction_state and writing real markers (TxnStateTopic).

import { SimIo } from '@seglog/io';
import { LogConfig } from '@seglog/log';
import { buildBatch } from '@seglog/records';
import { BROKER_DEFAULTS } from '../src/index.js';
import type { BrokerContext } from '../src/internal/broker-context.js';
import { FetchWaiters } from '../src/internal/fetch-waiters.js';
import type { GroupClock, GroupTimer } from '../src/internal/group/group-clock.js';
import { GroupCoordinator } from '../src/internal/group/group-coordinator.js';
import { advanceHighWatermark } from '../src/internal/handlers/produce.js';
import { scanBatches } from '../src/internal/partition-scan.js';
import { TopicStore, type PartitionLog } from '../src/internal/topic-store.js';
import { TransactionCoordinator, type TransactionCoordinatorOptions } from '../src/internal/txn/transaction-coordinator.js';
import { TxnStateTopic } from '../src/internal/txn/txn-state-topic.js';

export const DIR = '/data';

/** Timers fire only when the test advances the clock. */
export class SimClock implements GroupClock {
  nowMs = 1_000_000;
  private timers: { at: number; seq: number; fire: () => void; live: boolean }[] = [];
  private seq = 0;

  now(): number {
    return this.nowMs;
  }

  schedule(delayMs: number, fire: () => void): GroupTimer {
    const timer = { at: this.nowMs + Math.max(0, delayMs), seq: this.seq++, fire, live: true };
    this.timers.push(timer);
    return { cancel: () => { timer.live = false; } };
  }

  advance(ms: number): void {
    const until = this.nowMs + ms;
    for (;;) {
      this.timers = this.timers.filter((t) => t.live);
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (next === undefined || next.at > until) break;
      next.live = false;
      this.nowMs = next.at;
      next.fire();
    }
    this.nowMs = until;
  }
}

export interface TxnWorld {
  readonly io: SimIo;
  readonly store: TopicStore;
  readonly ctx: BrokerContext;
  readonly clock: SimClock;
  readonly txns: TransactionCoordinator;
  readonly topic: TxnStateTopic;
}

/** Opens the store on `io`, creates `topic` (partitions) unless present, and loads a coordinator from __transaction_state. */
export async function openWorld(io: SimIo, options: { topic: string; partitions: number; firstProducerId?: number; txn?: Partial<TransactionCoordinatorOptions> }): Promise<TxnWorld> {
  const store = await TopicStore.open({ dataDir: DIR, blackhole: false, config: new LogConfig({}), tailCacheBytes: null, log: () => undefined, io });
  const clock = new SimClock();
  let nextId = options.firstProducerId ?? 1000;
  const ctx: { -readonly [K in keyof BrokerContext]: BrokerContext[K] } = {
    options: { ...BROKER_DEFAULTS, ackMode: 'sync', log: () => undefined }, store, waiters: new FetchWaiters(10),
    stats: { requests: 0, appends: 0, appendedBytes: 0, fetches: 0, fetchedBytes: 0, connections: 0, connectionsTotal: 0, versionsSeen: new Map() },
    allocateProducerId: () => Promise.resolve(nextId++),
    groups: new GroupCoordinator({ append: () => Promise.resolve() }, clock),
    txns: null as unknown as TransactionCoordinator,
    advertised: { host: '127.0.0.1', port: 0 }, stopping: false, reportedDamage: new Set<string>(),
  };
  ctx.groups.load([]);
  if (!store.has(options.topic)) await store.create(options.topic, options.partitions);
  // One broker: the HW of a reopened log is its end (everything in it was acknowledged or is recovered as such).
  for (const log of store.logManager?.logs() ?? []) advanceHighWatermark(ctx, log, log.logEndOffset);
  const topic = await TxnStateTopic.open(ctx, 2);
  const txns = new TransactionCoordinator({ persistence: topic, clock, allocateProducerId: ctx.allocateProducerId }, options.txn);
  ctx.txns = txns;
  txns.load(await topic.load());
  return { io, store, ctx, clock, txns, topic };
}

/** A transactional producer's batch of `count` records, acknowledged (sync) with the HW moved. Returns its first offset. */
export async function produceTxn(
  ctx: BrokerContext, log: PartitionLog, producer: { producerId: number; producerEpoch: number; sequence: number }, count: number,
): Promise<number> {
  const batch = buildBatch({
    records: Array.from({ length: count }, (_, i) => ({ value: `p${producer.producerId}-${producer.sequence + i}`, timestamp: 1 })),
    producerId: producer.producerId, producerEpoch: producer.producerEpoch, baseSequence: producer.sequence, transactional: true,
  });
  const result = await log.appendAsLeader(batch, { leaderEpoch: 0 });
  await log.durable(result.lastOffset);
  advanceHighWatermark(ctx, log, result.lastOffset + 1);
  return result.firstOffset;
}

export interface MarkerSeen {
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly commit: boolean;
  readonly offset: number;
}

/** Every control batch of a partition, in log order. */
export async function markersOf(log: PartitionLog): Promise<MarkerSeen[]> {
  const out: MarkerSeen[] = [];
  await scanBatches(log, (batch) => {
    if (!batch.isControl) return;
    const [record] = batch.toRecords();
    out.push({ producerId: batch.producerId, producerEpoch: batch.producerEpoch, commit: record?.key?.readInt16BE(2) === 1, offset: batch.baseOffset });
  });
  return out;
}

/** Lets the coordinator's background work (markers, state writes on SimIo) run to its end. */
export async function settle(txns: TransactionCoordinator): Promise<void> {
  await txns.settled();
}
