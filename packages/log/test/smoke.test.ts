import { describe, expect, it } from 'vitest';
import { config, newIo, openLog, producerBatch, readAll } from './log-helpers.js';

describe('smoke', () => {
  it('appends and reads', async () => {
    const io = newIo();
    const log = await openLog(io, config({ segmentBytes: 400 }));
    for (let i = 0; i < 10; i++) {
      const r = await log.appendAsLeader(producerBatch(3, { tag: i }), { leaderEpoch: 0 });
      expect(r.firstOffset).toBe(i * 3);
    }
    await log.durable(29);
    expect(log.durableOffset).toBe(30);
    const all = await readAll(log);
    expect(all.map((x) => x[0])).toEqual([...Array(30).keys()]);
    expect(log.numberOfSegments).toBeGreaterThan(1);
    await log.close();
    expect(io.openHandles()).toEqual([]);
    const again = await openLog(io, config({ segmentBytes: 400 }), { hadCleanShutdown: true });
    expect(await readAll(again)).toEqual(all);
    await again.close();
    expect(io.openHandles()).toEqual([]);
  });
});
