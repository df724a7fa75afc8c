// The front door (openLog / EmbeddedLog / records()) on SimIo (crashes,
// damage) and on NodeIo in a temporary directory (direct-mode probe): the
// defined behaviour of issue 19 as a newcomer uses it.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { SimIo } from '@seglog/io';
import type { LogRecord } from '@seglog/records';
import { openLog } from '../src/embed/open-log.js';
import type { EmbeddedDirectFallback, OpenLogOptions } from '../src/embed/open-log.js';
import type { EmbeddedLog } from '../src/embed/embedded-log.js';
import { T0 } from './log-helpers.js';

const DIR = '/data/embedded';

function codeOf(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}

async function newSim(): Promise<SimIo> {
  const io = new SimIo();
  await io.mkdir('/data');
  await io.fsyncDir('/');
  return io;
}

function open(io: SimIo, options: OpenLogOptions = {}): Promise<EmbeddedLog> {
  return openLog(DIR, { io, minFreeBytes: 0, now: () => T0, ...options, config: { retentionMs: -1, segmentBytes: 4096, ...(options.config ?? {}) } });
}

async function collect(iterable: AsyncIterable<LogRecord>): Promise<Array<[number, string]>> {
  const out: Array<[number, string]> = [];
  for await (const record of iterable) out.push([record.offset, record.value?.toString('utf8') ?? '']);
  return out;
}

async function appendValues(log: EmbeddedLog, from: number, count: number, perBatch: number): Promise<void> {
  for (let i = from; i < from + count; i += perBatch) {
    const records = [];
    for (let j = i; j < Math.min(from + count, i + perBatch); j++) records.push({ value: `value-${j}` });
    await log.append(records);
  }
}

function expected(from: number, to: number): Array<[number, string]> {
  return Array.from({ length: to - from }, (_, k) => [from + k, `value-${from + k}`] as [number, string]);
}

