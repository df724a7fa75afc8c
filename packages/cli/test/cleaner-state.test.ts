// The CLI on a cleaned data directory: `stats` prints the cleaner line (first
// dirty offset from cleaner-offset-checkpoint, dirty ratio, the last clean
// and bytes saved from cleaner-stats, also after the LogManager was reopened
// and closed again without a pass, delete-horizon and empty batches) and its
// JSON fields; `dump` prints deleteHorizonMs on the batches that carry one;
// `verify` stays OK with one note per cleaned partition. Last (it damages
// the shared directory): an unreadable cleaner-stats prints '-' and is a
// verify note, not damage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeIo } from '@seglog/io';
import { LogConfig, LogManager } from '@seglog/log';
import type { Log } from '@seglog/log';
import { buildBatch } from '@seglog/records';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { removeDir, runSeglog, tempDir, T0 } from './helpers.js';

let dir: string;
let bytesSaved: number;
const NOW = T0 + 1000;

beforeAll(async () => {
  dir = tempDir('cleaner');
  const config = new LogConfig({ cleanupPolicy: 'compact', segmentBytes: 600, segmentIndexBytes: 4096, retentionMs: -1, deleteRetentionMs: 5000 });
  const manager = await LogManager.open(new NodeIo(), dir, { defaultConfig: config, minFreeBytes: 0, checkpointIntervalMs: 0, cleaner: { enabled: false }, now: () => NOW });
  const log = await manager.getOrCreateLog('table', 0);
  for (let round = 0; round < 6; round++) {
    for (let k = 0; k < 4; k++) await log.appendAsLeader(buildBatch({ records: [{ key: `k${k}`, value: round === 5 && k === 0 ? null : `v${round}`, timestamp: T0 }] }));
  }
  await log.appendAsLeader(buildBatch({ records: [{ key: 'p', value: 'x', timestamp: T0 }], producerId: 3, producerEpoch: 0, baseSequence: 0 }));
  await log.appendAsLeader(buildBatch({ records: [{ key: 'p', value: 'y', timestamp: T0 }] }));
  await log.forceRoll();
  log.updateHighWatermark(log.logEndOffset);
  const stats = await manager.cleaner.clean(log);
  expect(stats.outcome).toBe('cleaned');
  bytesSaved = stats.bytesSaved;
  expect(bytesSaved).toBeGreaterThan(0);
  await manager.close();
  // A restart with no pass: the figures stay in cleaner-stats.
  const reopened = await LogManager.open(new NodeIo(), dir, { defaultConfig: config, minFreeBytes: 0, checkpointIntervalMs: 0, cleaner: { enabled: false }, now: () => NOW + 1 });
  expect(reopened.cleaner.stateOf(reopened.getLog('table', 0) as Log)).toMatchObject({ lastCleanMs: NOW, bytesSaved, passes: 0 });
  await reopened.close();
});

afterAll(() => removeDir(dir));

describe('seglog and the log cleaner', () => {
  it('stats shows the cleaner state', async () => {
    const text = await runSeglog(['stats', dir]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/ {2}cleaner: first dirty offset 26, dirty ratio 0\.000 \(clean \d+ B, dirty 0 B\), last checkpoint \d{4}-\S*, last clean (\S+), bytes saved (\d+), delete-horizon batches 1, empty batches [1-9]\d*/);
    expect(text.stdout).toContain(`last clean ${new Date(NOW).toISOString()}, bytes saved ${bytesSaved},`);
    const json = await runSeglog(['stats', dir, '--json']);
    const partition = JSON.parse(json.stdout.split('\n')[0] as string) as { cleaner: { firstDirtyOffset: number; dirtyRatio: number; lastCleanMs: number | null; bytesSaved: number | null }; deleteHorizonBatches: number; emptyBatches: number };
    expect(partition.cleaner.firstDirtyOffset).toBe(26);
    expect(partition.cleaner.lastCleanMs).toBe(NOW);
    expect(partition.cleaner.bytesSaved).toBe(bytesSaved);
    expect(partition.deleteHorizonBatches).toBe(1);
    expect(partition.emptyBatches).toBeGreaterThanOrEqual(1);
  });

  it('dump prints the delete horizon of the tombstone batch', async () => {
    const partition = path.join(dir, 'table-0');
    let horizons = 0;
    for (const name of readdirSync(partition).filter((n) => n.endsWith('.log'))) {
      const out = await runSeglog(['dump', path.join(partition, name)]);
      expect(out.code).toBe(0);
      horizons += out.stdout.split(`deleteHorizonMs: ${NOW + 5000}`).length - 1;
    }
    expect(horizons).toBe(1);
  });

  it('verify is OK and notes the cleaner state', async () => {
    const out = await runSeglog(['verify', dir]);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/note: .*cleaner-offset-checkpoint offset 26: table-0: cleaner: first dirty offset 26/);
  });

  it('an unreadable cleaner-stats: stats prints - for its figures, verify notes it and stays OK', async () => {
    writeFileSync(path.join(dir, 'cleaner-stats'), '0\n1\ntable 0 garbage\n');
    const text = await runSeglog(['stats', dir]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/cleaner: first dirty offset 26, .*, last clean -, bytes saved -, delete-horizon batches 1/);
    const out = await runSeglog(['verify', dir]);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/note: .*cleaner-stats.*corrupt checkpoint.*start over/);
  });
});
