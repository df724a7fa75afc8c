// A refused recovery (damage below the recovery point) changes nothing on
// disk: not the .log, and not the indexes either. Before the dry probe, the
// refusal came after recovery had already reset and partly rewritten the
// segment's .index/.timeindex, and close() then trimmed them to the entries
// of the valid prefix (found by the CLI's `seglog recover --dry-run` tests).
import { describe, expect, it } from 'vitest';
import { rejected } from './helpers.js';
import { config, newIo, openLog, producerBatch, segmentPath } from './log-helpers.js';

const SIZE = producerBatch(1).length;

describe('Log recovery refusal', () => {
  it('leaves the .log, .index and .timeindex byte-identical when it refuses', async () => {
    const io = await newIo();
    const cfg = config({ indexIntervalBytes: SIZE });
    const log = await openLog(io, cfg);
    for (let i = 0; i < 10; i++) await log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 });
    await log.close();
    const file = await io.open(segmentPath(0, '.log'));
    await file.pwrite(Buffer.from([0xde, 0xad]), SIZE * 2 + 40); // a payload byte of offset 2 (CRC fails)
    await file.close();
    const files = ['.log', '.index', '.timeindex'] as const;
    const before = await Promise.all(files.map((suffix) => io.readFile(segmentPath(0, suffix))));
    expect(before[1]!.length).toBeGreaterThanOrEqual(3 * 8); // entries past the damage exist

    const error = await rejected(openLog(io, cfg, { hadCleanShutdown: false, recoveryPoint: 10 }));
    expect(error.code).toBe('SEGLOG_ERR_LOG_CORRUPTION');
    expect(error.context).toMatchObject({ offset: 2, position: SIZE * 2 });
    const after = await Promise.all(files.map((suffix) => io.readFile(segmentPath(0, suffix))));
    files.forEach((suffix, i) => expect(after[i]!.equals(before[i]!), `${suffix} changed`).toBe(true));
    expect(io.openHandles()).toEqual([]);
  });
});
