// __transaction_state is a compacted topic (issue 22): the log cleaner keeps
// only each transactional id's latest record and, after delete.retention.ms,
// drops the tombstones of expired ids. A coordinator loaded from the cleaned
// topic must hold exactly what the one that wrote it held: every id's producer
// id, epoch, state, partitions and timeout; an expired id stays gone; the
// next InitProducerId of each id continues from the stored epoch; an Ongoing
// transaction is still aborted by the next InitProducerId.
//
// The topic is created ahead with 1 KiB segments (the broker's own default is
// Kafka's 100 MiB, so nothing would roll) and delete.retention.ms=0, so a
// second pass removes tombstones. The workload is a seeded random schedule of
// inits, epoch bumps, commits, aborts and transactions left open over 10 ids,
// with a block of ids expired (tombstoned) halfway. The check that the test
// can fail: the cleaned topic must be smaller, hold each live key once in its
// cleaned part, and no tombstone after the second pass.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SimIo } from '@seglog/io';
import { LogConfig, type Log } from '@seglog/log';
import { TopicStore } from '../src/internal/topic-store.js';
import type { TransactionCoordinator } from '../src/internal/txn/transaction-coordinator.js';
import { TXN_STATE_TOPIC } from '../src/internal/txn/txn-state-topic.js';
import { scanBatches } from '../src/internal/partition-scan.js';
import { DIR, openWorld, produceTxn, type TxnWorld } from './txn-support.js';

const TOPIC = 't';
const NO_EXPECTED = { producerId: -1, producerEpoch: -1 };
const EXPIRATION_MS = 10_000;
const txnOptions = { transactionalIdExpirationMs: EXPIRATION_MS, removeExpiredTransactionalIdsIntervalMs: 1000 };

/** Uniform doubles in [0, 1) from SHA-256 of (seed, counter): the schedule is the same on every run. */
function seededRandom(seed: string): () => number {
  let counter = 0;
  return () => createHash('sha256').update(`${seed}/${counter++}`).digest().readUInt32BE(0) / 2 ** 32;
}

type Snapshot = Record<string, { producerId: number; producerEpoch: number; state: string; partitions: string[]; timeoutMs: number; startMs: number; updateMs: number }>;

function snapshot(txns: TransactionCoordinator): Snapshot {
  const out: Snapshot = {};
  for (const t of txns.txns.values()) {
    out[t.transactionalId] = {
      producerId: t.producerId, producerEpoch: t.producerEpoch, state: t.state,
      startMs: t.startMs, updateMs: t.updateMs,
      partitions: [...t.partitions.keys()].sort(), timeoutMs: t.timeoutMs,
    };
  }
  return out;
}

function stateLogs(world: TxnWorld): Log[] {
  const out: Log[] = [];
  for (let p = 0; p < world.store.partitionCount(TXN_STATE_TOPIC); p++) out.push(world.store.get(TXN_STATE_TOPIC, p) as Log);
  return out;
}

interface KeyedRecord { offset: number; key: string; tombstone: boolean }

async function recordsOf(log: Log): Promise<KeyedRecord[]> {
  const out: KeyedRecord[] = [];
  await scanBatches(log, (batch) => {
    for (const record of batch.toRecords()) out.push({ offset: record.offset, key: record.key?.toString('hex') ?? '', tombstone: record.value === null });
  });
  return out;
}

/** Runs `steps` random actions on `ids`; every call must succeed (retrying CONCURRENT_TRANSACTIONS after the abort it caused). */
async function workload(world: TxnWorld, ids: readonly string[], steps: number, random: () => number): Promise<void> {
  const { txns, ctx } = world;
  const sequences = new Map<string, number>();
  for (let step = 0; step < steps; step++) {
    const id = ids[Math.floor(random() * ids.length)] as string;
    const current = txns.txns.get(id);
    const expected = current === undefined ? NO_EXPECTED : { producerId: current.producerId, producerEpoch: current.producerEpoch };
    const roll = random();
    if (current === undefined || roll < 0.15) {
      let answer = await txns.initProducerId(id, 60_000 + step, expected);
      if (answer.error === 'CONCURRENT_TRANSACTIONS') {
        await txns.settled();
        answer = await txns.initProducerId(id, 60_000 + step, NO_EXPECTED);
      }
      expect(answer.error).toBe('NONE');
      continue;
    }
    const me = { transactionalId: id, producerId: current.producerId, producerEpoch: current.producerEpoch };
    if (current.state === 'Ongoing' && roll < 0.6) {
      expect(await txns.endTxn(me, roll < 0.4)).toBe('NONE');
      continue;
    }
    if (current.state === 'Ongoing') continue; // left open for now
    const partition = Math.floor(random() * 2);
    expect(await txns.addPartitions(me, [{ topic: TOPIC, partition }])).toBe('NONE');
    const log = world.store.get(TOPIC, partition);
    if (log === undefined) throw new Error('no partition');
    const sequenceKey = `${current.producerId}/${current.producerEpoch}/${partition}`; // sequences are per producer epoch and partition
    const sequence = sequences.get(sequenceKey) ?? 0;
    await produceTxn(ctx, log, { producerId: current.producerId, producerEpoch: current.producerEpoch, sequence }, 2);
    sequences.set(sequenceKey, sequence + 2);
  }
  await txns.settled();
}

