// Regressions of issue 23 items 0 and 1 at the Log level (SimIo): what the
// loader may cut, and the producer state it rebuilds.
// - 0a: after a clean stop, a sealed .log shortened below its last .index
//   entry (the index fails its check): the loader used to trust the segment,
//   cut it below the recovery point and delete the intact next segment.
// - 1: with the log start offset inside the first segment and the recovery
//   point below it, an unclean reload replayed producer state only from the
//   log start offset, so a producer whose batches all lie below it was
//   forgotten and its retry was written again at a new offset.
import { buildBatch } from '@seglog/records';
import { describe, expect, it } from 'vitest';
import { rejected } from './helpers.js';
import { config, newIo, openLog, producerBatch, readAll, segmentPath, T0 } from './log-helpers.js';

const SIZE = producerBatch(1).length;

describe('loader: an index that fails its check never licenses a cut (issue 23 0a)', () => {
  it('a sealed segment cut short after a clean stop is refused at its first read; nothing is cut, the later segments stay', async () => {
    const io = await newIo();
    const cfg = config({ segmentBytes: SIZE * 6, indexIntervalBytes: SIZE });
    const log = await openLog(io, cfg);
    for (let i = 0; i < 14; i++) await log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 });
    expect(log.segmentBaseOffsets()).toEqual([0, 6, 12]);
    await log.close();
    // Cut the last two batches (and a bit) off the sealed first segment: its last index entries point past the end.
    const file = await io.open(segmentPath(0, '.log'));
    await file.truncate(SIZE * 4 - 10);
    await file.close();
    const sizes = await Promise.all([0, 6, 12].map(async (b) => (await io.stat(segmentPath(b, '.log'))).size));

    // A clean open does not read sealed segments (issue 24): the damage is met when their index loads.
    for (const recoveryPoint of [14, 0]) {
      const reopened = await openLog(io, cfg, { hadCleanShutdown: true, recoveryPoint });
      expect(reopened.segmentBaseOffsets()).toEqual([0, 6, 12]);
      const error = await rejected(reopened.read(0, 1 << 20));
      expect(error.code).toBe('SEGLOG_ERR_LOG_CORRUPTION');
      expect(error.message).toContain('sealed segment after a clean shutdown');
      expect(error.context).toMatchObject({ path: segmentPath(0, '.log'), position: SIZE * 4 - 10 });
      // The intact later segments still read.
      expect((await readAll(reopened, 6)).map(([offset]) => offset)).toEqual([6, 7, 8, 9, 10, 11, 12, 13]);
      await reopened.close();
    }
    expect(await Promise.all([0, 6, 12].map(async (b) => (await io.stat(segmentPath(b, '.log'))).size))).toEqual(sizes);
    expect(io.openHandles()).toEqual([]);
  });

  it('after a clean stop, a log that ends below its checkpointed recovery point (a segment lost while stopped) is refused', async () => {
    const io = await newIo();
    const cfg = config({ segmentBytes: SIZE * 6, indexIntervalBytes: SIZE });
    const log = await openLog(io, cfg);
    for (let i = 0; i < 14; i++) await log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 });
    expect(log.segmentBaseOffsets()).toEqual([0, 6, 12]);
    await log.close();
    // Someone removes the last segment's files while the process is stopped: offsets 12..13 are gone.
    for (const kind of ['.log', '.index', '.timeindex'] as const) await io.unlink(segmentPath(12, kind));
    const error = await rejected(openLog(io, cfg, { hadCleanShutdown: true, recoveryPoint: 14 }));
    expect(error.code).toBe('SEGLOG_ERR_LOG_CORRUPTION');
    expect(error.message).toContain('ends below the recovery point');
    expect(error.context).toMatchObject({ offset: 12, recoveryPoint: 14 });
    expect(io.openHandles()).toEqual([]);
  });

  it('a torn tail of the active segment after a clean stop is still cut (beyond the recovery point)', async () => {
    const io = await newIo();
    const cfg = config({ segmentBytes: SIZE * 6, indexIntervalBytes: SIZE });
    const log = await openLog(io, cfg);
    for (let i = 0; i < 8; i++) await log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 });
    await log.close();
    const file = await io.open(segmentPath(6, '.log'));
    await file.pwrite(Buffer.alloc(30, 0x77), SIZE * 2);
    await file.close();
    const reopened = await openLog(io, cfg, { hadCleanShutdown: true, recoveryPoint: 8 });
    expect(reopened.logEndOffset).toBe(8);
    expect((await readAll(reopened)).length).toBe(8);
    await reopened.close();
  });
});

const PID1 = 101;
/** Producer ids expire a day after their last timestamp: the clock stays near the records' T0. */
const now = (): number => T0 + 60_000;
const PID2 = 202;

