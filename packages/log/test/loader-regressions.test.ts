// Regressions of issue 23 items 0 and 1 at the Log level (SimIo): what the
// loader may cut, and the producer state it rebuilds.
// - 0a: after a clean stop, a sealed .log shortened below its last .index
//   entry (the index fails its check): the loader used to trust the segment,
//   cut it below the recovery point and delete the intact next segment.
import { describe, expect, it } from 'vitest';
import { rejected } from './helpers.js';
import { config, newIo, openLog, producerBatch, readAll, segmentPath } from './log-helpers.js';

const SIZE = producerBatch(1).length;

describe('loader: an index that fails its check never licenses a cut (issue 23 0a)', () => {
  it('a sealed segment cut short after a clean stop is refused; the later segments stay', async () => {
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

    const error = await rejected(openLog(io, cfg, { hadCleanShutdown: true, recoveryPoint: 14 }));
    expect(error.code).toBe('SEGLOG_ERR_LOG_CORRUPTION');
    expect(error.context).toMatchObject({ path: segmentPath(0, '.log'), position: SIZE * 3, offset: 3 });
    // Also with no recovery point at all (0): a sealed segment losing bytes after a clean stop is damage.
    const again = await rejected(openLog(io, cfg, { hadCleanShutdown: true, recoveryPoint: 0 }));
    expect(again.message).toContain('sealed segment after a clean shutdown');
    expect(await Promise.all([0, 6, 12].map(async (b) => (await io.stat(segmentPath(b, '.log'))).size))).toEqual(sizes);
    expect(io.openHandles()).toEqual([]);
    // The operator's explicit choice still gets Kafka's behaviour.
    const truncated = await openLog(io, cfg, { hadCleanShutdown: true, recoveryPoint: 14, onCorruption: 'truncate' });
    expect(truncated.logEndOffset).toBe(3);
    await truncated.close();
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
