// `.seglog_sealed_sizes` (log-dir/sealed-sizes.ts, issue 24): a clean close
// records every sealed segment's sizes, the next clean open stats none of
// them and reads every byte back; a .log changed after the close is refused
// at read as damage; a file without the marker (an unclean stop), or one that
// is damaged, is ignored and deleted, and every segment is stat'ed as before.
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync, appendFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Io } from '@seglog/io';
import { NodeIo } from '@seglog/io';
import { buildBatch, RecordBatch } from '@seglog/records';
import { LogConfig, LogManager } from '../src/index.js';
import { parseSealedSizes } from '../src/log-dir/sealed-sizes.js';

const SIZES = '.seglog_sealed_sizes';
const PARTITIONS = 3;
const SEGMENTS = 6;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** NodeIo, with every stat()ed path counted. */
function countingIo(): { io: Io; stats: string[] } {
  const stats: string[] = [];
  const inner = new NodeIo();
  const io = new Proxy(inner, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (key === 'stat') return (p: string) => { stats.push(p); return target.stat(p); };
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { io, stats };
}

const options = { defaultConfig: new LogConfig().with({ segmentBytes: 1024, indexIntervalBytes: 64 }), minFreeBytes: 0, checkpointIntervalMs: 0, diskCheckIntervalMs: 0 };
const value = (p: number, i: number): Buffer => Buffer.from(`p${p}-record-${i}-`.padEnd(600, 'x'));

async function create(): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-sealed-'));
  dirs.push(dir);
  const manager = await LogManager.open(new NodeIo(), dir, options);
  for (let p = 0; p < PARTITIONS; p++) {
    const log = await manager.getOrCreateLog('t', p);
    for (let i = 0; i < SEGMENTS; i++) await log.appendAsLeader(buildBatch({ records: [{ key: null, value: value(p, i) }], baseTimestamp: 1_700_000_000_000 + i }), { leaderEpoch: 0 });
  }
  await manager.close();
  return dir;
}

/** Reads every partition from its start and checks every record's offset and bytes. */
async function readAll(manager: LogManager): Promise<number> {
  let records = 0;
  for (let p = 0; p < PARTITIONS; p++) {
    const log = manager.getLog('t', p);
    if (log === undefined) throw new Error(`partition ${p} missing`);
    let offset = log.logStartOffset;
    while (offset < log.logEndOffset) {
      const plan = await log.read(offset, 8192);
      const bytes = await plan.toBuffer();
      await plan.release();
      expect(bytes.length).toBeGreaterThan(0);
      for (let at = 0; at < bytes.length;) {
        const batch = new RecordBatch(bytes, at);
        expect(batch.isValid()).toBe(true);
        const cursor = batch.records();
        while (cursor.next()) {
          expect(cursor.offset).toBe(offset);
          expect((cursor.value as Buffer).equals(value(p, offset))).toBe(true);
          offset++;
          records++;
        }
        cursor.close();
        at += batch.sizeInBytes;
      }
    }
  }
  return records;
}

/** The stat()s of sealed segments' files (the last segment, base SEGMENTS - 1, is the active one). */
const ACTIVE = String(SEGMENTS - 1).padStart(20, '0');
const sealedLogStats = (stats: readonly string[]): string[] => stats.filter((p) => /\d{20}\.(log|index|timeindex)$/.test(p) && !path.basename(p).startsWith(ACTIVE));
const SEALED = SEGMENTS - 1;

describe('.seglog_sealed_sizes', () => {
  it('a clean close records every sealed segment; the clean reopen stats none of them and reads every byte', async () => {
    const dir = await create();
    const recorded = parseSealedSizes(readFileSync(path.join(dir, SIZES), 'utf8'));
    expect([...recorded.keys()].sort()).toEqual(['t-0', 't-1', 't-2']);
    for (const segments of recorded.values()) expect([...segments.keys()]).toEqual([0, 1, 2, 3, 4]); // one batch per segment: the active one (5) is not recorded
    const { io, stats } = countingIo();
    const manager = await LogManager.open(io, dir, options);
    expect(existsSync(path.join(dir, SIZES))).toBe(false); // taken with the marker
    expect(sealedLogStats(stats)).toEqual([]);
    expect(await readAll(manager)).toBe(PARTITIONS * SEGMENTS);
    await manager.close();
    // Without the record (deleted), the same open stats every sealed segment: the count above is the record's doing.
    rmSync(path.join(dir, SIZES));
    const again = countingIo();
    const plain = await LogManager.open(again.io, dir, options);
    expect(sealedLogStats(again.stats).length).toBe(PARTITIONS * SEALED * 3);
    expect(await readAll(plain)).toBe(PARTITIONS * SEGMENTS);
    await plain.close();
  });

  it.each(['shorter', 'longer'] as const)('a sealed .log %s than recorded is refused at read as damage, every time', async (change) => {
    const dir = await create();
    const victim = path.join(dir, 't-1', `${'0'.repeat(19)}2.log`);
    if (change === 'shorter') truncateSync(victim, 100);
    else appendFileSync(victim, Buffer.alloc(64, 0x7a));
    const manager = await LogManager.open(new NodeIo(), dir, options);
    const log = manager.getLog('t', 1);
    for (let attempt = 0; attempt < 2; attempt++) {
      await expect(log?.read(2, 8192)).rejects.toMatchObject({ code: 'SEGLOG_ERR_LOG_CORRUPTION', message: expect.stringContaining('changed after the clean shutdown') });
    }
    // The other segments and partitions read as before.
    const other = await manager.getLog('t', 1)?.read(3, 8192);
    expect((await other?.toBuffer())?.length).toBeGreaterThan(0);
    await other?.release();
    await manager.close();
  });

  it('a damaged record is noted and ignored (every segment stat\'ed); one left without the marker is deleted unread', async () => {
    const dir = await create();
    const file = path.join(dir, SIZES);
    writeFileSync(file, readFileSync(file, 'utf8').replace('t-0 1 ', 't-0 9 '));
    const damaged = countingIo();
    const manager = await LogManager.open(damaged.io, dir, options);
    expect(manager.notes.some((n) => n.includes(SIZES) && n.includes('CRC mismatch'))).toBe(true);
    expect(sealedLogStats(damaged.stats).length).toBe(PARTITIONS * SEALED * 3);
    expect(await readAll(manager)).toBe(PARTITIONS * SEGMENTS);
    await manager.close();
    // An unclean stop: the marker is gone, the record is stale.
    rmSync(path.join(dir, '.kafka_cleanshutdown'));
    const stale = countingIo();
    const reopened = await LogManager.open(stale.io, dir, options);
    expect(existsSync(file)).toBe(false);
    expect(reopened.notes.some((n) => n.includes(SIZES))).toBe(false);
    expect(await readAll(reopened)).toBe(PARTITIONS * SEGMENTS);
    await reopened.close();
  });

  it('the format parses what it writes and refuses anything else', () => {
    expect(() => parseSealedSizes('')).toThrow(/version 1/);
    expect(() => parseSealedSizes('seglog-sealed-sizes 2 0\n')).toThrow(/version 1/);
    fc.assert(fc.property(fc.string({ maxLength: 40 }), (junk) => {
      expect(() => parseSealedSizes(`seglog-sealed-sizes 1 1\n${junk}`)).toThrow();
    }), { numRuns: 50 });
  });
});