describe('openLog on SimIo', () => {
  it('appends, makes durable, reads back across segments, reopens cleanly with the records intact', async () => {
    const io = await newSim();
    const log = await open(io);
    expect(log.hadCleanShutdown).toBe(false);
    await appendValues(log, 0, 500, 7);
    await log.durable();
    expect(log.durableOffset).toBe(500);
    expect(log.log.numberOfSegments).toBeGreaterThan(2);
    expect(await collect(log.records())).toEqual(expected(0, 500));
    // Inside a batch: records before `from` are skipped.
    expect(await collect(log.records({ from: 250 }))).toEqual(expected(250, 500));
    await log.close();
    const again = await open(io);
    expect(again.hadCleanShutdown).toBe(true);
    expect(again.logEndOffset).toBe(500);
    expect(await collect(again.records())).toEqual(expected(0, 500));
    await again.close();
  });

  it('stamps records without timestamps with the clock and keeps appends on the caller (no epoch checkpoint)', async () => {
    const io = await newSim();
    const log = await open(io);
    for (let i = 0; i < 5; i++) await log.append([{ value: `v${i}` }]);
    const records = [];
    for await (const record of log.records()) records.push(record);
    expect(records.map((r) => r.timestamp)).toEqual([T0, T0, T0, T0, T0]);
    const placement = log.placement;
    expect(Object.isFrozen(placement)).toBe(true);
    expect(placement.reasons.epoch).toBe(0);
    await log.close();
  });

  it('reads its own writes at once (no written() by hand) and matches a model under random appends', async () => {
    await fc.assert(fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 15 }), fc.nat(), async (sizes, fromSeed) => {
      const io = await newSim();
      const log = await open(io);
      const model: Array<[number, string]> = [];
      for (const size of sizes) {
        const records = Array.from({ length: size }, (_, k) => ({ value: `r${model.length + k}` }));
        const result = await log.append(records);
        expect(result.firstOffset).toBe(model.length);
        for (let k = 0; k < size; k++) model.push([model.length, `r${model.length}`]);
        // Not awaited: read-your-writes holds for records() and read().
        expect((await collect(log.records())).length).toBe(model.length);
      }
      const from = fromSeed % model.length;
      expect(await collect(log.records({ from }))).toEqual(model.slice(from));
      await log.close();
    }), { numRuns: 25 });
  });

  it('durable() without an argument means everything accepted; an offset not appended rejects typed', async () => {
    const io = await newSim();
    const log = await open(io);
    await log.durable();
    await log.sync();
    await appendValues(log, 0, 10, 10);
    expect(codeOf(await log.durable(log.logEndOffset).catch((e: unknown) => e))).toBe('SEGLOG_ERR_LOG_OFFSET_NOT_APPENDED');
    await log.sync();
    expect(log.durableOffset).toBe(10);
    await log.close();
  });

  it('follows the tail and ends when the log closes', async () => {
    const io = await newSim();
    const log = await open(io);
    await appendValues(log, 0, 3, 3);
    const seen: Array<[number, string]> = [];
    const done = (async () => {
      for await (const record of log.records({ follow: true })) {
        seen.push([record.offset, record.value?.toString('utf8') ?? '']);
        if (seen.length === 3) await appendValues(log, 3, 4, 2);
      }
    })();
    // Counts, not time: wait until every record arrived, then close.
    while (seen.length < 7) await new Promise((resolve) => setImmediate(resolve));
    await log.close();
    await done;
    expect(seen).toEqual(expected(0, 7));
  });

  it('splits an append larger than maxMessageBytes into batches, contiguous offsets', async () => {
    const io = await newSim();
    const log = await open(io, { config: { maxMessageBytes: 1024, segmentBytes: 1024 * 1024 } });
    const records = Array.from({ length: 300 }, (_, k) => ({ value: `value-${k}` }));
    const result = await log.append(records);
    expect([result.firstOffset, result.lastOffset, result.recordsCount]).toEqual([0, 299, 300]);
    expect(await collect(log.records())).toEqual(expected(0, 300));
    await log.close();
  });

  it('recovers after a crash: what durable() acknowledged survives', async () => {
    for (const mode of ['process', 'power-clean'] as const) {
      const io = await newSim();
      const log = await open(io);
      await appendValues(log, 0, 120, 6);
      await log.durable();
      await appendValues(log, 120, 30, 6); // accepted, not acknowledged as durable
      const crashed = io.recover(mode);
      const reopened = await open(crashed);
      expect(reopened.hadCleanShutdown).toBe(false);
      expect(reopened.logEndOffset).toBeGreaterThanOrEqual(120);
      const records = await collect(reopened.records());
      expect(records).toEqual(expected(0, reopened.logEndOffset));
      await reopened.close();
    }
  });

  it('locks the directory: a second openLog gets SEGLOG_ERR_LOG_LOCKED', async () => {
    const io = await newSim();
    const log = await open(io);
    expect(codeOf(await open(io).catch((e: unknown) => e))).toBe('SEGLOG_ERR_LOG_LOCKED');
    await log.close();
    await (await open(io)).close();
  });

  it('checks every batch CRC: a damaged value byte throws SEGLOG_ERR_LOG_CORRUPT_BATCH', async () => {
    const io = await newSim();
    const log = await open(io, { config: { segmentBytes: 1024 * 1024 } });
    await appendValues(log, 0, 10, 10);
    await log.close();
    const file = await io.open(`${DIR}/log-0/00000000000000000000.log`);
    const bytes = Buffer.alloc(1);
    const size = await file.size();
    await file.pread(bytes, size - 2, 1);
    bytes[0] = (bytes[0] as number) ^ 0xff;
    await file.pwrite(bytes, size - 2);
    await file.close();
    const reopened = await open(io, { config: { segmentBytes: 1024 * 1024 } });
    expect(codeOf(await collect(reopened.records()).catch((e: unknown) => e))).toBe('SEGLOG_ERR_LOG_CORRUPT_BATCH');
    await reopened.close();
  });

  it('starts no timer of its own by default', async () => {
    const io = await newSim();
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const log = await open(io);
    await appendValues(log, 0, 5, 5);
    expect(timers()).toBe(before);
    await log.close();
  });
});

