// The cleaner shares the event loop with callers. Inline (compute 'inline')
// it parses and filters batches already read with only microtask waits, so it
// must yield a macrotask turn every few KiB (cleaner-compute.ts SLICE_BYTES)
// or a request arriving meanwhile waits behind a whole 256 KiB window of its
// CPU (issue 20's caller-append p99); with the worker thread the event loop
// only passes windows to it. Counted, not timed: a setImmediate ticker
// beside the pass must get a turn at least once per 32 KiB the pass reads.
import { describe, expect, it } from 'vitest';
import { clock, config, newIo, openLog, T0 } from './log-helpers.js';
import { cleanerFor, dataRecords, keyed, latestByKey, readBatches } from './cleaner-helpers.js';

const KiB = 1024;

describe('log cleaner: event-loop turns', () => {
  it.each(['inline', 'worker'] as const)('lets other macrotasks run at least once per 32 KiB it reads (compute %s)', async (compute) => {
    const io = await newIo();
    const c = clock();
    const log = await openLog(io, config({ cleanupPolicy: 'compact', segmentBytes: 256 * KiB, minCleanableDirtyRatio: 0.01 }), { now: c.fn });
    const value = 'v'.repeat(480);
    for (let b = 0; b < 160; b++) {
      const records: Array<[string, string]> = [];
      for (let r = 0; r < 8; r++) records.push([`k${(b * 8 + r) % 97}`, `${b}-${r}-${value}`]);
      await log.appendAsLeader(keyed(records, T0));
    }
    await log.forceRoll();
    log.updateHighWatermark(log.logEndOffset);
    const before = dataRecords(await readBatches(log));
    const cleaner = cleanerFor(io, () => [log], c.fn, undefined, compute);
    let turns = 0;
    let running = true;
    const tick = (): void => {
      if (!running) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const stats = await cleaner.clean(log);
    running = false;
    expect(stats.outcome).toBe('cleaned');
    expect(stats.bytesRead).toBeGreaterThan(512 * KiB);
    expect(turns).toBeGreaterThanOrEqual(Math.floor(stats.bytesRead / (32 * KiB)));
    expect(latestByKey(dataRecords(await readBatches(log)))).toEqual(latestByKey(before));
    await log.close();
  });
});
