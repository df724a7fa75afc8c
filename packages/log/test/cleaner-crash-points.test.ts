// Crash points and faults of the log cleaner on SimIo (issue 20, Done when 2
// and 3).
//
// Crash points: a compacted log with duplicate keys, tombstones and an
// idempotent producer over several segments is made durable, then cleaned
// (two passes: the second after the tombstones' horizon). The workload runs
// once to count its crash points; for every point of the cleaning phase it
// halts there and the disk is recovered as after kill -9, a clean, an ordered
// and a chaotic power loss. Each recovered log must open (leftover
// .cleaned/.swap settled), keep its log end offset, hold only records
// appended at their offsets, keep every record the full run kept, give every
// key its latest value, and converge, after one more pass, to exactly the
// records of the uninterrupted run (two more passes, the second past every
// delete horizon).
// Faults: EIO on a .cleaned write or fdatasync, and ENOSPC, fail the pass
// with the originals in place and the log open, and the next pass succeeds;
// an EIO on the directory fsync after the commit point takes the log offline
// and the reopened log reads correctly.
// Replay one case: SEGLOG_CLEANER_CRASH_ONLY=<k>:<mode>; every mode at every point: SEGLOG_CLEANER_CRASH_ALL=1.
import { SimIo } from '@seglog/io';
import type { CrashMode } from '@seglog/io';
import { buildBatch } from '@seglog/records';
import { describe, expect, it } from 'vitest';
import type { Log } from '../src/log/log.js';
import type { ReadRecord } from './cleaner-helpers.js';
import { cleanerFor, dataRecords, keyed, latestByKey, readBatches } from './cleaner-helpers.js';
import { DIR, clock, config, openLog, T0 } from './log-helpers.js';

const MODES: readonly CrashMode[] = ['process', 'power-clean', 'power-ordered', 'power-chaotic'];
const CFG = config({ cleanupPolicy: 'compact', segmentBytes: 500, minCleanableDirtyRatio: 0.01, deleteRetentionMs: 100 });
const NOW = T0 + 1_000_000;

interface Outcome {
  end: number;
  appended: Map<number, ReadRecord>;
  setupPoints: number;
}

async function setup(io: SimIo): Promise<{ log: Log; outcome: Outcome }> {
  await io.mkdir('/data');
  await io.fsyncDir('/');
  const c = clock(NOW);
  const log = await openLog(io, CFG, { now: c.fn });
  for (let round = 0; round < 6; round++) {
    for (let k = 0; k < 4; k++) {
      const value = round === 5 && k === 0 ? null : `r${round}k${k}`;
      await log.appendAsLeader(keyed([[`key${k}`, value]], T0));
    }
    await log.appendAsLeader(buildBatch({ records: [{ key: 'pid', value: `s${round}`, timestamp: T0 }], producerId: 5, producerEpoch: 0, baseSequence: round }));
  }
  await log.forceRoll();
  await log.flush();
  log.updateHighWatermark(log.logEndOffset);
  const appended = new Map(dataRecords(await readBatches(log)).map((r) => [r.offset, r]));
  return { log, outcome: { end: log.logEndOffset, appended, setupPoints: io.crashPoints } };
}

async function cleanPhase(io: SimIo, log: Log): Promise<void> {
  let now = NOW;
  const cleaner = cleanerFor(io, () => [log], () => now);
  await cleaner.clean(log);
  now += 100;
  await cleaner.clean(log);
  await log.close();
}

/** Two more passes, the second past every horizon an earlier pass can have set: the log then converges. */
async function finalPass(io: SimIo, log: Log): Promise<void> {
  let now = NOW + 100;
  const cleaner = cleanerFor(io, () => [log], () => now);
  await cleaner.clean(log);
  now += 1000;
  await cleaner.clean(log);
}

function open(io: SimIo, end: number): Promise<Log> {
  return openLog(io, CFG, { now: () => NOW + 100, recoveryPoint: end, hadCleanShutdown: false });
}

