// The cleaner of a LogManager on SimIo: the background loop cleans a
// compacted log once its ratio is reached, on the shared pool, and records
// cleaner-offset-checkpoint, which a reopen reads; a delete-policy log is
// never touched; a truncation racing a pass makes its swap stale (nothing
// changes but the truncation); deleteLog and close wait for a running pass;
// the throttle sleeps by the bytes charged. No wall-clock bound: loops are
// bounded by iteration counts.
import { describe, expect, it } from 'vitest';
import { LogManager } from '../src/log-manager.js';
import type { LogManagerOptions } from '../src/log-manager.js';
import type { Log } from '../src/log/log.js';
import { Throttler } from '../src/cleaner/throttler.js';
import { config, newIo, T0 } from './log-helpers.js';
import { dataRecords, keyed, latestByKey, readBatches } from './cleaner-helpers.js';
import type { SimIo } from '@seglog/io';

const DATA = '/data/d';
// An index entry every ~100 bytes and an index budget of 0: every sealed segment's indexes are
// evicted once an operation is done with them, so each pass and read reloads them (issue 24).
const COMPACT = config({ cleanupPolicy: 'compact', segmentBytes: 600, segmentIndexBytes: 4096, indexIntervalBytes: 100, minCleanableDirtyRatio: 0.3 });

function open(io: SimIo, options: Partial<LogManagerOptions> = {}): Promise<LogManager> {
  return LogManager.open(io, DATA, {
    defaultConfig: config({ segmentBytes: 600, segmentIndexBytes: 4096, indexIntervalBytes: 100 }), topicConfigs: new Map([['table', COMPACT]]),
    minFreeBytes: 0, checkpointIntervalMs: 0, cleaner: { backoffMs: 1 }, indexCacheBytes: 0, ...options,
  });
}

async function fill(log: Log, rounds: number): Promise<void> {
  for (let round = 0; round < rounds; round++) for (let k = 0; k < 5; k++) await log.appendAsLeader(keyed([[`k${k}`, `r${round}`]], T0));
  await log.forceRoll();
  log.updateHighWatermark(log.logEndOffset);
}

/**
 * Yields to the event loop until `done()`: `max` macrotask turns, then (the
 * pass's compute is a worker thread, whose start and answers take real time)
 * 1 ms sleeps up to a hang guard of two minutes.
 */
async function until(done: () => boolean, max = 20_000): Promise<boolean> {
  for (let i = 0; i < max && !done(); i++) await new Promise<void>((resolve) => setImmediate(resolve));
  const guard = Date.now() + 120_000;
  while (!done() && Date.now() < guard) await new Promise<void>((resolve) => setTimeout(resolve, 1));
  return done();
}

describe('LogManager cleaner', () => {
  it('cleans a compacted log in the background on the pool and checkpoints its progress', async () => {
    const io = await newIo();
    const manager = await open(io);
    const table = await manager.getOrCreateLog('table', 0);
    const plain = await manager.getOrCreateLog('plain', 0);
    await fill(table, 8);
    await fill(plain, 8);
    const submitted = manager.pool.counters.submitted;
    expect(await until(() => manager.cleaner.stateOf(table).passes > 0)).toBe(true);
    expect(manager.pool.counters.submitted).toBeGreaterThan(submitted);
    const records = dataRecords(await readBatches(table));
    expect(records.map((r) => r.offset)).toEqual([35, 36, 37, 38, 39]);
    expect(latestByKey(records).get('k0')).toBe('r7');
    expect(dataRecords(await readBatches(plain)).length).toBe(40);
    const state = manager.cleaner.stateOf(table);
    expect(state.firstDirtyOffset).toBe(40);
    expect(state.bytesSaved).toBeGreaterThan(0);
    expect(state.lastCleanMs).not.toBeNull();
    // The pass and the reads ran on evicted, reloaded indexes.
    expect(manager.indexStats().evictions).toBeGreaterThan(0);
    // Only the segment used last stays: 600-byte segments, an entry per 100 bytes, 20 bytes an entry.
    expect(manager.indexStats().usedBytes).toBeLessThanOrEqual(6 * 20);
    await manager.close();
    const text = (await io.readFile(`${DATA}/cleaner-offset-checkpoint`)).toString();
    expect(text).toBe('0\n1\ntable 0 40\n');
    const reopened = await open(io, { cleaner: { enabled: false } });
    expect(reopened.cleaner.stateOf(reopened.getLog('table', 0) as Log).firstDirtyOffset).toBe(40);
    await reopened.close();
    expect(io.openHandles()).toEqual([]);
  });

  it('a truncation racing a pass makes the swap stale; the log holds the truncated records', async () => {
    const io = await newIo();
    const manager = await open(io, { cleaner: { enabled: false } });
    const log = await manager.getOrCreateLog('table', 0);
    await fill(log, 8);
    const pass = manager.cleaner.clean(log);
    const truncation = log.truncateTo(3);
    const stats = await pass;
    await truncation;
    expect(stats.outcome).toBe('stale');
    expect(log.logEndOffset).toBe(3);
    expect(dataRecords(await readBatches(log)).map((r) => r.offset)).toEqual([0, 1, 2]);
    expect((await io.readdir(`${DATA}/table-0`)).filter((n) => n.endsWith('.cleaned') || n.endsWith('.swap'))).toEqual([]);
    await manager.close();
  });

  it('deleteLog and close wait for a running pass', async () => {
    const io = await newIo();
    const manager = await open(io, { cleaner: { enabled: false } });
    const a = await manager.getOrCreateLog('table', 0);
    const b = await manager.getOrCreateLog('table', 1);
    await fill(a, 8);
    await fill(b, 8);
    const passA = manager.cleaner.clean(a);
    await manager.deleteLog('table', 0);
    const statsA = await passA;
    expect(['cleaned', 'stale', 'stopped']).toContain(statsA.outcome);
    expect(manager.getLog('table', 0)).toBeUndefined();
    const passB = manager.cleaner.clean(b);
    await manager.close();
    expect(['cleaned', 'stopped']).toContain((await passB).outcome);
    expect(io.openHandles()).toEqual([]);
  });
});

describe('Throttler', () => {
  it('sleeps so that bytes charged / elapsed stays at the rate', async () => {
    let now = 0;
    const slept: number[] = [];
    const throttler = new Throttler({ bytesPerSecond: 1024 * 1024, now: () => now, sleep: async (ms) => { slept.push(ms); now += ms; } });
    for (let i = 0; i < 64; i++) await throttler.charge(64 * 1024);
    // 4 MiB at 1 MiB/s with no time passing otherwise: about 4 s of sleep.
    const total = slept.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(3900);
    expect(total).toBeLessThanOrEqual(4100);
    const free = new Throttler({ bytesPerSecond: Number.POSITIVE_INFINITY, sleep: async () => { throw new Error('no sleep'); } });
    await free.charge(1 << 30);
  });
});
