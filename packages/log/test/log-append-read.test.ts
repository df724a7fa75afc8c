import { buildBatch, RecordBatch, splitBatches } from '@seglog/records';
import { describe, expect, it } from 'vitest';
import { rejected } from './helpers.js';
import { clock, config, DIR, newIo, openLog, producerBatch, readAll, segmentPath, T0 } from './log-helpers.js';

function followerBatch(baseOffset: number, count: number, timestamp: number, epoch = 0): Buffer {
  const records = [];
  for (let i = 0; i < count; i++) records.push({ value: `v${baseOffset + i}`, timestamp: timestamp + i * 10 });
  return buildBatch({ records, baseOffset, partitionLeaderEpoch: epoch });
}

describe('Log append', () => {
  it('assigns offsets from the log end offset and stamps the leader epoch in place', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    const first = await log.appendAsLeader(producerBatch(3, { timestamp: T0 }), { leaderEpoch: 4 });
    expect(first).toEqual({
      firstOffset: 0, lastOffset: 2, maxTimestamp: T0 + 2, offsetOfMaxTimestamp: 2, logAppendTime: -1,
      logStartOffset: 0, recordsCount: 3, sizeInBytes: first.sizeInBytes,
    });
    const second = await log.appendAsLeader(producerBatch(2), { leaderEpoch: 4 });
    expect([second.firstOffset, second.lastOffset, log.logEndOffset]).toEqual([3, 4, 5]);
    await log.flush();
    const batches = splitBatches(await io.readFile(segmentPath(0, '.log')));
    expect(batches.map((b) => [b.baseOffset, b.lastOffset, b.partitionLeaderEpoch, b.isValid()])).toEqual([[0, 2, 4, true], [3, 4, 4, true]]);
    expect(log.epochCache.epochEntries()).toEqual([{ epoch: 4, startOffset: 0 }]);
    expect(log.metrics.appends).toBe(2);
    await log.close();
  });

  it('restamps LogAppendTime batches with the broker time (CRC recomputed)', async () => {
    const io = await newIo();
    const c = clock(T0 + 999);
    const log = await openLog(io, config({ messageTimestampType: 'LogAppendTime' }), { now: c.fn });
    const result = await log.appendAsLeader(producerBatch(2), { leaderEpoch: 0 });
    expect([result.logAppendTime, result.maxTimestamp]).toEqual([T0 + 999, T0 + 999]);
    await log.flush();
    const [batch] = splitBatches(await io.readFile(segmentPath(0, '.log')));
    expect(batch?.timestampType).toBe('LogAppendTime');
    expect(batch?.isValid()).toBe(true);
    expect(batch?.toRecords().map((r) => r.timestamp)).toEqual([T0 + 999, T0 + 999]);
    await log.close();
  });

  it('rejects a corrupt batch or one above segment.bytes without a byte on disk or a state change', async () => {
    const io = await newIo();
    const log = await openLog(io, config({ segmentBytes: 200 }));
    await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    const bad = producerBatch(1);
    bad[bad.length - 1] = (bad[bad.length - 1] as number) ^ 1;
    expect((await rejected(log.appendAsLeader(bad, { leaderEpoch: 0 }))).code).toBe('SEGLOG_ERR_RECORDS_CRC_MISMATCH');
    const big = producerBatch(4, { valueBytes: 60 });
    const error = await rejected(log.appendAsLeader(big, { leaderEpoch: 0 }));
    expect(error.code).toBe('SEGLOG_ERR_LOG_RECORD_LIST_TOO_LARGE');
    expect((error as { kafka?: string }).kafka).toBe('RECORD_LIST_TOO_LARGE');
    await log.flush();
    expect(log.logEndOffset).toBe(1);
    expect((await io.readFile(segmentPath(0, '.log'))).length).toBe(producerBatch(1).length);
    expect(log.state).toBe('open');
    await log.close();
  });

  it('follower appends are verbatim, allow gaps, take epochs from the batches and reject offsets below the LEO', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    const a = followerBatch(0, 2, T0, 1);
    const b = followerBatch(5, 3, T0, 2);
    const result = await log.appendAsFollower(Buffer.concat([a, b]));
    expect([result.firstOffset, result.lastOffset, result.recordsCount, log.logEndOffset]).toEqual([0, 7, 5, 8]);
    expect(log.epochCache.epochEntries()).toEqual([{ epoch: 1, startOffset: 0 }, { epoch: 2, startOffset: 5 }]);
    expect((await rejected(log.appendAsFollower(followerBatch(7, 1, T0)))).code).toBe('SEGLOG_ERR_LOG_UNEXPECTED_APPEND_OFFSET');
    expect((await rejected(log.appendAsFollower(Buffer.concat([followerBatch(9, 2, T0), followerBatch(10, 1, T0)])))).code).toBe('SEGLOG_ERR_LOG_OFFSETS_OUT_OF_ORDER');
    await log.flush();
    expect((await io.readFile(segmentPath(0, '.log'))).equals(Buffer.concat([a, b]))).toBe(true);
    expect((await readAll(log)).map((r) => r[0])).toEqual([0, 1, 5, 6, 7]);
    await log.close();
  });
});

