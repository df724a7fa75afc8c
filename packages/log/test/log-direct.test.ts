// Log in direct mode (O_DIRECT writer, second handle) on SimIo: byte-identical
// files against buffered mode, mode changes at a roll (staging exhausted →
// buffered for that segment, direct again at the next roll), reopened,
// sealed and previously direct-written segments read whatever wrote them,
// truncation inside a page, reservation growth, and the clean-shutdown
// torn-tail regression.
import { AlignedArena } from '@seglog/io';
import type { SimIo } from '@seglog/io';
import { describe, expect, it } from 'vitest';
import { Log as LogClass } from '../src/log/log.js';
import type { Log } from '../src/log/log.js';
import { config, newIo, openLog, producerBatch, readAll, segmentPath } from './log-helpers.js';

const SIZE = producerBatch(1, { valueBytes: 100 }).length;

async function fill(log: Log, count: number, tag = 0): Promise<void> {
  for (let i = 0; i < count; i++) await log.appendAsLeader(producerBatch(1, { valueBytes: 100, tag: tag + i }), { leaderEpoch: 0 });
  await log.written(log.logEndOffset - 1);
}

async function files(io: SimIo, bases: readonly number[]): Promise<Buffer[]> {
  return Promise.all(bases.map((base) => io.readFile(segmentPath(base, '.log'))));
}

