// The broker starting on a damaged data directory (issue 23 item 0), on the
// real disk (NodeIo in a temp dir): the data directory is written by the
// engine, closed, damaged the way the issue describes, and then the broker is
// started on it in-process.
// - 0a: after a clean stop, a sealed .log cut short below its last index
//   entry: the broker used to truncate it below the recovery point and
//   delete the intact next segment, without a word. Issue 23 made start-up
//   refuse; since issue 24 a clean start reads no sealed segment (Kafka's
//   lazy load), so the first fetch of the cut gets CORRUPT_MESSAGE and a log
//   line naming the file and position, the next segment is served, and
//   nothing on disk changes.
// - 0b: a garbage recovery-point checkpoint after an unclean stop, one bad
//   batch in a sealed segment: it used to read as recovery point 0 and cut
//   everything after the bad batch. Now the recovery point is unknown: the
//   broker refuses, saying so.
// - 0c: a damaged batch header inside a sealed segment after a clean stop
//   (no recovery reads it): fetches there used to get KAFKA_STORAGE_ERROR
//   forever, or the damaged bytes with broken framing, and nothing was
//   logged. Now a fetch before it gets the batches up to it, a fetch of its
//   offsets gets CORRUPT_MESSAGE (2) and one log line with file and
//   position, and a fetch from the offset after it reads on.

import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NodeIo } from '@seglog/io';
import { LogConfig, LogManager } from '@seglog/log';
import { buildBatch, RecordBatch, RecordCursor } from '@seglog/records';
import { Broker, KAFKA_ERROR_CODES } from '../src/index.js';
import type { FetchRequest } from '@seglog/protocol';
import { RawClient } from './raw-client.js';

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
    const timestamp = T0 + 10 * i; // increasing: a clean open checks only each segment's tail
    await log.appendAsLeader(buildBatch({ records: [{ key: `k${i}`, value: `value-${i}-`.repeat(20), timestamp }, { value: `v${i}`, timestamp }] }), { leaderEpoch: 0 });
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
  // Since issue 24 a clean start does not read sealed segments (Kafka's lazy
  // load), so the cut is found by the first read of it, not at start-up. What
  // 0a protects still holds: nothing on disk is cut or deleted, the damage is
  // named with file and position, and the intact next segment is served.
  for (const [name, cut] of [['well below the last .index entry', 4000], ['a 100-byte cut', 100]] as const) {
    it(`0a: a sealed .log cut short after a clean stop (${name}): found on first read with file and position; nothing on disk changes; the next segment is served`, async () => {
      const { dataDir, partitionDir } = await writeDataDir(150);
      const files = logFiles(partitionDir);
      const [sealed, next] = files as [string, string];
      expect(files.length).toBeGreaterThanOrEqual(3);
      truncateSync(sealed, statSync(sealed).size - cut);
      const before = sizes(partitionDir);
      const nextBase = Number(path.basename(next, '.log'));
      const lines: string[] = [];
      const broker = await Broker.start({ dataDir, port: 0, log: (l) => lines.push(l) });
      const c = await RawClient.connect(broker.port);
      try {
        // Read the first segment from the start until the fetch fails at the cut.
        let offset = 0;
        let errorCode = 0;
        for (let i = 0; i < 1000 && offset < nextBase; i++) {
          const part = (await c.request('FETCH', 12, fetchRequest(offset, 5000))).body.responses[0]?.partitions[0];
          errorCode = part?.errorCode ?? -1;
          if (errorCode !== 0) break;
          const got = offsetsOf(part?.records);
          expect(got.length, `a fetch at ${offset} returned no records and no error (a consumer would stall)`).toBeGreaterThan(0);
          offset = (got.at(-1) as number) + 1;
        }
        expect(offset).toBeLessThan(nextBase);
        expect(errorCode, lines.join("\n")).toBe(KAFKA_ERROR_CODES.CORRUPT_MESSAGE);
        const said = lines.filter((l) => l.includes('SEGLOG_ERR_LOG_CORRUPT'));
        expect(said.length).toBeGreaterThanOrEqual(1);
        expect(said[0]).toContain(sealed);
        expect(said[0]).toMatch(/position \d+/);
        const fromNext = offsetsOf((await c.request('FETCH', 12, fetchRequest(nextBase, 5000))).body.responses[0]?.partitions[0]?.records);
        expect(fromNext[0]).toBe(nextBase);
      } finally {
        c.close();
        await broker.stop();
      }
      expect(sizes(partitionDir)).toEqual(before); // nothing cut, no segment deleted
    });
  }

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