/** The checks on one recovered disk; a failure description or null. */
async function check(crashed: SimIo, full: Outcome, kept: readonly ReadRecord[]): Promise<string | null> {
  const log = await open(crashed, full.end);
  try {
    const leftovers = (await crashed.readdir(DIR)).filter((n) => n.endsWith('.cleaned') || n.endsWith('.swap'));
    if (leftovers.length > 0) return `leftovers after open: ${leftovers.join(' ')}`;
    if (log.logEndOffset !== full.end) return `log end ${log.logEndOffset}, want ${full.end}`;
    const records = dataRecords(await readBatches(log));
    for (const record of records) {
      const appended = full.appended.get(record.offset);
      if (appended === undefined || appended.key !== record.key || appended.value !== record.value) return `offset ${record.offset} holds ${record.key}=${record.value}, not what was appended`;
    }
    const present = new Set(records.map((r) => r.offset));
    const lost = kept.filter((r) => !present.has(r.offset));
    if (lost.length > 0) return `lost kept records at ${lost.map((r) => r.offset).join(',')}`;
    const want = latestByKey([...full.appended.values()]);
    const got = latestByKey(records);
    for (const [key, value] of want) {
      if (got.has(key) ? got.get(key) !== value : value !== null) return `key ${key}: ${String(got.get(key))}, want ${String(value)}`;
    }
    log.updateHighWatermark(log.logEndOffset);
    await finalPass(crashed, log);
    const converged = dataRecords(await readBatches(log));
    if (JSON.stringify(converged) !== JSON.stringify(kept)) return `after one more pass: ${converged.map((r) => r.offset).join(',')} != ${kept.map((r) => r.offset).join(',')}`;
    return null;
  } finally {
    await log.close();
  }
}

describe('log cleaner crash points', () => {
  it('every crash point of two passes, in every crash mode, recovers the pre- or post-clean records of every key', async () => {
    const fullIo = new SimIo({ seed: 3 });
    const { log: fullLog, outcome: full } = await setup(fullIo);
    await cleanPhase(fullIo, fullLog);
    const points = fullIo.crashPoints;
    const afterIo = fullIo.recover('power-clean');
    const afterLog = await open(afterIo, full.end);
    afterLog.updateHighWatermark(afterLog.logEndOffset);
    await finalPass(afterIo, afterLog);
    const kept = dataRecords(await readBatches(afterLog));
    await afterLog.close();
    expect(kept.length).toBeLessThan(full.appended.size / 3);
    expect(points - full.setupPoints).toBeGreaterThan(40);
    const only = process.env['SEGLOG_CLEANER_CRASH_ONLY'];
    const all = process.env['SEGLOG_CLEANER_CRASH_ALL'];
    const failures: string[] = [];
    let checked = 0;
    for (let k = full.setupPoints + 1; k <= points; k++) {
      if (only !== undefined && Number(only.split(':')[0]) !== k) continue;
      const io = new SimIo({ seed: 3, crashAt: k });
      const { log } = await setup(io);
      await cleanPhase(io, log).catch((error: unknown) => {
        const code = (error as { code?: string }).code;
        if (code !== 'SEGLOG_ERR_IO_CRASHED' && code !== 'SEGLOG_ERR_LOG_OFFLINE') throw error;
      });
      expect(io.halted).toBe(true);
      for (const mode of MODES) {
        if (only?.split(':')[1] !== undefined && only.split(':')[1] !== mode) continue;
        // CI: kill -9 and clean power loss at every point, ordered and chaotic power loss at alternate ones (SEGLOG_CLEANER_CRASH_ALL=1: all).
        if (all === undefined && only === undefined && ((mode === 'power-ordered' && k % 2 === 0) || (mode === 'power-chaotic' && k % 2 === 1))) continue;
        let failure: string | null;
        try {
          failure = await check(io.recover(mode, { seed: k }), full, kept);
        } catch (error) {
          failure = `threw ${(error as { code?: string }).code ?? ''} ${(error as Error).message}`;
        }
        checked++;
        if (failure !== null) failures.push(`SEGLOG_CLEANER_CRASH_ONLY=${k}:${mode} — ${failure}`);
      }
    }
    if (failures.length > 0) console.log(failures.slice(0, 20).join('\n'));
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(3 * 40);
  });
});

