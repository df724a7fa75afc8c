// Where the cleaner's CPU work runs (cleaner-compute.ts): the worker thread
// and the event loop must give the same bytes (a differential over seeded
// random logs: keyed records, tombstones, an idempotent producer, a committed
// and an aborted transaction), the worker must really be used, and a worker
// that dies or hangs mid-pass must fail the pass leaving the log exactly as
// it was, the next pass starting a new worker and cleaning.
import type { SimIo } from '@seglog/io';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { CLEANER_WORKER_NICE, cleanerWorkerPolicy, computeCounters, injectWorkerFault, setWorkerDeadlineMs, terminateCleanerWorker, WORKER_DEADLINE_MS } from '../src/cleaner/cleaner-compute.js';
import { LogCleaner } from '../src/cleaner/log-cleaner.js';
import type { ComputeMode } from '../src/cleaner/cleaner-compute.js';
import type { Log } from '../src/log/log.js';
import { appendRandomBatches } from './cleaner-helpers.js';
import { DIR, clock, config, newIo, openLog } from './log-helpers.js';

const COMPACT = { cleanupPolicy: 'compact', segmentBytes: 2048, minCleanableDirtyRatio: 0.01, deleteRetentionMs: 500 } as const;

/** A compacted log of `batches` random batches (a fixed schedule per seed). */
async function build(seed: number, batches: number): Promise<{ io: SimIo; log: Log; now: { now: number; fn: () => number } }> {
  const io = await newIo();
  const c = clock();
  const log = await openLog(io, config(COMPACT), { now: c.fn });
  await appendRandomBatches(log, seed, batches);
  await log.forceRoll();
  log.updateHighWatermark(log.logEndOffset);
  return { io, log, now: c };
}

/** Every file of the log directory, name → bytes. */
async function files(io: SimIo): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const name of await io.readdir(DIR)) out.set(name, (await io.readFile(`${DIR}/${name}`)).toString('hex'));
  return out;
}

function cleaner(io: SimIo, log: Log, now: () => number, compute: ComputeMode, offsetMapBytes?: number): LogCleaner {
  return new LogCleaner({ io, dataDir: '/data', logs: () => [log], pool: null, now, compute, ...(offsetMapBytes === undefined ? {} : { offsetMapBytes }) });
}

/** The files of the same log after one inline pass: what a pass that failed first and was retried must give. */
async function cleanedTwin(seed: number, batches: number): Promise<Map<string, string>> {
  const twin = await build(seed, batches);
  const stats = await cleaner(twin.io, twin.log, twin.now.fn, 'inline').clean(twin.log);
  expect(stats.outcome).toBe('cleaned');
  const out = await files(twin.io);
  await twin.log.close();
  return out;
}

afterEach(() => {
  setWorkerDeadlineMs(WORKER_DEADLINE_MS);
});

describe('log cleaner: compute in a worker thread or on the event loop', () => {
  it('gives byte-identical logs either way, pass after pass (seeded random logs)', async () => {
    for (const seed of [1, 2, 3, 4]) {
      const inline = await build(seed, 120);
      const worker = await build(seed, 120);
      expect(await files(worker.io)).toEqual(await files(inline.io));
      // A small offset map in one round splits the dirty section over several passes.
      const mapBytes = seed % 2 === 0 ? 600 : undefined;
      const a = cleaner(inline.io, inline.log, inline.now.fn, 'inline', mapBytes);
      const b = cleaner(worker.io, worker.log, worker.now.fn, 'worker', mapBytes);
      const workerPasses = computeCounters.workerPasses;
      for (let pass = 0; pass < 3; pass++) {
        const sa = await a.clean(inline.log);
        const sb = await b.clean(worker.log);
        expect(sb).toEqual(sa);
        if (pass === 0) {
          expect(sa.outcome).toBe('cleaned');
          expect(sa.removedRecords).toBeGreaterThan(0);
          expect(sa.bytesSaved).toBeGreaterThan(0);
        }
        expect(await files(worker.io)).toEqual(await files(inline.io));
        inline.now.now += 400;
        worker.now.now += 400;
      }
      expect(computeCounters.workerPasses - workerPasses).toBe(3);
      await inline.log.close();
      await worker.log.close();
    }
    expect(computeCounters.fallbacks).toBe(0);
  });

  it('a worker that exits mid-pass fails the pass, leaves the log as it was, and the next pass cleans', async () => {
    const { io, log, now } = await build(9, 150);
    const before = await files(io);
    const c = cleaner(io, log, now.fn, 'worker');
    // begin, then a few windows of the map phase: the worker exits mid-pass.
    await injectWorkerFault('exit', 3);
    await expect(c.clean(log)).rejects.toThrow(/cleaner worker exited with code 3/);
    expect(await files(io)).toEqual(before);
    const stats = await c.clean(log);
    expect(stats.outcome).toBe('cleaned');
    expect(await files(io)).toEqual(await cleanedTwin(9, 150));
    await log.close();
  });

  it('a worker that stops answering is terminated at its deadline; the pass fails changing nothing', async () => {
    const { io, log, now } = await build(10, 150);
    const before = await files(io);
    const c = cleaner(io, log, now.fn, 'worker');
    setWorkerDeadlineMs(300);
    await injectWorkerFault('hang', 3);
    await expect(c.clean(log)).rejects.toThrow(/did not answer within 300 ms/);
    expect(await files(io)).toEqual(before);
    expect(c.stateOf(log).failures).toBe(1);
    setWorkerDeadlineMs(WORKER_DEADLINE_MS);
    const stats = await c.clean(log);
    expect(stats.outcome).toBe('cleaned');
    expect(stats.removedRecords).toBeGreaterThan(0);
    expect(await files(io)).toEqual(await cleanedTwin(10, 150));
    await log.close();
  });

  it('terminateCleanerWorker between passes is harmless: the next pass starts another', async () => {
    const { io, log, now } = await build(11, 60);
    const c = cleaner(io, log, now.fn, 'worker');
    terminateCleanerWorker();
    const stats = await c.clean(log);
    expect(stats.outcome).toBe('cleaned');
    expect(await files(io)).toEqual(await cleanedTwin(11, 60));
    await log.close();
  });

  // Linux: /proc shows each thread's nice value (field 19 of /proc/self/task/<tid>/stat). Elsewhere skipped.
  it.skipIf(!existsSync('/proc/self/task'))('runs at the lowest CPU priority, the event loop thread at its own', async () => {
    const niceOf = (): number[] => readdirSync('/proc/self/task').map((tid) => {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    });
    const { io, log, now } = await build(12, 60);
    terminateCleanerWorker();
    expect((await cleaner(io, log, now.fn, 'worker').clean(log)).outcome).toBe('cleaned');
    const threads = niceOf();
    expect(threads.filter((n) => n === CLEANER_WORKER_NICE).length).toBeGreaterThan(0);
    expect(threads[0]).toBe(0); // the main thread (its tid is the pid, listed first) keeps the process's priority
    expect(cleanerWorkerPolicy()).toBe('nice');
    await log.close();
  });
});
