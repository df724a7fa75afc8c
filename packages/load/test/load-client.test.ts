// The load/diagnostic client (@seglog/load) against an in-process broker on a
// loopback port: the integrity checks pass for 100-byte records over 16
// partitions with 1 and 3 idempotent producers (acks=-1) and with acks=0;
// each deliberate corruption of what the consumer sees is reported (proof
// the checker can fail); the blackhole broker gives the same produce offsets
// and its fetch refusal is a typed result.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Broker } from '@seglog/broker';
import { formatReport, parseLoadArgs } from '../src/index.js';
import { LatencyRecorder } from '../src/latency-recorder.js';
import { runLoad } from '../src/run-load.js';
import type { LoadOptions } from '../src/load-options.js';

const BASE: Partial<LoadOptions> = {
  partitions: 16, recordBytes: 100, acks: -1, idempotent: true, createTopic: true, requestTimeoutMs: 10_000, maxProduceMs: 20_000,
};

describe('load client against an in-process broker', () => {
  let dir: string;
  let broker: Broker;
  let topics = 0;
  const topic = (): string => `load-${++topics}`;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-load-client-'));
    broker = await Broker.start({ dataDir: dir, port: 0, log: () => undefined });
  });

  afterAll(async () => {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([1, 3])('%i idempotent producer(s), acks=-1: everything acknowledged is consumed once, at its offset, intact', async (producers) => {
    const report = await runLoad({ ...BASE, port: broker.port, topic: topic(), producers, records: 6000, broker });
    expect(report.consume.kind).toBe('verified');
    if (report.consume.kind !== 'verified') return;
    expect(report.consume.violations).toEqual([]);
    expect(report.consume.recordsConsumed).toBe(6000);
    expect(report.produce.recordsAcknowledged).toBe(6000);
    expect(report.ok).toBe(true);
    expect(report.endOffsets.reduce((a, b) => a + b, 0)).toBe(6000);
    expect(new Set(report.producerIds.map((p) => p.producerId)).size).toBe(producers);
    expect(report.producerIds.every((p) => p.producerId >= 0)).toBe(true);
    expect(report.produce.publishLatency.count).toBe(6000);
    expect(report.produce.publishLatency.p99Ms).toBeGreaterThanOrEqual(report.produce.publishLatency.p50Ms);
    expect(report.brokerCpu?.scope).toBe('process');
  });

  it('acks=0: every record present is one that was sent, once; none is acknowledged', async () => {
    const report = await runLoad({ ...BASE, idempotent: false, acks: 0, port: broker.port, topic: topic(), producers: 2, records: 3000 });
    expect(report.consume.kind).toBe('verified');
    if (report.consume.kind !== 'verified') return;
    expect(report.consume.violations).toEqual([]);
    expect(report.produce.recordsAcknowledged).toBe(0);
    expect(report.consume.unacknowledgedPresent + report.consume.uncertainMissing).toBe(3000);
  });

  it('a second run on the same topic checks only its own records (starts at the end offsets)', async () => {
    const name = topic();
    await runLoad({ ...BASE, port: broker.port, topic: name, records: 1000 });
    const report = await runLoad({ ...BASE, port: broker.port, topic: name, records: 1000 });
    expect(report.startOffsets.reduce((a, b) => a + b, 0)).toBe(1000);
    expect(report.integrityOk).toBe(true);
  });

  it.each([
    ['flip-payload-byte', /payload differs from producer 0 sequence \d+ at byte 99/],
    ['skip-offset', /acknowledged record at offset 7 .* was not consumed/],
    ['flip-batch-byte', /bad CRC-32C/],
  ] as const)('a corrupted consume (%s) is reported as a violation', async (kind, pattern) => {
    const report = await runLoad({ ...BASE, port: broker.port, topic: topic(), records: 2000, corruption: { partition: 3, offset: 7, kind } });
    expect(report.integrityOk).toBe(false);
    expect(report.ok).toBe(false);
    if (report.consume.kind !== 'verified') throw new Error(`consume ${report.consume.kind}`);
    expect(report.consume.violationCount).toBeGreaterThan(0);
    expect(report.consume.violations.some((v) => pattern.test(v))).toBe(true);
    expect(report.consume.violations.every((v) => v.startsWith('partition 3:'))).toBe(true);
    expect(formatReport(report)).toMatch(/integrity VIOLATIONS: \d+\n  violation: partition 3:[^]*result    FAILED \(integrity violations\)$/);
  });

  it('the blackhole broker acknowledges the same offsets; its fetch refusal is a typed result', async () => {
    const options: Partial<LoadOptions> = { ...BASE, topic: 'same', producers: 1, records: 5000 };
    const real = await runLoad({ ...options, port: broker.port });
    const hole = await Broker.start({ blackhole: true, port: 0, log: () => undefined });
    try {
      const refused = await runLoad({ ...options, port: hole.port });
      expect(refused.consume).toMatchObject({ kind: 'fetch-refused', errorName: 'KAFKA_STORAGE_ERROR', errorCode: 56, partitions: 16 });
      expect(refused.ok).toBe(true);
      expect(refused.ackedBatches).toEqual(real.ackedBatches);
      expect(refused.endOffsets).toEqual(real.endOffsets);
      expect(formatReport(refused)).toContain('fetch refused by the broker: KAFKA_STORAGE_ERROR (56) on all 16 partitions; nothing verified');
      const skipped = await runLoad({ ...options, topic: 'same-2', port: hole.port, broker: hole });
      expect(skipped.consume).toEqual({ kind: 'skipped', reason: 'blackhole' });
    } finally {
      await hole.stop();
    }
  });

  it('--duration-ms with --rate paces the producers and lingers partial batches out', async () => {
    const report = await runLoad({ ...BASE, port: broker.port, topic: topic(), producers: 2, durationMs: 400, rate: 5000, lingerMs: 5 });
    expect(report.produce.recordsSent).toBeGreaterThan(1000);
    expect(report.produce.recordsSent).toBeLessThan(2600);
    expect(report.produce.recordsPerBatch).toBeLessThan(50); // paced: batches close by linger, not by size
    expect(report.ok).toBe(true);
  });

  it('linger 0 with producing tasks: a free request slot sends what is there, not a full batch (closed loop: full)', async () => {
    const options: Partial<LoadOptions> = { ...BASE, port: broker.port, producers: 1, records: 6000, lingerMs: 0, batchBytes: 65_536 };
    const closed = await runLoad({ ...options, topic: topic() });
    const chunked = await runLoad({ ...options, topic: topic(), produceChunk: 50, produceTasks: 2 });
    for (const r of [closed, chunked]) {
      expect(r.ok).toBe(true);
      expect(r.consume.kind === 'verified' && r.consume.violations.length === 0 && r.consume.recordsConsumed === 6000).toBe(true);
    }
    // Closed loop: 6000 records fill the 16 partitions' open batches (375 each, under 64 KiB) before the first send.
    expect(closed.produce.recordsPerBatch).toBe(375);
    // Chunked: the first turns go out at once (5 slots free), later ones carry what arrived behind the in-flight requests.
    expect(chunked.produce.recordsPerBatch).toBeLessThan(100);
    expect(chunked.produce.produceRequests).toBeGreaterThan(5);
  });

  it('usage errors are typed before any connection', async () => {
    await expect(runLoad({ ...BASE, port: broker.port, records: 10, produceChunk: 10, durationMs: null, rate: 100 })).rejects.toMatchObject({ code: 'SEGLOG_ERR_LOAD_USAGE' });
    await expect(runLoad({ ...BASE, port: broker.port, records: 10, acks: 1 })).rejects.toMatchObject({ code: 'SEGLOG_ERR_LOAD_USAGE' });
    await expect(runLoad({ ...BASE, port: broker.port })).rejects.toMatchObject({ code: 'SEGLOG_ERR_LOAD_USAGE' });
    await expect(runLoad({ ...BASE, port: broker.port, topic: 'missing-topic', createTopic: false, records: 10 }))
      .rejects.toMatchObject({ code: 'SEGLOG_ERR_LOAD_SETUP' });
  });
});