function idempotent(producerId: number, baseSequence: number, tag: string, count = 1): Buffer {
  const records = Array.from({ length: count }, (_, i) => ({ value: Buffer.from(`${tag}-${i}`), timestamp: T0 + i }));
  return buildBatch({ records, producerId, producerEpoch: 0, baseSequence });
}

describe('loader: producer state after the log start moved inside a segment (issue 23 item 1)', () => {
  async function written(): Promise<{ io: Awaited<ReturnType<typeof newIo>>; log: Awaited<ReturnType<typeof openLog>>; logStart: number }> {
    const io = await newIo();
    const cfg = config({ segmentBytes: 1 << 20 });
    const log = await openLog(io, cfg, { hadCleanShutdown: false, now });
    const first = await log.appendAsLeader(idempotent(PID1, 0, 'p1'), { leaderEpoch: 0 });
    expect(first.firstOffset).toBe(0);
    for (let seq = 0; seq < 3; seq++) await log.appendAsLeader(idempotent(PID2, seq * 2, `p2-${seq}`, 2), { leaderEpoch: 0 });
    await log.flush();
    log.updateHighWatermark(log.logEndOffset);
    const logStart = await log.deleteRecords(3); // past producer 1's only batch, inside segment 0
    expect(logStart).toBe(3);
    expect(log.segmentBaseOffsets()).toEqual([0]);
    return { io, log, logStart };
  }

  for (const mode of ['process', 'power-clean'] as const) {
    it(`after an unclean stop (${mode}) with the recovery point below the log start, a retry of producer 1 is a duplicate`, async () => {
      const { io, logStart } = await written();
      const survivor = io.recover(mode);
      const reopened = await openLog(survivor, config({ segmentBytes: 1 << 20 }), { hadCleanShutdown: false, recoveryPoint: 0, logStartOffset: logStart, now });
      expect(reopened.logStartOffset).toBe(3);
      const end = reopened.logEndOffset;
      expect(end).toBe(7);
      const retry1 = await reopened.appendAsLeader(idempotent(PID1, 0, 'p1'), { leaderEpoch: 0 });
      expect([retry1.firstOffset, retry1.lastOffset]).toEqual([0, 0]);
      const retry2 = await reopened.appendAsLeader(idempotent(PID2, 4, 'p2-2', 2), { leaderEpoch: 0 });
      expect([retry2.firstOffset, retry2.lastOffset]).toEqual([5, 6]);
      expect(reopened.logEndOffset).toBe(end);
      // The next sequence of producer 1 is accepted at the end.
      const next = await reopened.appendAsLeader(idempotent(PID1, 1, 'p1-next'), { leaderEpoch: 0 });
      expect(next.firstOffset).toBe(end);
      await reopened.close();
      expect(survivor.openHandles()).toEqual([]);
    });
  }

  it('a clean reload keeps both producers too', async () => {
    const { io, log, logStart } = await written();
    await log.close();
    const reopened = await openLog(io, config({ segmentBytes: 1 << 20 }), { hadCleanShutdown: true, recoveryPoint: 7, logStartOffset: logStart, now });
    const retry1 = await reopened.appendAsLeader(idempotent(PID1, 0, 'p1'), { leaderEpoch: 0 });
    expect(retry1.firstOffset).toBe(0);
    expect(reopened.logEndOffset).toBe(7);
    await reopened.close();
  });
});

describe('producer state after a truncation with the log start inside a segment (issue 23 item 1, the truncation path)', () => {
  it('truncateTo above the log start keeps producer 1 (all its batches below the log start): its retry is a duplicate', async () => {
    const io = await newIo();
    const cfg = config({ segmentBytes: 1 << 20 });
    const log = await openLog(io, cfg, { hadCleanShutdown: false, now });
    await log.appendAsLeader(idempotent(PID1, 0, 'p1'), { leaderEpoch: 0 });
    for (let seq = 0; seq < 3; seq++) await log.appendAsLeader(idempotent(PID2, seq * 2, `p2-${seq}`, 2), { leaderEpoch: 0 });
    await log.flush();
    log.updateHighWatermark(log.logEndOffset);
    expect(await log.deleteRecords(3)).toBe(3);
    expect(await log.truncateTo(5)).toBe(true); // a follower's truncation: the last batch of producer 2 goes
    expect(log.logEndOffset).toBe(5);
    const retry1 = await log.appendAsLeader(idempotent(PID1, 0, 'p1'), { leaderEpoch: 0 });
    expect([retry1.firstOffset, retry1.lastOffset]).toEqual([0, 0]);
    expect(log.logEndOffset).toBe(5);
    await log.close();
  });
});