describe('openLog direct mode on NodeIo', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  function tempDir(): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'seglog-open-log-'));
    dirs.push(dir);
    return path.join(dir, 'data');
  }

  it('strictDirect fails with SEGLOG_ERR_LOG_DIRECT_UNAVAILABLE when the probe finds O_DIRECT refused', async () => {
    const dir = tempDir();
    const error = await openLog(dir, { config: { writeMode: 'direct' }, strictDirect: true, minFreeBytes: 0, probeDirectAlignment: async () => null })
      .catch((e: unknown) => e);
    expect(codeOf(error)).toBe('SEGLOG_ERR_LOG_DIRECT_UNAVAILABLE');
  });

  it('otherwise opens buffered and reports the fallback through onDirectFallback and a log line', async () => {
    const dir = tempDir();
    const fallbacks: EmbeddedDirectFallback[] = [];
    const lines: string[] = [];
    const log = await openLog(dir, {
      config: { writeMode: 'direct' }, minFreeBytes: 0, probeDirectAlignment: async () => null,
      onDirectFallback: (f) => fallbacks.push(f), logger: (line) => lines.push(line),
    });
    expect(log.writeMode).toBe('buffered');
    expect(fallbacks).toEqual([{ segmentBaseOffset: null, reason: 'unsupported', cause: null }]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/fell back to buffered/);
    await appendValues(log, 0, 20, 5);
    await log.durable();
    await log.close();
  });

  it('reads its own writes on NodeIo (writes complete on the threadpool, after append resolves)', async () => {
    const dir = tempDir();
    const log = await openLog(dir, { minFreeBytes: 0 });
    for (let i = 0; i < 30; i++) {
      await log.append([{ value: `value-${i}` }]);
      // No written(): records() and read() wait for accepted records themselves.
      expect(await collect(log.records({ from: i }))).toEqual(expected(i, i + 1));
      await log.append([{ value: `value-x${i}` }]);
      const plan = await log.read(log.logEndOffset - 1, 1 << 20);
      expect(plan.nextOffset).toBe(log.logEndOffset);
      await plan.release();
      await log.log.truncateTo(log.logEndOffset - 1);
    }
    await log.close();
  });

  it("runs the issue's newcomer program: 1M records appended, durable, read back, reopened", async () => {
    const dir = tempDir();
    const log = await openLog(dir, { minFreeBytes: 0 });
    const total = 1_000_000;
    for (let i = 0; i < total; i += 1000) {
      await log.append(Array.from({ length: 1000 }, (_, k) => ({ value: `value-${i + k}` })));
    }
    await log.durable();
    expect(log.durableOffset).toBe(total);
    let count = 0;
    let intact = true;
    for await (const record of log.records()) {
      if (record.value?.toString('utf8') !== `value-${record.offset}` || record.offset !== count) intact = false;
      count++;
    }
    expect([count, intact]).toEqual([total, true]);
    await log.close();
    const again = await openLog(dir, { minFreeBytes: 0 });
    expect(again.hadCleanShutdown).toBe(true);
    let reopened = 0;
    for await (const record of again.records({ from: total - 10 })) reopened += record.offset >= total - 10 ? 1 : 0;
    expect(reopened).toBe(10);
    await again.close();
  });

  it('probes the alignment itself and writes direct where the file system allows it', async () => {
    const dir = tempDir();
    const log = await openLog(dir, { config: { writeMode: 'direct' }, strictDirect: true, minFreeBytes: 0 }).catch((e: unknown) => e);
    if (codeOf(log) === 'SEGLOG_ERR_LOG_DIRECT_UNAVAILABLE') return; // this file system refuses O_DIRECT: the strict case above covers it
    const opened = log as EmbeddedLog;
    expect(opened.writeMode).toBe('direct');
    await appendValues(opened, 0, 50, 5);
    await opened.durable();
    await opened.close();
    const again = await openLog(dir, { minFreeBytes: 0 });
    expect(await collect(again.records())).toEqual(expected(0, 50));
    await again.close();
  });
});
