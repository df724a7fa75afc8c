// The transaction coordinator over real logs on SimIo (markers through
// Log.appendMarker, state in __transaction_state) and a simulated clock
// (timers fire only when the test advances it: no verdict depends on elapsed
// time):
//   - fencing: an epoch bump answers the old epoch PRODUCER_FENCED, and the
//     partition refuses the old epoch after the abort marker; KIP-360 bumps and
//     their retries;
//   - an Ongoing transaction of a re-initialised id is aborted with the new epoch;
//   - transaction.timeout.ms: the clock aborts an idle transaction (fenced);
//   - concurrent transactions on one partition (fast-check schedules against a
//     trivial model): the LSO is always the first offset of the earliest open
//     transaction, else the high watermark; every ended transaction has
//     exactly one marker of its outcome;
//   - the state round-trips through __transaction_state (a reopened coordinator);
//   - verifyProduce (Produce's KIP-890 check): loading, a pending add, a
//     prepared transaction, a completed one.
//   - transactional.id.expiration.ms: an idle id past it is tombstoned and
//     forgotten (also after a reopen) and starts afresh; an Ongoing or prepared
//     one stays; a failed tombstone keeps the id for the next check.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SimIo } from '@seglog/io';
import { kafkaErrorCode } from '../src/protocol/index.js';
import { fencedBefore } from '../src/internal/handlers/txn-errors.js';
import type { PartitionLog } from '../src/internal/topic-store.js';
import { decodeTxnRecord, encodeTxnRecord, type StoredTxn } from '../src/internal/txn/txn-records.js';
import { TransactionCoordinator } from '../src/internal/txn/transaction-coordinator.js';
import type { TxnPersistence } from '../src/internal/txn/txn-persistence.js';
import { SimClock, markersOf, openWorld, produceTxn } from './txn-support.js';

const TOPIC = 't';
const NO_EXPECTED = { producerId: -1, producerEpoch: -1 };

function partitionLog(world: Awaited<ReturnType<typeof openWorld>>, partition: number): PartitionLog {
  const log = world.store.get(TOPIC, partition);
  if (log === undefined) throw new Error('no partition');
  return log;
}

describe('TransactionLogValue records', () => {
  it('round-trip, and a v1 (flexible, tagged) value reads', () => {
    const value: StoredTxn = {
      producerId: 7, producerEpoch: 3, transactionTimeoutMs: 60000, state: 'Ongoing',
      partitions: [{ topic: 'a', partition: 0 }, { topic: 'a', partition: 2 }, { topic: 'b', partition: 1 }], lastUpdateTimestampMs: 11, startTimestampMs: 10,
    };
    const { key, value: bytes } = encodeTxnRecord({ transactionalId: 'tx', value });
    expect(decodeTxnRecord(key, bytes)).toEqual({ transactionalId: 'tx', value });
    expect(decodeTxnRecord(key, null)).toEqual({ transactionalId: 'tx', value: null });
    // v1 by hand: int16 1, producerId, [tags come at the end], epoch, timeout, status 4, compact array of 1 topic.
    const v1 = Buffer.concat([
      Buffer.from('0001', 'hex'), Buffer.from('0000000000000009', 'hex'), Buffer.from('0002', 'hex'), Buffer.from('0000ea60', 'hex'), Buffer.from('04', 'hex'),
      Buffer.from([2, 2, 0x78, 2, 0, 0, 0, 5, 0]), Buffer.from('000000000000000c', 'hex'), Buffer.from('000000000000000b', 'hex'),
      Buffer.from([1, 2, 2, 0, 1]), // one tagged field: tag 2 (ClientTransactionVersion), 2 bytes
    ]);
    expect(decodeTxnRecord(key, v1)?.value).toEqual({
      producerId: 9, producerEpoch: 2, transactionTimeoutMs: 60000, state: 'CompleteCommit', partitions: [{ topic: 'x', partition: 5 }],
      lastUpdateTimestampMs: 12, startTimestampMs: 11,
    });
    expect(() => decodeTxnRecord(key, Buffer.from('0000000000000000000100000000000007', 'hex'))).toThrow();
  });
});

