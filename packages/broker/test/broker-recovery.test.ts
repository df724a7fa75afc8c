// The broker starting on a damaged data directory (issue 23 item 0), on the
// real disk (NodeIo in a temp dir): the data directory is written by the
// engine, closed, damaged the way the issue describes, and then the broker is
// started on it in-process.
// - 0a: after a clean stop, a sealed .log cut short below its last index
//   entry: the broker used to truncate it below the recovery point and
//   delete the intact next segment, without a word. Now it refuses to start
//   (SEGLOG_ERR_LOG_CORRUPTION naming the file and position) and nothing on
//   disk changes.
// - 0b: a garbage recovery-point checkpoint after an unclean stop, one bad
//   batch in a sealed segment: it used to read as recovery point 0 and cut
//   everything after the bad batch. Now the recovery point is unknown: the
//   broker refuses, saying so.

import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NodeIo } from '@seglog/io';
import { LogConfig, LogManager } from '@seglog/log';
import { buildBatch } from '@seglog/records';
import { Broker } from '../src/index.js';

const T0 = 1_700_000_000_000;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A data directory with `orders-0`: 16 KiB segments, an index entry every 512 bytes, 2 records per batch. */
async function writeDataDir(batches: number): Promise<{ dataDir: string; partitionDir: string }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'seglog-broker-recovery-'));
  dirs.push(dataDir);
  const manager = await LogManager.open(new NodeIo(), dataDir, {
    defaultConfig: new LogConfig().with({ segmentBytes: 16_384, indexIntervalBytes: 512 }), minFreeBytes: 0, checkpointIntervalMs: 0,
  });
  const log = await manager.getOrCreateLog('orders', 0);
  for (let i = 0; i < batches; i++) {
    await log.appendAsLeader(buildBatch({ records: [{ key: `k${i}`, value: `value-${i}-`.repeat(20), timestamp: T0 + i }, { value: `v${i}`, timestamp: T0 + i }] }), { leaderEpoch: 0 });
  }
  await log.flush();
  await manager.close();
  return { dataDir, partitionDir: path.join(dataDir, 'orders-0') };
}

function logFiles(partitionDir: string): string[] {
  return readdirSync(partitionDir).filter((n) => n.endsWith('.log')).sort().map((n) => path.join(partitionDir, n));
}

function sizes(partitionDir: string): number[] {
  return logFiles(partitionDir).map((f) => statSync(f).size);
}

/** Position of the n-th batch (0-based) of a .log file. */
function batchPosition(file: string, n: number): number {
  const bytes = readFileSync(file);
  let position = 0;
  for (let i = 0; i < n; i++) position += bytes.readInt32BE(position + 8) + 12;
  return position;
}

async function startRefused(dataDir: string, lines: string[]): Promise<{ code?: string; message: string; context?: Record<string, unknown> }> {
  try {
    const broker = await Broker.start({ dataDir, port: 0, log: (l) => lines.push(l) });
    await broker.stop();
  } catch (error) {
    return error as { code?: string; message: string; context?: Record<string, unknown> };
  }
  throw new Error(`the broker started on the damaged directory; it said: ${lines.join(' | ')}`);
}

describe('broker start on a damaged data directory (issue 23 item 0)', () => {
  it('0a: a sealed .log cut short after a clean stop is refused with file and position; the next segment stays', async () => {
    const { dataDir, partitionDir } = await writeDataDir(150);
    const [sealed] = logFiles(partitionDir) as [string];
    expect(logFiles(partitionDir).length).toBeGreaterThanOrEqual(3);
    const sealedSize = statSync(sealed).size;
    truncateSync(sealed, sealedSize - 4000); // well below the last .index entry: the index fails its check
    const before = sizes(partitionDir);
    const lines: string[] = [];
    const error = await startRefused(dataDir, lines);
    expect(error.code).toBe('SEGLOG_ERR_LOG_CORRUPTION');
    expect(error.message).toContain(sealed);
    expect(error.context).toMatchObject({ path: sealed });
    expect(typeof error.context?.['position']).toBe('number');
    expect(sizes(partitionDir)).toEqual(before); // nothing cut, no segment deleted
  });

  it('0a: a 100-byte cut is refused too (it always was)', async () => {
    const { dataDir, partitionDir } = await writeDataDir(150);
    const [sealed] = logFiles(partitionDir) as [string];
    truncateSync(sealed, statSync(sealed).size - 100);
    const before = sizes(partitionDir);
    const error = await startRefused(dataDir, []);
    expect(error.code).toBe('SEGLOG_ERR_LOG_CORRUPTION');
    expect(sizes(partitionDir)).toEqual(before);
  });

  it('0b: a garbage recovery-point checkpoint never licenses a cut: refused after an unclean stop with one bad batch', async () => {
    const { dataDir, partitionDir } = await writeDataDir(150);
    unlinkSync(path.join(dataDir, '.kafka_cleanshutdown')); // an unclean stop
    writeFileSync(path.join(dataDir, 'recovery-point-offset-checkpoint'), 'this is not a checkpoint\n\u0000\u0001garbage');
    const [sealed] = logFiles(partitionDir) as [string];
    const bytes = readFileSync(sealed);
    const position = batchPosition(sealed, 5);
    bytes[position + 70] = (bytes[position + 70] as number) ^ 0x5a; // a payload byte: the CRC fails
    writeFileSync(sealed, bytes);
    const before = sizes(partitionDir);
    const lines: string[] = [];
    const error = await startRefused(dataDir, lines);
    expect(error.code).toBe('SEGLOG_ERR_LOG_CORRUPTION');
    expect(error.message).toContain('recovery point is unknown');
    expect(error.context).toMatchObject({ path: sealed, position });
    expect(sizes(partitionDir)).toEqual(before);
  });

  it('0b: a garbage recovery-point checkpoint on intact data: the broker starts, says so, and serves everything', async () => {
    const { dataDir, partitionDir } = await writeDataDir(60);
    unlinkSync(path.join(dataDir, '.kafka_cleanshutdown'));
    writeFileSync(path.join(dataDir, 'recovery-point-offset-checkpoint'), 'garbage');
    const before = sizes(partitionDir);
    const lines: string[] = [];
    const broker = await Broker.start({ dataDir, port: 0, log: (l) => lines.push(l) });
    try {
      expect(lines.some((l) => l.includes('recovery-point-offset-checkpoint') && l.includes('unknown'))).toBe(true);
      expect(broker.store.get('orders', 0)?.logEndOffset).toBe(120);
    } finally {
      await broker.stop();
    }
    expect(sizes(partitionDir)).toEqual(before);
  });
});