describe('Log roll', () => {
  it('rolls on size: exactly segment.bytes fits, one byte more rolls', async () => {
    const io = await newIo();
    const size = producerBatch(1).length;
    const log = await openLog(io, config({ segmentBytes: size * 3 }));
    for (let i = 0; i < 7; i++) await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    expect(log.segmentBaseOffsets()).toEqual([0, 3, 6]);
    expect(log.metrics.rolls).toBe(2);
    await log.close();
    expect((await io.stat(segmentPath(0, '.log'))).size).toBe(size * 3);
    expect(io.openHandles()).toEqual([]);
  });

  it('rolls on time: by record time when timestamps exist, by wall clock otherwise; never an empty segment', async () => {
    const io = await newIo();
    const c = clock();
    const log = await openLog(io, config({ segmentMs: 1000 }), { now: c.fn });
    await log.appendAsLeader(producerBatch(1, { timestamp: T0 }), { leaderEpoch: 0 });
    await log.appendAsLeader(producerBatch(1, { timestamp: T0 + 1000 }), { leaderEpoch: 0 });
    expect(log.numberOfSegments).toBe(1);
    await log.appendAsLeader(producerBatch(1, { timestamp: T0 + 1001 }), { leaderEpoch: 0 });
    expect(log.segmentBaseOffsets()).toEqual([0, 2]);
    await log.close();
    const io2 = await newIo();
    const log2 = await openLog(io2, config({ segmentMs: 1000 }), { now: c.fn });
    c.now += 5000;
    const noTs = buildBatch({ records: [{ value: 'x', timestamp: -1 }] });
    await log2.appendAsLeader(noTs, { leaderEpoch: 0 });
    expect(log2.numberOfSegments).toBe(1);
    c.now += 1001;
    await log2.appendAsLeader(buildBatch({ records: [{ value: 'y', timestamp: -1 }] }), { leaderEpoch: 0 });
    expect(log2.segmentBaseOffsets()).toEqual([0, 1]);
    await log2.close();
  });

  it('rolls when an index is full', async () => {
    const io = await newIo();
    // .timeindex of 24 bytes: 2 slots, one reserved, so full after one entry.
    const log = await openLog(io, config({ segmentIndexBytes: 24, indexIntervalBytes: 0 }));
    for (let i = 0; i < 6; i++) await log.appendAsLeader(producerBatch(1, { timestamp: T0 + i }), { leaderEpoch: 0 });
    expect(log.segmentBaseOffsets()).toEqual([0, 2, 4]);
    await log.close();
    // Sealed and trimmed: one entry (T0 + 1, offset 1); the final entry repeats it.
    expect((await io.readFile(segmentPath(0, '.timeindex'))).length).toBe(12);
  });

  it('preallocates (zero-filled reservation steps, capped at segment.bytes rounded up to a page) and trims on roll and close', async () => {
    const io = await newIo();
    const size = producerBatch(1).length;
    const log = await openLog(io, config({ segmentBytes: 1000, preallocate: true }));
    for (let i = 0; i < 3; i++) await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    await log.flush();
    expect((await io.stat(segmentPath(0, '.log'))).size).toBe(4096);
    expect((await io.readFile(segmentPath(0, '.log'))).subarray(size * 3).every((b) => b === 0)).toBe(true);
    expect((await readAll(log)).length).toBe(3);
    await log.close();
    expect((await io.stat(segmentPath(0, '.log'))).size).toBe(size * 3);
  });
});