describe('TransactionCoordinator', () => {
  it('fences an old epoch: PRODUCER_FENCED at the coordinator, refused at the partition after the abort', async () => {
    const world = await openWorld(new SimIo({ seed: 1 }), { topic: TOPIC, partitions: 1 });
    const { txns, ctx } = world;
    const log = partitionLog(world, 0);
    const first = await txns.initProducerId('tx', 60_000, NO_EXPECTED);
    expect(first).toEqual({ error: 'NONE', producerId: 1000, producerEpoch: 0 });
    const old = { transactionalId: 'tx', producerId: 1000, producerEpoch: 0 };
    expect(await txns.addPartitions(old, [{ topic: TOPIC, partition: 0 }])).toBe('NONE');
    await produceTxn(ctx, log, { producerId: 1000, producerEpoch: 0, sequence: 0 }, 3);
    // A second instance: the open transaction is aborted with epoch 1, the client retries.
    expect((await txns.initProducerId('tx', 60_000, NO_EXPECTED)).error).toBe('CONCURRENT_TRANSACTIONS');
    await txns.settled();
    expect(txns.txns.get('tx')?.state).toBe('CompleteAbort');
    expect(await markersOf(log)).toEqual([{ producerId: 1000, producerEpoch: 1, commit: false, offset: 3 }]);
    expect(log.lastStableOffset).toBe(4);
    const second = await txns.initProducerId('tx', 60_000, NO_EXPECTED);
    expect(second).toEqual({ error: 'NONE', producerId: 1000, producerEpoch: 2 });
    // The zombie: fenced everywhere.
    expect(await txns.endTxn(old, true)).toBe('PRODUCER_FENCED');
    expect(await txns.addPartitions(old, [{ topic: TOPIC, partition: 0 }])).toBe('PRODUCER_FENCED');
    expect(txns.checkOngoing(old, { topic: TOPIC, partition: 0 })).toBe('PRODUCER_FENCED');
    await expect(produceTxn(ctx, log, { producerId: 1000, producerEpoch: 0, sequence: 3 }, 1)).rejects.toMatchObject({ kafka: expect.stringMatching(/INVALID_PRODUCER_EPOCH|PRODUCER_FENCED/) });
    // Old request versions get INVALID_PRODUCER_EPOCH instead (Kafka's mapping).
    expect(kafkaErrorCode(fencedBefore(2, 1, 'PRODUCER_FENCED'))).toBe(kafkaErrorCode('INVALID_PRODUCER_EPOCH'));
    expect(fencedBefore(2, 2, 'PRODUCER_FENCED')).toBe('PRODUCER_FENCED');
    // Unknown ids and producer ids.
    expect(await txns.endTxn({ transactionalId: 'nope', producerId: 1000, producerEpoch: 2 }, true)).toBe('INVALID_PRODUCER_ID_MAPPING');
    expect(await txns.endTxn({ transactionalId: 'tx', producerId: 999, producerEpoch: 2 }, true)).toBe('INVALID_PRODUCER_ID_MAPPING');
    // Nothing to end.
    expect(await txns.endTxn({ transactionalId: 'tx', producerId: 1000, producerEpoch: 2 }, true)).toBe('INVALID_TXN_STATE');
    expect((await txns.initProducerId('tx', 900_001, NO_EXPECTED)).error).toBe('INVALID_TRANSACTION_TIMEOUT');
    await world.store.close();
  });

  it('KIP-360: the current pair gets a bump, a retry of it the same answer, an older pair PRODUCER_FENCED', async () => {
    const world = await openWorld(new SimIo({ seed: 2 }), { topic: TOPIC, partitions: 1 });
    const { txns } = world;
    expect(await txns.initProducerId('k', 60_000, NO_EXPECTED)).toEqual({ error: 'NONE', producerId: 1000, producerEpoch: 0 });
    expect(await txns.initProducerId('k', 60_000, { producerId: 1000, producerEpoch: 0 })).toEqual({ error: 'NONE', producerId: 1000, producerEpoch: 1 });
    expect(await txns.initProducerId('k', 60_000, { producerId: 1000, producerEpoch: 0 })).toEqual({ error: 'NONE', producerId: 1000, producerEpoch: 1 });
    expect((await txns.initProducerId('k', 60_000, { producerId: 1000, producerEpoch: 5 })).error).toBe('PRODUCER_FENCED');
    expect((await txns.initProducerId('k', 60_000, { producerId: 77, producerEpoch: 1 })).error).toBe('PRODUCER_FENCED');
    await world.store.close();
  });

  it('aborts a transaction left open past transaction.timeout.ms, fencing its producer', async () => {
    const world = await openWorld(new SimIo({ seed: 3 }), { topic: TOPIC, partitions: 2, txn: { abortTimedOutIntervalMs: 1000 } });
    const { txns, ctx, clock } = world;
    const { producerId, producerEpoch } = await txns.initProducerId('slow', 5000, NO_EXPECTED);
    const me = { transactionalId: 'slow', producerId, producerEpoch };
    expect(await txns.addPartitions(me, [{ topic: TOPIC, partition: 0 }, { topic: TOPIC, partition: 1 }])).toBe('NONE');
    await produceTxn(ctx, partitionLog(world, 0), { producerId, producerEpoch, sequence: 0 }, 2);
    await produceTxn(ctx, partitionLog(world, 1), { producerId, producerEpoch, sequence: 0 }, 2);
    clock.advance(4000);
    await txns.settled();
    expect(txns.txns.get('slow')?.state).toBe('Ongoing');
    expect(partitionLog(world, 0).lastStableOffset).toBe(0);
    clock.advance(1000);
    await txns.settled();
    expect(txns.txns.get('slow')?.state).toBe('CompleteAbort');
    for (const partition of [0, 1]) {
      const log = partitionLog(world, partition);
      expect(await markersOf(log)).toEqual([{ producerId, producerEpoch: producerEpoch + 1, commit: false, offset: 2 }]);
      expect(log.lastStableOffset).toBe(log.highWatermark);
    }
    expect(await txns.endTxn(me, true)).toBe('PRODUCER_FENCED');
    expect(txns.list({ states: [], producerIds: [], durationMs: -1 }).map((t) => [t.transactionalId, t.state])).toEqual([['slow', 'CompleteAbort']]);
    expect(txns.openTransactions()).toEqual([]);
    await world.store.close();
  });

  it('concurrent transactions on one partition: the LSO holds at the earliest open one (model)', async () => {
    const PRODUCERS = 3;
    const step = fc.record({ producer: fc.nat({ max: PRODUCERS - 1 }), action: fc.constantFrom('produce', 'produce', 'commit', 'abort') });
    let run = 0;
    await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 24 }), async (steps) => {
      const world = await openWorld(new SimIo({ seed: 100 + run++ }), { topic: TOPIC, partitions: 1 });
      const { txns, ctx } = world;
      const log = partitionLog(world, 0);
      const producers = [];
      for (let i = 0; i < PRODUCERS; i++) {
        const got = await txns.initProducerId(`c${i}`, 60_000, NO_EXPECTED);
        producers.push({ transactionalId: `c${i}`, producerId: got.producerId, producerEpoch: got.producerEpoch, sequence: 0 });
      }
      // The model: producer → first offset of its open transaction.
      const open = new Map<number, number>();
      const outcomes: { producerId: number; commit: boolean }[] = [];
      for (const { producer: index, action } of steps) {
        const p = producers[index];
        if (p === undefined) throw new Error('no producer');
        if (action === 'produce') {
          expect(await txns.addPartitions(p, [{ topic: TOPIC, partition: 0 }])).toBe('NONE');
          const first = await produceTxn(ctx, log, p, 2);
          p.sequence += 2;
          if (!open.has(index)) open.set(index, first);
        } else {
          const error = await txns.endTxn(p, action === 'commit');
          if (!open.has(index)) {
            // Ending a transaction that never began (Empty), or repeating the last outcome's opposite.
            expect(error === 'INVALID_TXN_STATE' || error === 'NONE').toBe(true);
            continue;
          }
          expect(error).toBe('NONE');
          open.delete(index);
          outcomes.push({ producerId: p.producerId, commit: action === 'commit' });
        }
        const earliest = Math.min(...open.values());
        expect(log.lastStableOffset).toBe(open.size === 0 ? log.highWatermark : earliest);
      }
      expect((await markersOf(log)).map((m) => ({ producerId: m.producerId, commit: m.commit }))).toEqual(outcomes);
      // The state survives a reopen of __transaction_state (no crash: the same disk).
      const reloaded = await world.topic.load();
      const last = new Map(reloaded.map((r) => [r.transactionalId, r.value?.state]));
      for (const [index, p] of producers.entries()) expect(last.get(p.transactionalId)).toBe(txns.txns.get(`c${index}`)?.state);
      await world.store.close();
    }), { numRuns: 25 });
  });
});

