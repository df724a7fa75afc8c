import { buildBatch, splitBatches } from '@seglog/records';
import { describe, expect, it } from 'vitest';
import { rejected } from './helpers.js';
import { config, DIR, newIo, openLog, producerBatch, readAll, segmentPath, T0 } from './log-helpers.js';

const SIZE = producerBatch(1).length;

describe('Log recovery', () => {
  it('after power loss keeps every durable record, cuts the torn tail and rebuilds the indexes', async () => {
    const io = await newIo();
    const cfg = config({ segmentBytes: SIZE * 100, indexIntervalBytes: SIZE });
    const log = await openLog(io, cfg);
    for (let i = 0; i < 10; i++) await log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 });
    await log.durable(9);
    const durable = log.durableOffset;
    for (let i = 10; i < 15; i++) await log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 });
    await log.written(14);
    const survivor = io.recover('power-clean');
    const reopened = await openLog(survivor, cfg, { hadCleanShutdown: false, recoveryPoint: durable });
    expect(reopened.logEndOffset).toBe(10);
    expect((await readAll(reopened)).map((r) => r[0])).toEqual([...Array(10).keys()]);
    for (let offset = 0; offset < 10; offset++) {
      const plan = await reopened.read(offset, 1);
      expect(plan.firstOffset).toBe(offset);
      await plan.release();
    }
    await reopened.close();
    expect(survivor.openHandles()).toEqual([]);
  });

  it('returns from open only after the leader-epoch checkpoint its truncation changed is written (no .tmp left)', async () => {
    // kill -9 loop, busy machine: 'leftover files after open: leader-epoch-checkpoint.tmp'.
    const io = await newIo();
    const cfg = config({ segmentBytes: SIZE * 100 });
    const log = await openLog(io, cfg);
    for (let i = 0; i < 3; i++) await log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 });
    await log.durable(2);
    const durable = log.durableOffset;
    // Epoch 1 starts at offset 3; its checkpoint is written before the batch, the batch never becomes durable.
    await log.appendAsLeader(producerBatch(1, { tag: 3 }), { leaderEpoch: 1 });
    await log.written(3);
    const survivor = io.recover('power-clean');
    // The rename that completes the checkpoint write is held back for 200 ms, as
    // a busy thread pool would: an open that does not wait for it returns first.
    const slowRename = new Proxy(survivor, {
      get(target, name, receiver) {
        if (name !== 'rename') {
          const value: unknown = Reflect.get(target, name, receiver);
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        }
        return async (from: string, to: string) => {
          if (from.endsWith('leader-epoch-checkpoint.tmp')) await new Promise((resolve) => setTimeout(resolve, 200));
          return target.rename(from, to);
        };
      },
    });
    const reopened = await openLog(slowRename, cfg, { hadCleanShutdown: false, recoveryPoint: durable });
    expect(reopened.logEndOffset).toBe(3);
    expect((await survivor.readdir(DIR)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    const checkpoint = await survivor.readFile(`${DIR}/leader-epoch-checkpoint`);
    expect(checkpoint.toString('utf8')).toBe('0\n1\n0 0\n');
    await reopened.close();
  });

  it('truncates a torn tail above the recovery point and deletes the later segments', async () => {
    const io = await newIo();
    const cfg = config({ segmentBytes: SIZE * 4 });
    const log = await openLog(io, cfg);
    for (let i = 0; i < 10; i++) await log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 });
    await log.flush();
    expect(log.segmentBaseOffsets()).toEqual([0, 4, 8]);
    const survivor = io.recover('process');
    // Damage the last batch of segment 4 (offset 7): a flipped payload byte fails its CRC.
    const file = await survivor.open(segmentPath(4, '.log'));
    const byte = Buffer.alloc(1);
    await file.pread(byte, SIZE * 4 - 1);
    byte[0] = (byte[0] as number) ^ 0xff;
    await file.pwrite(byte, SIZE * 4 - 1);
    await file.close();
    const reopened = await openLog(survivor, cfg, { hadCleanShutdown: false, recoveryPoint: 5 });
    expect(reopened.logEndOffset).toBe(7);
    expect(reopened.segmentBaseOffsets()).toEqual([0, 4]);
    expect(await survivor.exists(segmentPath(8, '.log'))).toBe(false);
    expect((await survivor.stat(segmentPath(4, '.log'))).size).toBe(SIZE * 3);
    await reopened.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    expect(reopened.logEndOffset).toBe(8);
    await reopened.close();
    expect(survivor.openHandles()).toEqual([]);
  });

  it('damage below the recovery point is SEGLOG_ERR_LOG_CORRUPTION, not a truncation (unless onCorruption: truncate)', async () => {
    const io = await newIo();
    const cfg = config();
    const log = await openLog(io, cfg);
    for (let i = 0; i < 10; i++) await log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 });
    await log.close();
    const file = await io.open(segmentPath(0, '.log'));
    await file.pwrite(Buffer.from([0xde, 0xad]), SIZE * 3 + 40);
    await file.close();
    const error = await rejected(openLog(io, cfg, { hadCleanShutdown: false, recoveryPoint: 10 }));
    expect(error.code).toBe('SEGLOG_ERR_LOG_CORRUPTION');
    expect((error as { kafka?: string }).kafka).toBe('KAFKA_STORAGE_ERROR');
    expect(error.context).toMatchObject({ baseOffset: 0, position: SIZE * 3, offset: 3, recoveryPoint: 10 });
    expect(io.openHandles()).toEqual([]);
    expect((await io.stat(segmentPath(0, '.log'))).size).toBe(SIZE * 10);
    const truncated = await openLog(io, cfg, { hadCleanShutdown: false, recoveryPoint: 10, onCorruption: 'truncate' });
    expect(truncated.logEndOffset).toBe(3);
    await truncated.close();
  });

  it('a log that ends below the recovery point (durable data missing) is corruption', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    for (let i = 0; i < 4; i++) await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    await log.close();
    const error = await rejected(openLog(io, config(), { hadCleanShutdown: false, recoveryPoint: 6 }));
    expect(error.code).toBe('SEGLOG_ERR_LOG_CORRUPTION');
  });

  it('treats a preallocated zero tail as the end of data', async () => {
    const io = await newIo();
    const cfg = config({ segmentBytes: 4096, preallocate: true });
    const log = await openLog(io, cfg);
    for (let i = 0; i < 3; i++) await log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 });
    await log.durable(2);
    const survivor = io.recover('power-clean');
    expect((await survivor.stat(segmentPath(0, '.log'))).size).toBe(4096);
    const reopened = await openLog(survivor, cfg, { hadCleanShutdown: false, recoveryPoint: 3 });
    expect(reopened.logEndOffset).toBe(3);
    expect((await survivor.stat(segmentPath(0, '.log'))).size).toBe(SIZE * 3);
    await reopened.close();
  });

  it('rebuilds a missing .index even after a clean shutdown, and removes leftovers and orphans', async () => {
    const io = await newIo();
    const cfg = config({ indexIntervalBytes: 0, segmentBytes: SIZE * 5 });
    const log = await openLog(io, cfg);
    for (let i = 0; i < 8; i++) await log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 });
    const before = await readAll(log);
    await log.close();
    const index = await io.readFile(segmentPath(0, '.index'));
    await io.unlink(segmentPath(0, '.index'));
    for (const name of ['00000000000000000099.index', '00000000000000000000.log.deleted', '00000000000000000000.log.swap', 'leader-epoch-checkpoint.tmp']) {
      const f = await io.open(`${DIR}/${name}`, { create: true });
      await f.close();
    }
    const reopened = await openLog(io, cfg);
    expect(await readAll(reopened)).toEqual(before);
    expect((await io.readFile(segmentPath(0, '.index'))).equals(index)).toBe(true);
    expect((await io.readdir(DIR)).filter((n) => /deleted|swap|tmp|99/.test(n))).toEqual([]);
    await reopened.close();
  });

  it('rebuilds the leader-epoch cache from recovered batches', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    const epochs: Array<[number, number]> = [[104, 0], [106, 1], [108, 1], [110, 2]];
    await log.truncateFullyAndStartAt(104);
    for (const [base, epoch] of epochs) {
      await log.appendAsFollower(buildBatch({ records: [{ value: 'a', timestamp: T0 }, { value: 'b', timestamp: T0 }], baseOffset: base, partitionLeaderEpoch: epoch }));
    }
    await log.close();
    await io.unlink(`${DIR}/leader-epoch-checkpoint`);
    const reopened = await openLog(io, config(), { hadCleanShutdown: false, recoveryPoint: 104, logStartOffset: 104 });
    expect(reopened.epochCache.epochEntries()).toEqual([{ epoch: 0, startOffset: 104 }, { epoch: 1, startOffset: 106 }, { epoch: 2, startOffset: 110 }]);
    await reopened.close();
  });
});