describe('__transaction_state compaction', () => {
  it('a coordinator loaded from the cleaned topic holds what the writer held; tombstones go after delete.retention.ms', async () => {
    const io = new SimIo({ seed: 22 });
    const setup = await TopicStore.open({ dataDir: DIR, blackhole: false, config: new LogConfig({}), tailCacheBytes: null, log: () => undefined, io });
    expect(await setup.createInternal(TXN_STATE_TOPIC, 2, { 'cleanup.policy': 'compact', 'segment.bytes': '1024', 'delete.retention.ms': '0' })).toBe(true);
    await setup.close();

    const random = seededRandom('txn-state-compact');
    const world = await openWorld(io, { topic: TOPIC, partitions: 2, txn: txnOptions });
    const early = ['e0', 'e1', 'e2', 'e3'];
    const late = ['l0', 'l1', 'l2', 'l3', 'l4', 'l5'];
    await workload(world, early, 60, random);
    // Close every early transaction so they are idle, then let them expire (tombstones).
    for (const id of early) {
      const t = world.txns.txns.get(id);
      if (t?.state === 'Ongoing') expect(await world.txns.endTxn({ transactionalId: id, producerId: t.producerId, producerEpoch: t.producerEpoch }, true)).toBe('NONE');
    }
    await world.txns.settled();
    world.clock.advance(EXPIRATION_MS + 1000);
    await world.txns.settled();
    expect(early.filter((id) => world.txns.txns.has(id))).toEqual([]);
    await workload(world, late, 120, random);
    // l1 ends aborted, l2 committed, whatever the schedule left (l0..l5 may be Ongoing).
    for (const [id, commit] of [['l1', false], ['l2', true]] as const) {
      if (!world.txns.txns.has(id)) expect((await world.txns.initProducerId(id, 60_000, NO_EXPECTED)).error).toBe('NONE');
      let t = world.txns.txns.get(id);
      if (t === undefined) throw new Error('missing');
      if (t.state !== 'Ongoing') {
        const me = { transactionalId: id, producerId: t.producerId, producerEpoch: t.producerEpoch };
        expect(await world.txns.addPartitions(me, [{ topic: TOPIC, partition: 0 }])).toBe('NONE');
        t = world.txns.txns.get(id) ?? t;
      }
      expect(await world.txns.endTxn({ transactionalId: id, producerId: t.producerId, producerEpoch: t.producerEpoch }, commit)).toBe('NONE');
    }
    await world.txns.settled();
    const before = snapshot(world.txns);
    expect(Object.keys(before).sort()).toEqual(late);
    expect(Object.values(before).some((t) => t.state === 'Ongoing')).toBe(true);
    expect(before['l1']?.state).toBe('CompleteAbort');
    expect(before['l2']?.state).toBe('CompleteCommit');

    const logs = stateLogs(world);
    const cleaner = world.store.logManager?.cleaner;
    if (cleaner === undefined) throw new Error('no cleaner');
    const sizeOf = (): number => logs.reduce((sum, log) => sum + log.size, 0);
    const recordsBefore = (await Promise.all(logs.map(recordsOf))).flat().length;
    const bytesBefore = sizeOf();
    for (const log of logs) expect(log.segmentBaseOffsets().length).toBeGreaterThan(3);

    // Pass 1 keeps each key's latest record (tombstones get their horizon); pass 2 drops the tombstones.
    for (const log of logs) await cleaner.clean(log);
    const afterFirst = (await Promise.all(logs.map(recordsOf))).flat();
    expect(afterFirst.length).toBeLessThan(recordsBefore / 3);
    for (const log of logs) await cleaner.clean(log);
    expect(sizeOf()).toBeLessThan(bytesBefore / 3);
    for (const log of logs) {
      const active = log.segmentBaseOffsets().at(-1) ?? 0;
      const cleaned = (await recordsOf(log)).filter((r) => r.offset < active);
      expect(cleaned.filter((r) => r.tombstone)).toEqual([]);
      expect(new Set(cleaned.map((r) => r.key)).size).toBe(cleaned.length);
    }
    world.txns.shutdown();
    await world.store.close();

    // The reloaded coordinator: the same state; expired ids gone; epochs continue.
    const reopened = await openWorld(io, { topic: TOPIC, partitions: 2, firstProducerId: 5000, txn: txnOptions });
    expect(snapshot(reopened.txns)).toEqual(before);
    for (const id of early) expect(reopened.txns.describe(id).error).toBe('TRANSACTIONAL_ID_NOT_FOUND');
    for (const id of late) {
      const t = before[id];
      if (t === undefined) throw new Error('missing');
      const answer = await reopened.txns.initProducerId(id, 60_000, { producerId: t.producerId, producerEpoch: t.producerEpoch });
      if (t.state === 'Ongoing') {
        // The open transaction is aborted with the bumped epoch first.
        expect(answer.error).toBe('CONCURRENT_TRANSACTIONS');
        await reopened.txns.settled();
        expect(reopened.txns.txns.get(id)?.state).toBe('CompleteAbort');
      } else {
        expect(answer).toEqual({ error: 'NONE', producerId: t.producerId, producerEpoch: t.producerEpoch + 1 });
      }
    }
    // An expired id starts afresh: a new producer id at epoch 0.
    expect(await reopened.txns.initProducerId('e0', 60_000, NO_EXPECTED)).toEqual({ error: 'NONE', producerId: 5000, producerEpoch: 0 });
    reopened.txns.shutdown();
    await reopened.store.close();
  });
});