describe('Log read', () => {
  async function tenBatches() {
    const io = await newIo();
    const log = await openLog(io, config());
    for (let i = 0; i < 10; i++) await log.appendAsLeader(producerBatch(2, { tag: i }), { leaderEpoch: 0 });
    await log.written(19);
    return { io, log, size: producerBatch(2).length };
  }

  it('returns whole batches within maxBytes, the first batch even when larger, and starts at the batch holding the offset', async () => {
    const { log, size } = await tenBatches();
    let plan = await log.read(5, size * 3 + size - 1);
    expect([plan.firstOffset, plan.nextOffset, plan.totalBytes]).toEqual([4, 10, size * 3]);
    await plan.release();
    plan = await log.read(0, 1);
    expect([plan.totalBytes, plan.nextOffset]).toEqual([size, 2]);
    await plan.release();
    plan = await log.read(0, 1, { minOneMessage: false });
    expect(plan.isEmpty).toBe(true);
    await plan.release();
    await log.close();
  });

  it('is bounded by maxOffset (batches whose last offset is below it) and read_committed by the high watermark', async () => {
    const { log, size } = await tenBatches();
    let plan = await log.read(0, 1 << 20, { maxOffset: 6 });
    expect([plan.totalBytes, plan.nextOffset]).toEqual([size * 3, 6]);
    await plan.release();
    plan = await log.read(0, 1 << 20, { maxOffset: 5 });
    expect(plan.totalBytes).toBe(size * 2);
    await plan.release();
    log.updateHighWatermark(4);
    plan = await log.read(0, 1 << 20, { isolation: 'read_committed' });
    expect([plan.totalBytes, plan.highWatermark, plan.lastStableOffset]).toEqual([size * 2, 4, 4]);
    await plan.release();
    await log.close();
  });

  it('offset == LEO is empty; below the log start or above the LEO is OFFSET_OUT_OF_RANGE', async () => {
    const { log } = await tenBatches();
    const plan = await log.read(20, 100);
    expect([plan.isEmpty, plan.nextOffset]).toEqual([true, 20]);
    const error = await rejected(log.read(21, 100));
    expect(error.code).toBe('SEGLOG_ERR_LOG_OFFSET_OUT_OF_RANGE');
    expect(error.context).toMatchObject({ offset: 21, logStartOffset: 0, logEndOffset: 20 });
    log.updateHighWatermark(20);
    await log.deleteRecords(4);
    expect((await rejected(log.read(3, 100))).code).toBe('SEGLOG_ERR_LOG_OFFSET_OUT_OF_RANGE');
    await log.close();
  });

  it('reads across segments and with sparse indexes finds the same batches as a scan', async () => {
    const io = await newIo();
    const size = producerBatch(1).length;
    const log = await openLog(io, config({ segmentBytes: size * 7, indexIntervalBytes: size * 2 }));
    for (let i = 0; i < 30; i++) await log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 });
    await log.written(29);
    for (let offset = 0; offset < 30; offset++) {
      for (const batches of [1, 2, 5]) {
        const plan = await log.read(offset, size * batches);
        const got = splitBatches(await plan.toBuffer()).map((b) => b.baseOffset);
        const segmentEnd = (Math.floor(offset / 7) + 1) * 7;
        const want = [...Array(Math.min(batches, segmentEnd - offset, 30 - offset)).keys()].map((k) => offset + k);
        expect(got).toEqual(want);
        await plan.release();
      }
    }
    await log.close();
  });

  it('never returns bytes that are not yet written', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    const appended = log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    await appended;
    expect(log.logEndOffset).toBe(1);
    if (log.writtenOffset === 0) expect((await log.read(0, 1000)).isEmpty).toBe(true);
    await log.written(0);
    expect((await log.read(0, 1000)).isEmpty).toBe(false);
    await log.close();
  });
});

describe('Log offsetForTimestamp', () => {
  it("follows Kafka's table (base 40, message i at offset i with timestamp 10·i)", async () => {
    const io = await newIo();
    const log = await openLog(io, config({ indexIntervalBytes: 1 }));
    await log.truncateFullyAndStartAt(40);
    for (let i = 40; i < 50; i++) await log.appendAsFollower(buildBatch({ records: [{ value: `m${i}`, timestamp: 10 * i }], baseOffset: i }));
    await log.written(49);
    const cases: Array<[number, number | null]> = [[420, 42], [421, 43], [430, 43], [431, 44], [401, 41], [399, 40], [491, null]];
    for (const [ts, want] of cases) expect((await log.offsetForTimestamp(ts))?.offset ?? null).toBe(want);
    expect(await log.offsetForTimestamp(-2)).toMatchObject({ offset: 40 });
    expect(await log.offsetForTimestamp(-1)).toMatchObject({ offset: 50 });
    await log.close();
  });
});

