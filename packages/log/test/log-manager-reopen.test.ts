// LogManager.reopenLog on SimIo: a partition reopened with a new LogConfig
// keeps every record, takes appends under the new settings (a smaller
// segment.bytes rolls), the old Log object is closed; an unknown partition is
// SEGLOG_ERR_LOG_UNKNOWN_PARTITION; and a crash at every crash point of a
// reopen, recovered in every crash mode, loses no record that was durable
// before it (the reopen only closes and reopens; it never rewrites data).

import { CrashMode } from '@seglog/io';
import type { SimIo } from '@seglog/io';
import { describe, expect, it } from 'vitest';
import { LogManager } from '../src/log-manager.js';
import { rejected } from './helpers.js';
import { config, newIo, producerBatch, readAll } from './log-helpers.js';

const DATA = '/data/d';
const SIZE = producerBatch(1).length;
const BASE = config({ segmentIndexBytes: 4096 });

function open(io: SimIo): Promise<LogManager> {
  return LogManager.open(io, DATA, { defaultConfig: BASE, minFreeBytes: 0, checkpointIntervalMs: 0 });
}

async function seeded(io: SimIo, count: number): Promise<{ manager: LogManager; records: Array<[number, string]> }> {
  await io.mkdir(DATA);
  await io.fsyncDir('/data');
  const manager = await open(io);
  const log = await manager.getOrCreateLog('t', 0);
  for (let i = 0; i < count; i++) await log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 });
  await log.durable(log.logEndOffset - 1);
  return { manager, records: await readAll(log) };
}

describe('LogManager.reopenLog', () => {
  it('reopens with the new config: records kept, new settings apply, the old log is closed', async () => {
    const io = await newIo();
    const { manager, records } = await seeded(io, 3);
    const old = manager.getLog('t', 0);
    const small = BASE.with({ segmentBytes: SIZE * 2 });
    const log = await manager.reopenLog('t', 0, small);
    expect(log).not.toBe(old);
    expect(manager.getLog('t', 0)).toBe(log);
    expect(log.config.segmentBytes).toBe(SIZE * 2);
    expect(await readAll(log)).toEqual(records);
    expect((await rejected(old?.appendAsLeader(producerBatch(1), { leaderEpoch: 0 }) ?? Promise.resolve())).code).toBe('SEGLOG_ERR_LOG_CLOSED');
    for (let i = 0; i < 4; i++) await log.appendAsLeader(producerBatch(1, { tag: 10 + i }), { leaderEpoch: 0 });
    expect(log.logEndOffset).toBe(7);
    // Two batches per segment under the new config: the appends after the reopen rolled.
    expect((await io.readdir(`${DATA}/t-0`)).filter((n) => n.endsWith('.log')).length).toBeGreaterThanOrEqual(3);
    expect((await rejected(manager.reopenLog('t', 1, small))).code).toBe('SEGLOG_ERR_LOG_UNKNOWN_PARTITION');
    await manager.close();
    const again = await open(io);
    expect((await readAll(again.getLog('t', 0) as NonNullable<ReturnType<LogManager['getLog']>>)).length).toBe(7);
    await again.close();
    expect(io.openHandles()).toEqual([]);
  });

  it('a crash at any point of a reopen loses no record that was durable before it, in every crash mode', async () => {
    const reconfigured = BASE.with({ segmentBytes: SIZE * 3 });
    const dry = await newIo({ seed: 3 });
    const { manager: dryManager } = await seeded(dry, 5);
    const before = dry.crashPoints;
    await dryManager.reopenLog('t', 0, reconfigured);
    const points = dry.crashPoints - before;
    await dryManager.close();
    expect(points).toBeGreaterThan(0);
    process.stdout.write(`reopenLog crash points: ${points}\n`);
    for (let at = 1; at <= points; at++) {
      let armed = false;
      let seen = 0;
      const io = await newIo({ seed: 3, onCrashPoint: () => armed && ++seen === at });
      const { manager, records } = await seeded(io, 5);
      armed = true;
      await manager.reopenLog('t', 0, reconfigured).catch(() => undefined);
      expect(io.halted).toBe(true);
      for (const mode of Object.values(CrashMode)) {
        const reopened = await open(io.recover(mode, { seed: 3 }));
        const log = reopened.getLog('t', 0);
        expect(log).toBeDefined();
        expect((await readAll(log as NonNullable<typeof log>)).slice(0, records.length)).toEqual(records);
        await reopened.close();
      }
    }
  });
});
