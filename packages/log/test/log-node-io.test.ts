// Log on the real file system: group commit under real fdatasync latency,
// and a reopen of what NodeIo wrote.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NodeIo } from '@seglog/io';
import { splitBatches } from '@seglog/records';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Log } from '../src/log/log.js';
import { config, producerBatch, readAll } from './log-helpers.js';

describe('Log on NodeIo', () => {
  let root: string;
  const io = new NodeIo();
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'seglog-log-'));
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('concurrent appends each waiting for durability share fdatasyncs (group commit)', async () => {
    const dir = path.join(root, 't-0');
    const open = () => Log.open(io, dir, config({ segmentBytes: 64 * 1024 }), { topic: 't', partition: 0, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: true });
    const log = await open();
    const appends = 400;
    const waits: Promise<void>[] = [];
    for (let i = 0; i < appends; i++) {
      waits.push(log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 }).then((r) => log.durable(r.lastOffset)));
    }
    await Promise.all(waits);
    expect(log.durableOffset).toBe(appends);
    // One fdatasync per acknowledged append would be 400.
    expect(log.metrics.flushes).toBeLessThan(appends / 4);
    const before = await readAll(log);
    await log.close();
    const bytes = readFileSync(path.join(dir, '00000000000000000000.log'));
    expect(splitBatches(bytes).every((b) => b.isValid())).toBe(true);
    const again = await open();
    expect(await readAll(again)).toEqual(before);
    await again.close();
  });
});