describe('Log HW and positions', () => {
  it("follows Kafka's high-watermark example", async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    await log.appendAsLeader(producerBatch(3), { leaderEpoch: 0 });
    expect(log.highWatermark).toBe(0);
    expect(log.updateHighWatermark(1)).toBe(1);
    expect(log.updateHighWatermark(5)).toBe(3);
    await log.appendAsFollower(buildBatch({ records: [{ value: 'a', timestamp: T0 }, { value: 'b', timestamp: T0 }, { value: 'c', timestamp: T0 }], baseOffset: 3 }));
    expect(log.updateHighWatermark(6)).toBe(6);
    await log.truncateTo(3);
    expect([log.highWatermark, log.logEndOffset]).toEqual([3, 3]);
    await log.truncateFullyAndStartAt(4);
    expect([log.highWatermark, log.lastStableOffset, log.logEndOffset, log.logStartOffset]).toEqual([4, 4, 4, 4]);
    await log.close();
    expect(io.openHandles()).toEqual([]);
  });

  it('orders end ≥ written ≥ durable and resolves written()/durable() waiters', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    const appends = [];
    for (let i = 0; i < 5; i++) appends.push(log.appendAsLeader(producerBatch(2), { leaderEpoch: 0 }));
    await Promise.all(appends);
    expect(log.logEndOffset).toBe(10);
    expect(log.durableOffset).toBe(0);
    await log.written(9);
    expect(log.writtenOffset).toBe(10);
    expect(log.durableOffset).toBe(0);
    await log.durable(3);
    expect(log.durableOffset).toBeGreaterThanOrEqual(4);
    await log.close();
  });
});

describe('Log flush', () => {
  it('group commit: waiters present when a flush starts share its fdatasync', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    for (let i = 0; i < 100; i++) await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    await log.written(99);
    const waits: Promise<void>[] = [];
    for (let i = 0; i < 100; i++) waits.push(log.durable(i));
    await Promise.all(waits);
    expect(log.durableOffset).toBe(100);
    expect(log.metrics.flushes).toBe(1);
    await log.close();
  });

  it('a durable() waiter resolves only after an fdatasync covering it', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    await log.durable(0);
    const survivor = io.recover('power-clean');
    expect((await survivor.readFile(segmentPath(0, '.log'))).length).toBe(producerBatch(1).length);
    await log.close().catch(() => undefined);
  });

  it('flush.messages flushes once LEO − recovery point reaches N, without delaying acks', async () => {
    const io = await newIo();
    const log = await openLog(io, config({ flushIntervalMessages: 5 }));
    for (let i = 0; i < 4; i++) await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    await log.written(3);
    await new Promise((r) => setTimeout(r, 5));
    expect(log.durableOffset).toBe(0);
    await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    await log.written(4);
    await new Promise((r) => setTimeout(r, 5));
    expect(log.durableOffset).toBe(5);
    await log.close();
  });

  it('flush.ms flushes on a timer', async () => {
    const io = await newIo();
    const c = clock();
    const log = await openLog(io, config({ flushIntervalMs: 10 }), { now: c.fn });
    await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    await log.written(0);
    c.now += 11;
    await new Promise((r) => setTimeout(r, 40));
    expect(log.durableOffset).toBe(1);
    await log.close();
  });
});

describe('Log reopen', () => {
  it('after a clean close reads are identical and the indexes are trimmed', async () => {
    const io = await newIo();
    const size = producerBatch(2).length;
    const cfg = config({ segmentBytes: size * 4, indexIntervalBytes: size });
    const log = await openLog(io, cfg);
    for (let i = 0; i < 10; i++) await log.appendAsLeader(producerBatch(2, { tag: i }), { leaderEpoch: i < 5 ? 0 : 1 });
    const before = await readAll(log);
    await log.close();
    expect(io.openHandles()).toEqual([]);
    expect((await io.stat(segmentPath(8, '.index'))).size % 8).toBe(0);
    const again = await openLog(io, cfg);
    expect([again.logEndOffset, again.durableOffset]).toEqual([20, 20]);
    expect(await readAll(again)).toEqual(before);
    expect(again.epochCache.epochEntries()).toEqual([{ epoch: 0, startOffset: 0 }, { epoch: 1, startOffset: 10 }]);
    await again.appendAsLeader(producerBatch(1), { leaderEpoch: 1 });
    expect(again.logEndOffset).toBe(21);
    await again.close();
    expect(io.openHandles()).toEqual([]);
    expect(await io.readdir(DIR)).not.toContain(expect.stringMatching(/deleted|tmp/));
  });
});

describe('RecordBatch sanity for the helpers', () => {
  it('producerBatch builds valid batches', () => {
    expect(new RecordBatch(producerBatch(2)).isValid()).toBe(true);
  });
});
