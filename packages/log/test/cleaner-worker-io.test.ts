// The cleaner's worker doing a pass's file I/O itself (cleaner-compute.ts
// mapAt/filterAt: readSync of the segments' fds, writeSync to the .cleaned
// file's), which only NodeIo's real fds allow: SimIo's crash and fault suites
// run the pool path. On disk in a temporary directory:
// - the worker's I/O, the worker computing with the pass's pool I/O, and the
//   event loop give byte-identical directories, pass after pass, and the
//   worker really read the windows itself (computeCounters.ioWindows);
// - a segment damaged or cut short on disk fails the pass as corruption and
//   changes nothing (no .cleaned left, every file as it was);
// - a read of the worker's that fails comes back as an IoError with the
//   errno and the path.
import { NodeIo } from '@seglog/io';
import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { beginCompute, computeCounters, setWorkerIo } from '../src/cleaner/cleaner-compute.js';
import type { ComputeMode } from '../src/cleaner/cleaner-compute.js';
import { LogCleaner } from '../src/cleaner/log-cleaner.js';
import { Log } from '../src/log/log.js';
import { appendRandomBatches } from './cleaner-helpers.js';
import { clock, config } from './log-helpers.js';

const COMPACT = { cleanupPolicy: 'compact', segmentBytes: 2048, minCleanableDirtyRatio: 0.01, deleteRetentionMs: 500 } as const;
const dirs: string[] = [];

afterEach(() => {
  setWorkerIo(true);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function build(seed: number, batches: number): Promise<{ dir: string; log: Log; now: { now: number; fn: () => number } }> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'seglog-cleaner-io-'));
  dirs.push(root);
  const dir = path.join(root, 't-0');
  const io = new NodeIo();
  await io.mkdir(dir);
  const c = clock();
  const log = await Log.open(io, dir, config(COMPACT), { topic: 't', partition: 0, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: true, now: c.fn });
  await appendRandomBatches(log, seed, batches);
  await log.forceRoll();
  await log.flush();
  log.updateHighWatermark(log.logEndOffset);
  return { dir, log, now: c };
}

/** Every file of the directory, name → bytes (hex). */
function files(dir: string): Map<string, string> {
  return new Map(readdirSync(dir).sort().map((name) => [name, readFileSync(path.join(dir, name)).toString('hex')]));
}

function cleaner(log: Log, now: () => number, compute: ComputeMode, offsetMapBytes?: number): LogCleaner {
  return new LogCleaner({ io: new NodeIo(), dataDir: path.dirname(log.dir), logs: () => [log], pool: null, now, compute, ...(offsetMapBytes === undefined ? {} : { offsetMapBytes }) });
}

/** The first sealed segment's .log file with at least `bytes` bytes. */
function sealedSegment(dir: string, bytes: number): string {
  const logs = readdirSync(dir).filter((name) => name.endsWith('.log')).sort();
  const name = logs.slice(0, -1).find((n) => readFileSync(path.join(dir, n)).length >= bytes);
  if (name === undefined) throw new Error('no sealed segment that large');
  return path.join(dir, name);
}

describe('log cleaner: the worker reads and writes the files itself (NodeIo)', () => {
  it('gives the same bytes as pool I/O and as the event loop, pass after pass, and reads the windows itself', async () => {
    for (const seed of [21, 22, 23]) {
      const ways = [
        { compute: 'worker' as const, workerIo: true, ...(await build(seed, 150)) },
        { compute: 'worker' as const, workerIo: false, ...(await build(seed, 150)) },
        { compute: 'inline' as const, workerIo: false, ...(await build(seed, 150)) },
      ];
      expect(files(ways[1]!.dir)).toEqual(files(ways[0]!.dir));
      const mapBytes = seed === 22 ? 600 : undefined; // a small map splits the dirty section over passes
      const cleaners = ways.map((w) => cleaner(w.log, w.now.fn, w.compute, mapBytes));
      for (let pass = 0; pass < 3; pass++) {
        const outcomes = [];
        for (let i = 0; i < ways.length; i++) {
          const w = ways[i]!;
          setWorkerIo(w.workerIo);
          const windows = computeCounters.ioWindows;
          outcomes.push(await cleaners[i]!.clean(w.log));
          const read = computeCounters.ioWindows - windows;
          if (w.workerIo && outcomes[i]!.outcome === 'cleaned') expect(read).toBeGreaterThan(0);
          if (!w.workerIo) expect(read).toBe(0);
        }
        if (pass === 0) {
          expect(outcomes[0]!.outcome).toBe('cleaned');
          expect(outcomes[0]!.removedRecords).toBeGreaterThan(0);
        }
        expect(outcomes[1]).toEqual(outcomes[0]);
        expect(outcomes[2]).toEqual(outcomes[0]);
        expect(files(ways[0]!.dir)).toEqual(files(ways[2]!.dir));
        expect(files(ways[1]!.dir)).toEqual(files(ways[2]!.dir));
        for (const w of ways) w.now.now += 400;
      }
      for (const w of ways) await w.log.close();
    }
  });

  it('a segment damaged on disk fails the pass as corruption and changes nothing', async () => {
    const { dir, log, now } = await build(31, 150);
    const victim = sealedSegment(dir, 400);
    const bytes = readFileSync(victim);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 20) ^ 0xff, bytes.length - 20); // inside the last batch's records: its CRC no longer matches
    writeFileSync(victim, bytes);
    const before = files(dir);
    const windows = computeCounters.ioWindows;
    await expect(cleaner(log, now.fn, 'worker').clean(log)).rejects.toMatchObject({ code: 'SEGLOG_ERR_LOG_CORRUPTION', message: expect.stringMatching(/CRC or framing/) });
    expect(computeCounters.ioWindows).toBeGreaterThan(windows);
    expect(files(dir)).toEqual(before);
    await log.close();
  });

  it('a segment cut short on disk under an open log fails the pass as corruption and changes nothing', async () => {
    const { dir, log, now } = await build(32, 150);
    const victim = sealedSegment(dir, 400);
    truncateSync(victim, readFileSync(victim).length - 100);
    const before = files(dir);
    await expect(cleaner(log, now.fn, 'worker').clean(log)).rejects.toMatchObject({ code: 'SEGLOG_ERR_LOG_CORRUPTION', message: expect.stringMatching(/shorter than the segment size/) });
    expect(files(dir)).toEqual(before);
    await log.close();
  });

  it("a failed read of the worker's is an IoError with its errno and path", async () => {
    const compute = await beginCompute('worker', { offsetMapBytes: 1 << 16, firstDirtyOffset: 0, nowMs: 0, deleteRetentionMs: 0, aborted: [], lastBatchOfProducer: [] });
    try {
      expect(compute.mode).toBe('worker');
      // An fd number no file of this process has (EBADF).
      await expect(compute.mapAt({ fd: 1_000_000, path: '/nowhere/00000000000000000000.log', position: 0, length: 4096, windowBytes: 4096, limit: 4096 }))
        .rejects.toMatchObject({ name: 'IoError', errno: 'EBADF', message: expect.stringMatching(/pread \/nowhere\/00000000000000000000\.log: EBADF/) });
    } finally {
      compute.end();
    }
  });
});
