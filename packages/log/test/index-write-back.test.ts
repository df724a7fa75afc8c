// Deferred index write-backs (sparse-index.ts SPARSE_WRITE_BACK_BYTES): an
// append that adds offset/time index entries writes them back only once a
// page of them is dirty; the roll and the close write back the rest, and a
// durable acknowledgement does not wait for them (recovery rebuilds them). Before, every
// appended batch with an index entry scheduled its own pool write (two per
// batch with the time index), which cost the broker's event loop more than
// the batch's data write. Fail-stop on a failed write-back is
// index-fail-stop.test.ts; a crash losing deferred entries loses nothing
// (recovery rebuilds the active segment's indexes: checked here).
import { CrashMode } from '@seglog/io';
import { describe, expect, it } from 'vitest';
import { SPARSE_WRITE_BACK_BYTES } from '../src/segment/sparse-index.js';
import { config, newIo, openLog, producerBatch, readAll } from './log-helpers.js';

const OFFSET_ENTRY_BYTES = 8;

/** Writes to the active segment's .index and .timeindex, in call order (SimIo's crash points). */
function indexWrites(): { ops: string[]; onCrashPoint: (p: { op: string; path: string }) => boolean } {
  const ops: string[] = [];
  return {
    ops,
    onCrashPoint: (p) => {
      if (/\.(index|timeindex)$/.test(p.path) && p.op.startsWith('pwrite')) ops.push(`${p.op} ${p.path.slice(p.path.lastIndexOf('.'))}`);
      return false;
    },
  };
}

describe('deferred index write-backs', () => {
  it('appends below a page of entries write no index, durable() included; the roll writes them back', async () => {
    const { ops, onCrashPoint } = indexWrites();
    const io = await newIo({ onCrashPoint });
    // An index entry for every batch.
    const log = await openLog(io, config({ indexIntervalBytes: 1 }));
    const batches = 100;
    for (let i = 0; i < batches; i++) await log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 });
    await log.durable(log.logEndOffset - 1);
    expect(log.durableOffset).toBe(batches);
    expect(ops).toEqual([]);
    await log.forceRoll();
    expect(ops.filter((op) => op.endsWith('.index')).length).toBeGreaterThan(0);
    expect(ops.filter((op) => op.endsWith('.timeindex')).length).toBeGreaterThan(0);
    const index = await io.readFile('/data/t-0/00000000000000000000.index');
    // Trimmed at the roll to its entries: the first batch (at position 0) gets none, every later one one.
    expect(index.length).toBe((batches - 1) * OFFSET_ENTRY_BYTES);
    expect(index.readUInt32BE((batches - 2) * OFFSET_ENTRY_BYTES)).toBe(batches - 1);
    await log.close();
  });

  it('a page of dirty entries starts a write-back without any flush', async () => {
    const { ops, onCrashPoint } = indexWrites();
    const io = await newIo({ onCrashPoint });
    const log = await openLog(io, config({ indexIntervalBytes: 1 }));
    const entries = SPARSE_WRITE_BACK_BYTES / OFFSET_ENTRY_BYTES;
    for (let i = 0; i <= entries + 1; i++) await log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 });
    await log.written(log.logEndOffset - 1);
    // Let the write-back the page of entries started land.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ops.filter((op) => op.endsWith('.index')).length).toBeGreaterThanOrEqual(1);
    expect(log.durableOffset).toBe(0);
    await log.close();
  });

  it('a durable append rides its sync in the write, its deferred index entries left for later', async () => {
    const { ops, onCrashPoint } = indexWrites();
    const io = await newIo({ onCrashPoint });
    const log = await openLog(io, config({ indexIntervalBytes: 1 }));
    await log.appendAsLeader(producerBatch(3), { leaderEpoch: 0 });
    await log.flush();
    ops.length = 0;
    const before = { ...log.metrics };
    const r = log.tryAppendAsLeader(producerBatch(2, { tag: 1 }), { leaderEpoch: 0 }) ?? (await log.appendAsLeader(producerBatch(2, { tag: 1 }), { leaderEpoch: 0 }));
    await log.durable(r.lastOffset);
    expect(log.durableOffset).toBe(5);
    expect(log.metrics.writeSyncAcks - before.writeSyncAcks).toBe(1);
    expect(ops).toEqual([]);
    await log.close();
    expect(ops.filter((op) => op.endsWith('.index'))).toHaveLength(1);
  });

  it('a crash with entries never written back loses no record: recovery rebuilds the index', async () => {
    const io = await newIo();
    const log = await openLog(io, config({ indexIntervalBytes: 1 }));
    for (let i = 0; i < 50; i++) await log.appendAsLeader(producerBatch(2, { tag: i }), { leaderEpoch: 0 });
    await log.durable(log.logEndOffset - 1);
    const expected = await readAll(log);
    for (let i = 50; i < 60; i++) await log.appendAsLeader(producerBatch(2, { tag: i }), { leaderEpoch: 0 });
    const after = io.recover(CrashMode.powerClean);
    const reopened = await openLog(after, config({ indexIntervalBytes: 1 }), { hadCleanShutdown: false, recoveryPoint: 0 });
    expect(reopened.logEndOffset).toBeGreaterThanOrEqual(100);
    expect((await readAll(reopened)).slice(0, expected.length)).toEqual(expected);
    // Every offset is found through the rebuilt index.
    for (let offset = 0; offset < 100; offset += 7) {
      const plan = await reopened.read(offset, 1 << 20);
      expect(plan.isEmpty).toBe(false);
      await plan.release();
    }
    await reopened.close();
  });
});
