// Crash points inside EndTxn on SimIo: a transaction over two partitions
// (and the group offsets of a TxnOffsetCommit on __consumer_offsets is out of
// scope here: see test/broker-kafkajs-txn.test.ts) is committed, and the
// machine stops at a fast-check-chosen crash point between the start of
// EndTxn and its answer, in every crash mode. After recovery a new
// coordinator loads __transaction_state (completing a prepared transaction),
// the clock passes the transaction timeout (aborting one that never got
// prepared), and then:
//   - every partition has a marker of the producer, all of one outcome, the
//     same on both (atomicity; a crash between the markers and CompleteCommit
//     writes them again at recovery, as Kafka does: harmless repeats);
//   - an EndTxn answered NONE before the crash is a COMMIT (durability);
//   - no transaction is left open: the LSO is the HW on every partition.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SimIo } from '@seglog/io';
import type { CrashMode } from '@seglog/io';
import { markersOf, openWorld, produceTxn, type TxnWorld } from './txn-support.js';

const TOPIC = 't';
const MODES: readonly CrashMode[] = ['process', 'power-clean', 'power-chaotic', 'power-ordered'];
const TIMEOUT_MS = 5000;

/** Init, add both partitions, produce to both. Returns the producer. */
async function begin(world: TxnWorld): Promise<{ transactionalId: string; producerId: number; producerEpoch: number }> {
  const got = await world.txns.initProducerId('crash', TIMEOUT_MS, { producerId: -1, producerEpoch: -1 });
  expect(got.error).toBe('NONE');
  const me = { transactionalId: 'crash', producerId: got.producerId, producerEpoch: got.producerEpoch };
  expect(await world.txns.addPartitions(me, [{ topic: TOPIC, partition: 0 }, { topic: TOPIC, partition: 1 }])).toBe('NONE');
  for (const partition of [0, 1]) {
    const log = world.store.get(TOPIC, partition);
    if (log === undefined) throw new Error('no partition');
    await produceTxn(world.ctx, log, { producerId: me.producerId, producerEpoch: me.producerEpoch, sequence: 0 }, 3);
  }
  return me;
}

describe('EndTxn on SimIo crashes', () => {
  it('a commit cut at any crash point and mode ends atomically, and an answered one is a commit', async () => {
    // The crash points of a full run: before EndTxn and after its answer.
    const probe = new SimIo({ seed: 1 });
    const world = await openWorld(probe, { topic: TOPIC, partitions: 2 });
    const me = await begin(world);
    const before = probe.crashPoints;
    expect(await world.txns.endTxn(me, true)).toBe('NONE');
    const after = probe.crashPoints;
    await world.store.close();
    // PrepareCommit, two markers, CompleteCommit: each at least a write and an fdatasync.
    expect(after - before).toBeGreaterThanOrEqual(8);

    await fc.assert(fc.asyncProperty(fc.integer({ min: before + 1, max: after }), fc.constantFrom(...MODES), fc.integer({ min: 1, max: 1000 }), async (crashAt, mode, seed) => {
      const io = new SimIo({ seed: 1, crashAt });
      let answered = false;
      let producerId = -1;
      try {
        const crashing = await openWorld(io, { topic: TOPIC, partitions: 2 });
        const started = await begin(crashing);
        producerId = started.producerId;
        answered = (await crashing.txns.endTxn(started, true)) === 'NONE';
        await crashing.txns.settled();
      } catch {
        // The crash: what was answered before it is what must hold.
      }
      // The set-up is deterministic (seed 1), so the crash falls inside EndTxn.
      expect(producerId, `crash at ${crashAt} hit the set-up`).toBe(1000);
      const recovered = await openWorld(io.recover(mode, { seed }), { topic: TOPIC, partitions: 2, firstProducerId: 2000 });
      await recovered.txns.settled();
      recovered.clock.advance(TIMEOUT_MS + recovered.txns.options.abortTimedOutIntervalMs);
      await recovered.txns.settled();
      const outcomes: boolean[] = [];
      for (const partition of [0, 1]) {
        const log = recovered.store.get(TOPIC, partition);
        if (log === undefined) throw new Error('no partition');
        const markers = (await markersOf(log)).filter((m) => m.producerId === producerId);
        expect(markers.length, `partition ${partition} after a crash at ${crashAt} (${mode})`).toBeGreaterThanOrEqual(1);
        expect(new Set(markers.map((m) => m.commit)).size, `one outcome on partition ${partition} after a crash at ${crashAt} (${mode})`).toBe(1);
        outcomes.push(markers[0]?.commit ?? false);
        expect(log.lastStableOffset).toBe(log.highWatermark);
      }
      expect(outcomes[0], `atomic after a crash at ${crashAt} (${mode})`).toBe(outcomes[1]);
      if (answered) expect(outcomes[0], `answered commit after a crash at ${crashAt} (${mode})`).toBe(true);
      const state = recovered.txns.txns.get('crash')?.state;
      expect(state).toBe(outcomes[0] === true ? 'CompleteCommit' : 'CompleteAbort');
      await recovered.store.close();
    }), { numRuns: 60 });
  });
});