function fetchRequest(fetchOffset: number, maxBytes = 1 << 20): FetchRequest {
  return {
    clusterId: null, replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic: 'orders', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: maxBytes }] }],
    forgottenTopicsData: [], rackId: '',
  };
}

/** Record offsets of a fetch response's record bytes; every batch whole and with a valid CRC. */
function offsetsOf(records: unknown): number[] {
  if (!Buffer.isBuffer(records)) return [];
  const out: number[] = [];
  let at = 0;
  while (at < records.length) {
    const size = records.readInt32BE(at + 8) + 12;
    expect(at + size, 'whole batches only (framing)').toBeLessThanOrEqual(records.length);
    const batch = new RecordBatch(records.subarray(at, at + size));
    expect(batch.isValid(), `CRC of the batch at ${batch.baseOffset}`).toBe(true);
    const cursor = new RecordCursor().open(batch);
    for (const r of cursor.toArray()) out.push(r.offset);
    cursor.close();
    at += size;
  }
  return out;
}

describe('broker fetch of a damaged batch in a sealed segment (issue 23 0c)', () => {
  for (const [name, damage] of [
    ['batch length grown by 40', (b: Buffer, at: number) => b.writeInt32BE(b.readInt32BE(at + 8) + 40, at + 8)],
    ['magic byte', (b: Buffer, at: number) => { b[at + 16] = 9; }],
  ] as const) {
    it(`${name}: CORRUPT_MESSAGE once logged with file and position; the records after it are served`, async () => {
      const { dataDir, partitionDir } = await writeDataDir(150);
      const [sealed] = logFiles(partitionDir) as [string];
      const bytes = readFileSync(sealed);
      const position = batchPosition(sealed, 2);
      damage(bytes, position);
      writeFileSync(sealed, bytes);
      const lines: string[] = [];
      const broker = await Broker.start({ dataDir, port: 0, log: (l) => lines.push(l) });
      const c = await RawClient.connect(broker.port);
      try {
        const end = broker.store.get('orders', 0)?.logEndOffset ?? 0;
        expect(end).toBe(300);
        const first = await c.request('FETCH', 12, fetchRequest(0));
        expect(first.body.responses[0]?.partitions[0]?.errorCode).toBe(0);
        expect(offsetsOf(first.body.responses[0]?.partitions[0]?.records)).toEqual([0, 1, 2, 3]);
        for (let i = 0; i < 3; i++) {
          const damaged = await c.request('FETCH', 12, fetchRequest(4));
          expect(damaged.body.responses[0]?.partitions[0]?.errorCode).toBe(KAFKA_ERROR_CODES.CORRUPT_MESSAGE);
        }
        const said = lines.filter((l) => l.includes('SEGLOG_ERR_LOG_CORRUPT_BATCH'));
        expect(said).toHaveLength(1);
        expect(said[0]).toContain(`${sealed} at position ${position}`);
        expect(said[0]).toContain('the log continues at offset 6');
        // From the offset the message names: everything up to the log end.
        const rest: number[] = [];
        for (let offset = 6; offset < end;) {
          const got = offsetsOf((await c.request('FETCH', 12, fetchRequest(offset, 5000))).body.responses[0]?.partitions[0]?.records);
          expect(got.length).toBeGreaterThan(0);
          rest.push(...got);
          offset = (got.at(-1) as number) + 1;
        }
        expect(rest).toEqual(Array.from({ length: end - 6 }, (_, i) => 6 + i));
      } finally {
        c.close();
        await broker.stop();
      }
    });
  }
});