describe('TransactionCoordinator.verifyProduce', () => {
  /** Stores at once; markers wait until the test releases them (holds a transaction in PrepareCommit). */
  function heldMarkers(): { persistence: TxnPersistence; release: () => void; markers: number } {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const out = {
      persistence: {
        store: () => Promise.resolve(),
        writeMarkers: async () => { await held; out.markers++; },
      } satisfies TxnPersistence,
      release: () => release(),
      markers: 0,
    };
    return out;
  }

  it('answers from the stored state: loading, a pending add, prepared, completed', async () => {
    const held = heldMarkers();
    let nextId = 7;
    const txns = new TransactionCoordinator({ persistence: held.persistence, clock: new SimClock(), allocateProducerId: () => Promise.resolve(nextId++) });
    const p0 = { topic: TOPIC, partition: 0 };
    const p1 = { topic: TOPIC, partition: 1 };
    const request = { transactionalId: 'v', producerId: 7, producerEpoch: 0 };
    expect(txns.verifyProduce(request, p0)).toBe('COORDINATOR_LOAD_IN_PROGRESS');
    txns.load([]);
    expect(txns.verifyProduce(request, p0)).toBe('INVALID_PRODUCER_ID_MAPPING');
    expect(await txns.initProducerId('v', 60_000, NO_EXPECTED)).toEqual({ error: 'NONE', producerId: 7, producerEpoch: 0 });
    expect(txns.verifyProduce(request, p0)).toBe('INVALID_TXN_STATE'); // Empty
    expect(await txns.addPartitions(request, [p0])).toBe('NONE');
    expect(txns.verifyProduce(request, p0)).toBe('NONE');
    expect(txns.verifyProduce({ ...request, producerEpoch: 1 }, p0)).toBe('PRODUCER_FENCED');
    expect(txns.verifyProduce({ ...request, producerId: 8 }, p0)).toBe('INVALID_PRODUCER_ID_MAPPING');
    expect(txns.verifyProduce({ ...request, transactionalId: 'w' }, p0)).toBe('INVALID_PRODUCER_ID_MAPPING');
    // While p1's add waits for its write, p0 (added) may be produced to; p1 only once stored.
    const adding = txns.addPartitions(request, [p1]);
    expect(txns.txns.get('v')?.pending).toBe(true);
    expect([txns.verifyProduce(request, p0), txns.verifyProduce(request, p1)]).toEqual(['NONE', 'INVALID_TXN_STATE']);
    expect(await adding).toBe('NONE');
    expect(txns.verifyProduce(request, p1)).toBe('NONE');
    // Prepared (markers held): retriable for the producer; completed: nothing is in the transaction any more.
    const ending = txns.endTxn(request, true);
    for (let i = 0; i < 100 && txns.txns.get('v')?.state !== 'PrepareCommit'; i++) await Promise.resolve();
    expect(txns.txns.get('v')?.state).toBe('PrepareCommit');
    expect(txns.verifyProduce(request, p0)).toBe('CONCURRENT_TRANSACTIONS');
    held.release();
    expect(await ending).toBe('NONE');
    expect(held.markers).toBe(1);
    expect([txns.verifyProduce(request, p0), txns.verifyProduce(request, p1)]).toEqual(['INVALID_TXN_STATE', 'INVALID_TXN_STATE']);
    txns.shutdown();
  });
});