describe('pnpm load arguments', () => {
  it('parses the documented options, including --acks -1 after pnpm\'s --', () => {
    const parsed = parseLoadArgs(['--', '--bootstrap', '127.0.0.1:9093', '--topic', 'T', '--partitions', '16', '--producers', '3',
      '--record-bytes', '100', '--records', '1000', '--acks', '-1', '--idempotent', '--compression', 'zstd', '--linger-ms', '0',
      '--batch-bytes', '65536', '--create-topic', '--no-verify', '--json', '--produce-chunk', '64', '--produce-tasks', '3']);
    expect(parsed).toEqual({
      json: true,
      options: {
        host: '127.0.0.1', port: 9093, topic: 'T', partitions: 16, producers: 3, recordBytes: 100, records: 1000, acks: -1,
        idempotent: true, compression: 'zstd', lingerMs: 0, batchBytes: 65536, createTopic: true, verify: false, produceChunk: 64, produceTasks: 3,
      },
    });
    expect(parseLoadArgs(['--help'])).toBe('help');
    expect(() => parseLoadArgs(['--acks', '2'])).toThrow(/--acks must be/);
    expect(() => parseLoadArgs(['--compression', 'brotli'])).toThrow(expect.objectContaining({ code: 'SEGLOG_ERR_LOAD_USAGE' }));
    expect(() => parseLoadArgs(['--bogus'])).toThrow(expect.objectContaining({ code: 'SEGLOG_ERR_LOAD_USAGE' }));
  });
});

describe('LatencyRecorder', () => {
  it('weights each batch sample by its records', () => {
    const r = new LatencyRecorder(2);
    r.record(1, 98);
    r.record(50, 1);
    r.record(100, 1);
    const s = r.summary();
    expect(s).toMatchObject({ count: 100, samples: 3, p50Ms: 1, p99Ms: 50, p999Ms: 100, maxMs: 100 });
    expect(s.meanMs).toBeCloseTo((98 + 50 + 100) / 100);
  });
});