describe('Log in direct mode', () => {
  it('writes the same .log bytes as buffered mode, through rolls, and reads them back', async () => {
    const results: Buffer[][] = [];
    for (const writeMode of ['buffered', 'direct'] as const) {
      const io = await newIo();
      const log = await openLog(io, config({ writeMode, segmentBytes: SIZE * 7 }));
      expect(log.writeMode).toBe(writeMode);
      await fill(log, 20);
      expect(log.numberOfSegments).toBe(3);
      const all = await readAll(log);
      expect(all.map(([o]) => o)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      await log.close();
      expect(io.openHandles()).toEqual([]);
      results.push(await files(io, [0, 7, 14]));
      expect(log.metrics.directSegments).toBe(writeMode === 'direct' ? 3 : 0);
    }
    expect(results[1]).toEqual(results[0]);
  });

  it('falls back to buffered when no staging chunk is free and returns to direct at a later roll', async () => {
    const arena = new AlignedArena({ chunkBytes: 64 * 1024, chunkCount: 1 });
    const cfg = config({ writeMode: 'direct', segmentBytes: SIZE * 4 });
    const io2 = await newIo();
    const a = await openLogAt(io2, '/data/a-0', cfg, arena);
    const b = await openLogAt(io2, '/data/b-0', cfg, arena);
    expect(a.writeMode).toBe('direct');
    expect(b.writeMode).toBe('buffered');
    expect(b.metrics.directFallbacks).toBe(1);
    await fill(b, 3);
    await a.close();
    await fill(b, 3, 100);
    // The roll at the 5th batch made a new segment: staging is free again.
    expect(b.writeMode).toBe('direct');
    expect(b.metrics.directSegments).toBe(1);
    expect((await readAll(b)).length).toBe(6);
    await b.close();
    expect(io2.openHandles()).toEqual([]);
  });

  it('reads reopened, sealed and previously direct-written segments whichever mode wrote them', async () => {
    const io = await newIo();
    let writeMode: 'buffered' | 'direct' = 'direct';
    let log = await openLog(io, config({ writeMode, segmentBytes: SIZE * 5 }));
    const expected: Array<[number, string]> = [];
    for (let round = 0; round < 4; round++) {
      await fill(log, 7, round * 100);
      expected.splice(0, expected.length, ...(await readAll(log)));
      await log.close();
      writeMode = writeMode === 'direct' ? 'buffered' : 'direct';
      log = await openLog(io, config({ writeMode, segmentBytes: SIZE * 5 }), { recoveryPoint: log.logEndOffset });
      expect(log.writeMode).toBe(writeMode);
      // A reopened log starts with an empty cache: every read goes to the pool.
      const before = log.placement.read.pool;
      expect(await readAll(log)).toEqual(expected);
      expect(log.placement.read.pool).toBeGreaterThan(before);
    }
    expect(expected.length).toBe(28);
    await log.close();
  });

  it('continues a partial tail page after reopen and after truncation inside a page', async () => {
    const io = await newIo();
    const cfg = config({ writeMode: 'direct' });
    let log = await openLog(io, cfg);
    await fill(log, 5);
    await log.close();
    expect(SIZE * 5 % 4096).not.toBe(0);
    log = await openLog(io, cfg, { recoveryPoint: 5 });
    await fill(log, 3, 50);
    await log.truncateTo(6);
    await fill(log, 2, 70);
    const values = await readAll(log);
    expect(values.map(([o]) => o)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    await log.close();
    const bytes = await io.readFile(segmentPath(0, '.log'));
    expect(bytes.length).toBe(SIZE * 8);
    const reopened = await openLog(io, cfg, { recoveryPoint: 8 });
    expect(await readAll(reopened)).toEqual(values);
    await reopened.close();
  });

  it('reserves zero-filled steps ahead with preallocate, never lets appends pass the reservation, trims on close', async () => {
    const io = await newIo();
    const log = await openLog(io, config({ writeMode: 'direct', preallocate: true, segmentBytes: 64 * 1024 }), { reservationStepBytes: 8192 });
    await fill(log, 100);
    const grows = log.placement.reasons.reservation;
    expect(grows).toBeGreaterThan(0);
    const size = (await io.stat(segmentPath(0, '.log'))).size;
    expect(size % 8192).toBe(0);
    expect(size).toBeGreaterThanOrEqual(SIZE * 100);
    await log.close();
    expect((await io.stat(segmentPath(0, '.log'))).size).toBe(SIZE * 100);
  });
});

describe('torn tail after a clean shutdown (regression)', () => {
  for (const writeMode of ['buffered', 'direct'] as const) {
    it(`${writeMode}: 40 garbage bytes after close are cut on reopen, not an assertion`, async () => {
      const io = await newIo();
      const cfg = config({ writeMode });
      const log = await openLog(io, cfg);
      await fill(log, 3);
      const before = await readAll(log);
      await log.close();
      const file = await io.open(segmentPath(0, '.log'));
      await file.pwrite(Buffer.alloc(40, 0x5a), SIZE * 3);
      await file.close();
      const reopened = await openLog(io, cfg, { hadCleanShutdown: true, recoveryPoint: 3 });
      expect(reopened.logEndOffset).toBe(3);
      expect(await readAll(reopened)).toEqual(before);
      expect((await io.stat(segmentPath(0, '.log'))).size).toBe(SIZE * 3);
      await reopened.close();
    });
  }

  it('damage below the recovery point after a clean shutdown is SEGLOG_ERR_LOG_CORRUPTION, file intact', async () => {
    const io = await newIo();
    const cfg = config();
    const log = await openLog(io, cfg);
    await fill(log, 3);
    await log.close();
    const file = await io.open(segmentPath(0, '.log'));
    // A garbage header where the second batch starts: the clean scan cannot end at the file size.
    await file.pwrite(Buffer.alloc(61, 0x5a), SIZE);
    await file.close();
    const length = (await io.stat(segmentPath(0, '.log'))).size;
    const error = await openLog(io, cfg, { hadCleanShutdown: true, recoveryPoint: 3 }).then(() => null, (e: unknown) => e as { code?: string });
    expect(error?.code).toBe('SEGLOG_ERR_LOG_CORRUPTION');
    expect((await io.stat(segmentPath(0, '.log'))).size).toBe(length);
  });
});

function openLogAt(io: SimIo, dir: string, cfg: ReturnType<typeof config>, arena: AlignedArena): Promise<Log> {
  return LogClass.open(io, dir, cfg, { topic: dir, partition: 0, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: true, arena });
}