describe('TransactionCoordinator: transactional.id.expiration.ms', () => {
  const EXPIRATION_MS = 10_000;
  const INTERVAL_MS = 1000;
  const txnOptions = { transactionalIdExpirationMs: EXPIRATION_MS, removeExpiredTransactionalIdsIntervalMs: INTERVAL_MS };

  it('an idle id past it is tombstoned and forgotten, also after a reopen; an Ongoing one stays; the next InitProducerId starts afresh', async () => {
    const io = new SimIo({ seed: 4 });
    const world = await openWorld(io, { topic: TOPIC, partitions: 1, txn: txnOptions });
    const { txns, clock } = world;
    const p0 = { topic: TOPIC, partition: 0 };
    expect(await txns.initProducerId('idle', 60_000, NO_EXPECTED)).toEqual({ error: 'NONE', producerId: 1000, producerEpoch: 0 });
    const done = await txns.initProducerId('done', 60_000, NO_EXPECTED);
    const doneMe = { transactionalId: 'done', producerId: done.producerId, producerEpoch: done.producerEpoch };
    expect(await txns.addPartitions(doneMe, [p0])).toBe('NONE');
    expect(await txns.endTxn(doneMe, true)).toBe('NONE');
    const open = await txns.initProducerId('open', 900_000, NO_EXPECTED);
    expect(await txns.addPartitions({ transactionalId: 'open', producerId: open.producerId, producerEpoch: open.producerEpoch }, [p0])).toBe('NONE');
    expect(await txns.initProducerId('later', 60_000, NO_EXPECTED)).toEqual({ error: 'NONE', producerId: 1003, producerEpoch: 0 });
    const states = (): [string, string][] => [...txns.txns.values()].map((t) => [t.transactionalId, t.state]);
    // 'later' is updated again 5 s in (an epoch bump): its age counts from then.
    clock.advance(5000);
    expect((await txns.initProducerId('later', 60_000, { producerId: 1003, producerEpoch: 0 })).producerEpoch).toBe(1);
    clock.advance(EXPIRATION_MS - 5000 - 1);
    await txns.settled();
    expect(states()).toEqual([['idle', 'Empty'], ['done', 'CompleteCommit'], ['open', 'Ongoing'], ['later', 'Empty']]);
    // The check at exactly EXPIRATION_MS after the last update removes the two idle ids.
    clock.advance(1);
    await txns.settled();
    expect(states()).toEqual([['open', 'Ongoing'], ['later', 'Empty']]);
    expect(txns.describe('idle').error).toBe('TRANSACTIONAL_ID_NOT_FOUND');
    clock.advance(5000);
    await txns.settled();
    expect(states()).toEqual([['open', 'Ongoing']]);
    // Far past it (but inside its 900 s timeout) the Ongoing id still stays.
    clock.advance(50 * EXPIRATION_MS);
    await txns.settled();
    expect(states()).toEqual([['open', 'Ongoing']]);
    // The last record of each expired id is a tombstone.
    const last = new Map((await world.topic.load()).map((r) => [r.transactionalId, r.value]));
    expect(Object.fromEntries([...last.entries()].map(([id, value]) => [id, value?.state ?? null]))).toEqual({ idle: null, done: null, open: 'Ongoing', later: null });
    txns.shutdown();
    await world.store.close();

    // A reopened coordinator loads only the Ongoing id; an expired id starts with a new producer id and epoch 0.
    const reopened = await openWorld(io, { topic: TOPIC, partitions: 1, firstProducerId: 2000, txn: txnOptions });
    expect([...reopened.txns.txns.keys()]).toEqual(['open']);
    expect(await reopened.txns.initProducerId('idle', 60_000, NO_EXPECTED)).toEqual({ error: 'NONE', producerId: 2000, producerEpoch: 0 });
    expect((await reopened.txns.initProducerId('done', 60_000, { producerId: done.producerId, producerEpoch: done.producerEpoch })).producerId).toBe(2001);
    reopened.txns.shutdown();
    await reopened.store.close();
  });

  it('a prepared id never expires; while its tombstone is written an id is busy; a failed tombstone keeps the id', async () => {
    const stored: [string, StoredTxn | null][] = [];
    let failTombstones = true;
    let releaseMarkers = (): void => undefined;
    const markersHeld = new Promise<void>((resolve) => { releaseMarkers = resolve; });
    let releaseTombstone = (): void => undefined;
    const persistence: TxnPersistence = {
      store: async (transactionalId, value) => {
        if (value === null) {
          await new Promise<void>((resolve) => { releaseTombstone = resolve; });
          if (failTombstones) throw new Error('disk full');
        }
        stored.push([transactionalId, value]);
      },
      writeMarkers: () => markersHeld,
    };
    const clock = new SimClock();
    let nextId = 7;
    const txns = new TransactionCoordinator({ persistence, clock, allocateProducerId: () => Promise.resolve(nextId++) }, txnOptions);
    txns.load([]);
    expect(await txns.initProducerId('idle', 60_000, NO_EXPECTED)).toEqual({ error: 'NONE', producerId: 7, producerEpoch: 0 });
    const prepared = await txns.initProducerId('prepared', 900_000, NO_EXPECTED);
    const me = { transactionalId: 'prepared', producerId: prepared.producerId, producerEpoch: prepared.producerEpoch };
    expect(await txns.addPartitions(me, [{ topic: TOPIC, partition: 0 }])).toBe('NONE');
    const ending = txns.endTxn(me, true);
    for (let i = 0; i < 100 && txns.txns.get('prepared')?.state !== 'PrepareCommit'; i++) await Promise.resolve();
    expect(txns.txns.get('prepared')?.state).toBe('PrepareCommit');
    clock.advance(EXPIRATION_MS);
    // The tombstone of 'idle' waits: the id is busy meanwhile.
    expect(txns.txns.get('idle')?.pending).toBe(true);
    expect((await txns.initProducerId('idle', 60_000, NO_EXPECTED)).error).toBe('CONCURRENT_TRANSACTIONS');
    releaseTombstone();
    await Promise.race([txns.settled(), ending]);
    for (let i = 0; i < 100 && txns.txns.get('idle')?.pending === true; i++) await Promise.resolve();
    // The write failed: the id stays as it was, the prepared one too.
    expect([...txns.txns.values()].map((t) => [t.transactionalId, t.state, t.pending])).toEqual([['idle', 'Empty', false], ['prepared', 'PrepareCommit', true]]);
    // The next check retries it.
    failTombstones = false;
    clock.advance(INTERVAL_MS);
    releaseTombstone();
    for (let i = 0; i < 100 && txns.txns.has('idle'); i++) await Promise.resolve();
    expect([...txns.txns.keys()]).toEqual(['prepared']);
    expect(stored.at(-1)).toEqual(['idle', null]);
    // Once complete, the prepared id expires like any idle one.
    releaseMarkers();
    expect(await ending).toBe('NONE');
    expect(txns.txns.get('prepared')?.state).toBe('CompleteCommit');
    clock.advance(EXPIRATION_MS);
    releaseTombstone();
    await txns.settled();
    expect(txns.txns.size).toBe(0);
    expect(stored.at(-1)).toEqual(['prepared', null]);
    txns.shutdown();
  });
});