describe('Log fail-stop', () => {
  it('an fdatasync EIO takes the log offline: durable() rejects, nothing is acknowledged, reads continue', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    await log.durable(0);
    io.setFaults({ syncEio: { nth: 1, persistent: true } });
    await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    const error = await rejected(log.durable(1));
    expect(error.code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    expect(log.state).toBe('offline');
    expect(log.durableOffset).toBe(1);
    expect((await rejected(log.durable(1))).code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    expect((await rejected(log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 }))).code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    expect((await rejected(log.truncateTo(0))).code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    expect((await readAll(log)).length).toBe(2);
    await log.close();
    expect(io.openHandles()).toEqual([]);
  });

  it('a write EIO takes the log offline: written() rejects and the written offset stops', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    await log.written(0);
    io.setFaults({ writeEio: { nth: 1, path: /\.log$/ } });
    await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    expect((await rejected(log.written(1))).code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    expect(log.writtenOffset).toBe(1);
    expect((log.failureCause as { code?: string }).code).toMatch(/^SEGLOG_ERR_IO_/);
    await log.close();
    expect(io.openHandles()).toEqual([]);
  });
});

describe('Log truncation', () => {
  it('truncateTo cuts the whole batch holding the offset, drops later segments and clamps positions', async () => {
    const io = await newIo();
    const size2 = producerBatch(2).length;
    const log = await openLog(io, config({ segmentBytes: size2 * 3, indexIntervalBytes: 0, fileDeleteDelayMs: 60_000 }));
    for (let i = 0; i < 8; i++) await log.appendAsLeader(producerBatch(2, { tag: i }), { leaderEpoch: i < 4 ? 0 : 1 });
    await log.flush();
    log.updateHighWatermark(16);
    expect(log.segmentBaseOffsets()).toEqual([0, 6, 12]);
    expect(await log.truncateTo(9)).toBe(true);
    expect([log.logEndOffset, log.writtenOffset, log.highWatermark]).toEqual([9, 9, 9]);
    expect(log.segmentBaseOffsets()).toEqual([0, 6]);
    expect((await io.stat(segmentPath(6, '.log'))).size).toBe(size2);
    expect(await io.exists(segmentPath(12, '.log.deleted'))).toBe(true);
    expect(log.epochCache.epochEntries()).toEqual([{ epoch: 0, startOffset: 0 }, { epoch: 1, startOffset: 8 }]);
    await log.flush();
    expect(log.durableOffset).toBe(9);
    expect(await log.truncateTo(20)).toBe(false);
    const r = await log.appendAsLeader(producerBatch(1), { leaderEpoch: 2 });
    expect(r.firstOffset).toBe(9);
    expect((await readAll(log)).map((x) => x[0])).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 9]);
    await log.close();
    const reopened = await openLog(io, config({ segmentBytes: size2 * 3, indexIntervalBytes: 0 }));
    const plan = await reopened.read(0, 1 << 20);
    expect(plan.nextOffset).toBe(6);
    await plan.release();
    expect((await readAll(reopened)).map((x) => x[0])).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 9]);
    expect(await io.exists(segmentPath(12, '.log.deleted'))).toBe(false);
    await reopened.close();
    expect(io.openHandles()).toEqual([]);
  });

  it('truncateFullyAndStartAt(2, 1) empties the log', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    for (let i = 0; i < 3; i++) await log.appendAsLeader(producerBatch(1), { leaderEpoch: 3 });
    await log.truncateFullyAndStartAt(2, 1);
    expect([log.logStartOffset, log.logEndOffset, log.highWatermark, log.segmentBaseOffsets()]).toEqual([1, 2, 2, [2]]);
    expect(log.epochCache.epochEntries()).toEqual([]);
    expect((await log.appendAsLeader(producerBatch(1), { leaderEpoch: 3 })).firstOffset).toBe(2);
    await log.close();
  });
});

