// cleaner-stats (issue 20): a LogManager's cleaner keeps each compacted log's
// lastCleanMs and cumulative bytesSaved in the data directory's
// `cleaner-stats`, so they survive a close/reopen and a process crash and
// keep adding up after it; a missing file starts them at zero/null, a damaged
// one too, with statsError and a note, and the log opens as usual; the next
// pass rewrites the file whole. The format's parser refuses what it must.
// Neither cleaner file is listed in LogManager.skipped.
import { describe, expect, it } from 'vitest';
import { SeglogError } from '@seglog/common';
import type { SimIo } from '@seglog/io';
import { LogManager } from '../src/log-manager.js';
import type { Log } from '../src/log/log.js';
import { CheckpointFile } from '../src/checkpoint/checkpoint-file.js';
import { CLEANER_STATS_FILE, cleanerStatsFormat } from '../src/checkpoint/cleaner-stats-checkpoint.js';
import { config, newIo, T0 } from './log-helpers.js';
import { dataRecords, keyed, readBatches } from './cleaner-helpers.js';

const DATA = '/data/d';
const STATS = `${DATA}/${CLEANER_STATS_FILE}`;
const COMPACT = config({ cleanupPolicy: 'compact', segmentBytes: 600, segmentIndexBytes: 4096, indexIntervalBytes: 100 });

let nowMs = T0;

function open(io: SimIo): Promise<LogManager> {
  return LogManager.open(io, DATA, {
    defaultConfig: config({ segmentBytes: 600, segmentIndexBytes: 4096 }), topicConfigs: new Map([['table', COMPACT]]),
    minFreeBytes: 0, checkpointIntervalMs: 0, cleaner: { enabled: false }, now: () => nowMs,
  });
}

/** `rounds` rounds of the same five keys, sealed and committed: every pass after it has something to drop. */
async function fill(log: Log, rounds: number, tag: string): Promise<void> {
  for (let round = 0; round < rounds; round++) for (let k = 0; k < 5; k++) await log.appendAsLeader(keyed([[`k${k}`, `${tag}${round}`]], T0));
  await log.forceRoll();
  log.updateHighWatermark(log.logEndOffset);
}

/** A cleaned pass on `log` at `at`; returns the bytes it saved (> 0). */
async function cleanAt(manager: LogManager, log: Log, at: number): Promise<number> {
  nowMs = at;
  const stats = await manager.cleaner.clean(log);
  expect(stats.outcome).toBe('cleaned');
  expect(stats.bytesSaved).toBeGreaterThan(0);
  return stats.bytesSaved;
}

describe('cleaner-stats', () => {
  it('lastCleanMs and cumulative bytesSaved survive close/reopen and a crash, and keep adding up', async () => {
    const io = await newIo();
    const manager = await open(io);
    const table = await manager.getOrCreateLog('table', 0);
    const other = await manager.getOrCreateLog('table', 1);
    await fill(table, 8, 'a');
    await fill(other, 4, 'a');
    expect(await io.exists(STATS)).toBe(false);
    let saved = await cleanAt(manager, table, T0 + 1000);
    await fill(table, 8, 'b');
    saved += await cleanAt(manager, table, T0 + 2000);
    const otherSaved = await cleanAt(manager, other, T0 + 3000);
    expect(manager.cleaner.stateOf(table)).toMatchObject({ lastCleanMs: T0 + 2000, bytesSaved: saved, passes: 2 });
    await manager.close();
    expect((await io.readFile(STATS)).toString()).toBe(`0\n2\ntable 0 ${T0 + 2000} ${saved}\ntable 1 ${T0 + 3000} ${otherSaved}\n`);

    const reopened = await open(io);
    const table2 = reopened.getLog('table', 0) as Log;
    // Before issue 20 these were null and 0 after every restart.
    expect(reopened.cleaner.stateOf(table2)).toMatchObject({ lastCleanMs: T0 + 2000, bytesSaved: saved, passes: 0, failures: 0 });
    expect(reopened.cleaner.stateOf(reopened.getLog('table', 1) as Log)).toMatchObject({ lastCleanMs: T0 + 3000, bytesSaved: otherSaved });
    expect(reopened.cleaner.statsError).toBeNull();
    // Both cleaner files are the data directory's own, not skipped entries (the broker logs those at start).
    expect(reopened.skipped).toEqual([]);
    expect(reopened.notes.filter((n) => n.includes(CLEANER_STATS_FILE))).toEqual([]);
    await fill(table2, 8, 'c');
    saved += await cleanAt(reopened, table2, T0 + 4000);

    // A process crash right after the pass: the file was durable when the pass returned.
    const survivor = io.recover('process');
    const after = await open(survivor);
    expect(after.cleaner.stateOf(after.getLog('table', 0) as Log)).toMatchObject({ lastCleanMs: T0 + 4000, bytesSaved: saved, passes: 0 });
    await after.close();
    expect(survivor.openHandles()).toEqual([]);
  });

  it('a damaged cleaner-stats opens with the figures at zero/null, statsError and a note; the next pass rewrites it', async () => {
    const io = await newIo();
    const manager = await open(io);
    const table = await manager.getOrCreateLog('table', 0);
    await fill(table, 8, 'a');
    await cleanAt(manager, table, T0 + 1000);
    const kept = dataRecords(await readBatches(table));
    await manager.close();
    const file = await io.open(STATS, { create: true });
    await file.truncate(0);
    await file.pwrite(Buffer.from('0\n1\ntable 0 garbage\n'), 0);
    await file.close();

    const reopened = await open(io);
    const table2 = reopened.getLog('table', 0) as Log;
    expect(dataRecords(await readBatches(table2))).toEqual(kept);
    expect(reopened.cleaner.stateOf(table2)).toMatchObject({ lastCleanMs: null, bytesSaved: 0, firstDirtyOffset: 40 });
    expect((reopened.cleaner.statsError as SeglogError).code).toBe('SEGLOG_ERR_CHECKPOINT_CORRUPT');
    expect(reopened.notes.filter((n) => n.includes(STATS) && n.includes('start over'))).toHaveLength(1);
    await fill(table2, 8, 'b');
    const saved = await cleanAt(reopened, table2, T0 + 2000);
    expect(reopened.cleaner.statsError).toBeNull();
    await reopened.close();
    expect((await io.readFile(STATS)).toString()).toBe(`0\n1\ntable 0 ${T0 + 2000} ${saved}\n`);
    expect(io.openHandles()).toEqual([]);
  });

  it('the format reads what it writes and refuses bad fields', () => {
    const entries = [{ topic: 'a', partition: 0, lastCleanMs: -1, bytesSaved: 0 }, { topic: 'b.c', partition: 7, lastCleanMs: T0, bytesSaved: 2 ** 40 }];
    const text = CheckpointFile.encode(cleanerStatsFormat, entries);
    expect(text).toBe(`0\n2\na 0 -1 0\nb.c 7 ${T0} ${2 ** 40}\n`);
    expect(CheckpointFile.decode(cleanerStatsFormat, text, 'x')).toEqual(entries);
    for (const line of ['a 0 5', 'a 0 5 6 7', 'a -1 5 6', 'a 0 -2 6', 'a 0 5 -1', 'a 0 5 x', 'a/b 0 5 6', `a 0 ${2 ** 53} 0`]) {
      expect(() => CheckpointFile.decode(cleanerStatsFormat, `0\n1\n${line}\n`, 'x'), line).toThrow(/corrupt checkpoint x line 3/);
    }
    expect(() => CheckpointFile.decode(cleanerStatsFormat, '1\n0\n', 'x')).toThrow(/unrecognised version 1/);
  });
});
