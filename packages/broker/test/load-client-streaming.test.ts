// --streaming-compression of the load client (issue 10 item 3) against an
// in-process broker: batches bounded by compressed size and backlogs merged
// by mergeUnsent still pass the integrity checker (every acknowledged record
// once, at its offset, intact; idempotent sequences contiguous) for gzip,
// zstd and lz4, with more records per request than uncompressed-bounded
// batching; a batch whose response is lost is resent byte for byte and the
// log's duplicate detection accepts it exactly once (the resend is answered
// with the original offsets).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Broker, formatReport, parseLoadArgs } from '../src/index.js';
import { runLoad } from '../src/load/run-load.js';
import type { LoadReport } from '../src/load/run-load.js';
import type { LoadOptions } from '../src/load/load-options.js';

const RECORDS = 4000;
const BASE: Partial<LoadOptions> = {
  partitions: 4, recordBytes: 512, payload: 'text', records: RECORDS, acks: -1, idempotent: true, createTopic: true,
  requestTimeoutMs: 20_000, maxProduceMs: 30_000,
};

function expectIntact(report: LoadReport): void {
  expect(report.consume.kind).toBe('verified');
  if (report.consume.kind !== 'verified') return;
  expect(report.consume.violations).toEqual([]);
  expect(report.consume.recordsConsumed).toBe(RECORDS);
  expect(report.produce.recordsAcknowledged).toBe(RECORDS);
  expect(report.endOffsets.reduce((a, b) => a + b, 0) - report.startOffsets.reduce((a, b) => a + b, 0)).toBe(RECORDS);
  expect(report.ok).toBe(true);
}

describe('load client --streaming-compression', () => {
  let dir: string;
  let broker: Broker;
  let topics = 0;
  const topic = (): string => `stream-${++topics}`;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-load-streaming-'));
    broker = await Broker.start({ dataDir: dir, port: 0, log: () => undefined });
  });

  afterAll(async () => {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(['gzip', 'zstd', 'lz4'] as const)('%s: integrity holds and requests carry more records than uncompressed-bounded batches', async (compression) => {
    const plain = await runLoad({ ...BASE, compression, port: broker.port, topic: topic() });
    const streaming = await runLoad({ ...BASE, compression, streamingCompression: true, port: broker.port, topic: topic() });
    expectIntact(plain);
    expectIntact(streaming);
    expect(plain.produce.streaming).toBeNull();
    expect(streaming.produce.streaming?.merges).toBeGreaterThan(0);
    expect(streaming.produce.streaming?.mergeErrors).toBe(0);
    expect(streaming.produce.recordsPerRequest).toBeGreaterThan(2 * plain.produce.recordsPerRequest);
    expect(streaming.produce.recordsPerBatch).toBeGreaterThan(2 * plain.produce.recordsPerBatch);
    expect(streaming.produce.largestBatchBytes).toBeLessThanOrEqual(1_048_588);
    expect(formatReport(streaming)).toMatch(/streaming compression, max 1048588 B compressed[^]*backlog merges \d+: \d+ batches -> \d+/);
  });

  it('gzip: a batch is bounded by its compressed size, so it holds more records than fit that size uncompressed', async () => {
    const maxBatchBytes = 64 * 1024;
    const report = await runLoad({ ...BASE, compression: 'gzip', streamingCompression: true, maxBatchBytes, port: broker.port, topic: topic() });
    expectIntact(report);
    expect(report.produce.largestBatchBytes).toBeLessThanOrEqual(maxBatchBytes);
    expect(report.produce.largestBatchBytes).toBeGreaterThan(maxBatchBytes / 2);
    const fitUncompressed = Math.floor((maxBatchBytes - 61) / (512 + 10));
    expect(report.produce.recordsPerBatch).toBeGreaterThan(2 * fitUncompressed);
  });

  it.each([
    // 16 KiB compressed batches: about 8 per partition, so requests after the lost one are in flight and appended
    // before the resend arrives (the broker finds it in its 5-batch duplicate window, not as the last batch).
    ['streaming zstd', { compression: 'zstd', streamingCompression: true, maxBatchBytes: 16 * 1024 }],
    ['uncompressed-bounded gzip', { compression: 'gzip' }],
  ] as const)('%s: a lost response is resent verbatim and accepted once, at the original offsets', async (_name, mode) => {
    const report = await runLoad({ ...BASE, ...mode, port: broker.port, topic: topic(), lostResponse: { partition: 2 } });
    expectIntact(report);
    expect(report.produce.produceRequests).toBeGreaterThan(5);
    const resends = report.produce.resends;
    expect(resends.length).toBeGreaterThanOrEqual(1);
    expect(resends.some((r) => r.partition === 2)).toBe(true);
    for (const r of resends) {
      expect(r.sameBytes).toBe(true);
      expect(r.resentErrorCode).toBe(0);
      expect(r.droppedBaseOffset).toBeGreaterThanOrEqual(0);
      expect(r.resentBaseOffset).toBe(r.droppedBaseOffset);
    }
    // Exactly once: the acknowledged ranges tile the log, the resent ones included once.
    const acked = report.ackedBatches[0] ?? [];
    let ackedRecords = 0;
    for (let i = 0; i < acked.length; i += 4) ackedRecords += acked[i + 3] as number;
    expect(ackedRecords).toBe(RECORDS);
  });

  it('usage: a record that cannot fit maxBatchBytes alone, and a buffer below one batch, are refused', async () => {
    await expect(runLoad({ ...BASE, port: broker.port, streamingCompression: true, maxBatchBytes: 600 })).rejects.toMatchObject({ code: 'SEGLOG_ERR_LOAD_USAGE' });
    await expect(runLoad({ ...BASE, port: broker.port, streamingCompression: true, bufferBytes: 1000 })).rejects.toMatchObject({ code: 'SEGLOG_ERR_LOAD_USAGE' });
    await expect(runLoad({ ...BASE, port: broker.port, lostResponse: { partition: 4 } })).rejects.toMatchObject({ code: 'SEGLOG_ERR_LOAD_USAGE' });
  });
});

describe('pnpm load arguments for streaming compression', () => {
  it('parses --streaming-compression, --max-batch-bytes, --buffer-bytes and --payload', () => {
    expect(parseLoadArgs(['--streaming-compression', '--max-batch-bytes', '65536', '--buffer-bytes', '1048576', '--payload', 'text'])).toEqual({
      json: false, options: { streamingCompression: true, maxBatchBytes: 65536, bufferBytes: 1_048_576, payload: 'text' },
    });
    expect(() => parseLoadArgs(['--payload', 'zeros'])).toThrow(expect.objectContaining({ code: 'SEGLOG_ERR_LOAD_USAGE' }));
  });
});