async function usedBytes(io: SimIo): Promise<number> {
  let total = 0;
  for (const name of await io.readdir(DIR)) total += (await io.stat(`${DIR}/${name}`)).size;
  return total;
}

describe('log cleaner faults', () => {
  const preCommit: Array<[string, (io: SimIo) => Promise<void>]> = [
    ['EIO on a .cleaned write', async (io) => io.setFaults({ writeEio: { nth: 1, path: /\.cleaned$/ } })],
    ['EIO on the .cleaned fdatasync', async (io) => io.setFaults({ syncEio: { nth: 1, path: /\.cleaned$/ } })],
    ['ENOSPC while writing .cleaned', async (io) => io.setFaults({ quotaBytes: await usedBytes(io) })],
  ];
  for (const [name, inject] of preCommit) {
    it(`${name}: the pass fails, the originals stay, the log stays open, the next pass succeeds`, async () => {
      const io = new SimIo({ seed: 4 });
      const { log, outcome } = await setup(io);
      const before = dataRecords(await readBatches(log));
      const segments = log.segmentBaseOffsets();
      await inject(io);
      const cleaner = cleanerFor(io, () => [log], () => NOW);
      await expect(cleaner.clean(log)).rejects.toThrow();
      expect(Object.values(io.injected).some((count) => count > 0)).toBe(true);
      expect(log.state).toBe('open');
      expect(log.segmentBaseOffsets()).toEqual(segments);
      expect(dataRecords(await readBatches(log))).toEqual(before);
      expect((await io.readdir(DIR)).filter((n) => n.endsWith('.cleaned') || n.endsWith('.swap'))).toEqual([]);
      expect(cleaner.stateOf(log).failures).toBe(1);
      io.setFaults({});
      const stats = await cleaner.clean(log);
      expect(stats.outcome).toBe('cleaned');
      const after = dataRecords(await readBatches(log));
      expect(after.length).toBeLessThan(before.length);
      expect(latestByKey(after)).toEqual(latestByKey([...outcome.appended.values()]));
      // Appends keep working.
      await log.appendAsLeader(keyed([['key1', 'later']], T0));
      await log.close();
    });
  }

  const postCommit: Array<[string, (io: SimIo) => Promise<void>]> = [
    ['EIO on the directory fsync after the commit point', async (io) => io.setFaults({ syncEio: { nth: 1, path: (path) => path === DIR } })],
    // The rebuilt indexes of the swapped-in segment are sized to segment.index.bytes first (SimIo counts the sparse length).
    ['ENOSPC rebuilding the swapped-in segment\'s indexes', async (io) => io.setFaults({ quotaBytes: (await usedBytes(io)) + 300 })],
  ];
  for (const [name, inject] of postCommit) it(`${name} takes the log offline (fail-stop); the reopened log is right`, async () => {
    const io = new SimIo({ seed: 5 });
    const { log, outcome } = await setup(io);
    await inject(io);
    const cleaner = cleanerFor(io, () => [log], () => NOW);
    await expect(cleaner.clean(log)).rejects.toMatchObject({ code: 'SEGLOG_ERR_LOG_OFFLINE' });
    expect(log.state).toBe('offline');
    await expect(log.appendAsLeader(keyed([['x', 'y']], T0))).rejects.toMatchObject({ code: 'SEGLOG_ERR_LOG_OFFLINE' });
    await log.close();
    const crashed = io.recover('process');
    const reopened = await open(crashed, outcome.end);
    expect(reopened.logEndOffset).toBe(outcome.end);
    const records = dataRecords(await readBatches(reopened));
    expect(latestByKey(records)).toEqual(latestByKey([...outcome.appended.values()]));
    expect(io.injected.syncEio + io.injected.nospc).toBeGreaterThan(0);
    await reopened.close();
  });
});