describe('Log retention', () => {
  async function fifteen(overrides = {}) {
    const io = await newIo();
    const log = await openLog(io, config({ segmentBytes: SIZE * 5, fileDeleteDelayMs: 0, ...overrides }));
    for (let i = 0; i < 15; i++) await log.appendAsLeader(producerBatch(1, { tag: i, timestamp: T0 + i * 1000 }), { leaderEpoch: 0 });
    await log.written(14);
    return { io, log };
  }

  it("deleteRecords + start-offset breach follow Kafka's example (1 → 3 segments, 6 → 2, 15 → 1)", async () => {
    const { io, log } = await fifteen();
    log.updateHighWatermark(15);
    expect((await rejected(log.deleteRecords(16))).code).toBe('SEGLOG_ERR_LOG_OFFSET_OUT_OF_RANGE');
    for (const [start, left] of [[1, 3], [6, 2], [15, 1]] as const) {
      expect(await log.deleteRecords(start)).toBe(start);
      await log.deleteOldSegments();
      expect(log.numberOfSegments).toBe(left);
    }
    expect(log.logStartOffset).toBe(15);
    expect(log.logEndOffset).toBe(15);
    expect((await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 })).firstOffset).toBe(15);
    await new Promise((r) => setTimeout(r, 10));
    expect((await io.readdir(DIR)).filter((n) => n.endsWith('.deleted'))).toEqual([]);
    await log.close();
  });

  it('deletes by size only below the high watermark, never the active segment', async () => {
    const { log } = await fifteen({ retentionBytes: SIZE * 6 });
    expect(await log.deleteOldSegments()).toBe(0);
    log.updateHighWatermark(15);
    expect(await log.deleteOldSegments()).toBe(1);
    expect(log.segmentBaseOffsets()).toEqual([5, 10]);
    expect(log.logStartOffset).toBe(5);
    await log.close();
  });

  it('deletes by time and rolls first when every segment goes', async () => {
    const { log } = await fifteen({ retentionMs: 10_000 });
    log.updateHighWatermark(15);
    expect(await log.deleteOldSegments(T0 + 14_500)).toBe(1);
    expect(log.segmentBaseOffsets()).toEqual([5, 10]);
    expect(await log.deleteOldSegments(T0 + 100_000)).toBe(2);
    expect(log.segmentBaseOffsets()).toEqual([15]);
    expect([log.logStartOffset, log.logEndOffset]).toEqual([15, 15]);
    await log.close();
  });

  it('a plan keeps its .log handle across retention until released', async () => {
    const { io, log } = await fifteen({ fileDeleteDelayMs: 60_000 });
    log.updateHighWatermark(15);
    const plan = await log.read(0, 1 << 20);
    await log.deleteRecords(5);
    await log.deleteOldSegments();
    expect(log.segmentBaseOffsets()).toEqual([5, 10]);
    const bytes = await plan.toBuffer();
    expect(splitBatches(bytes).map((b) => b.baseOffset)).toEqual([0, 1, 2, 3, 4]);
    await log.close();
    expect(io.openHandles()).toEqual([segmentPath(0, '.log')]);
    await plan.release();
    await plan.release();
    expect(io.openHandles()).toEqual([]);
  });
});
