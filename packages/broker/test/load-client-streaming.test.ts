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
import { resolveLoadOptions } from '../src/load/load-options.js';
import { KafkaConnection } from '../src/load/kafka-connection.js';
import { LoadChecker } from '../src/load/load-checker.js';
import { consumeAndCheck } from '../src/load/load-consumer.js';
import { LoadProducer } from '../src/load/load-producer.js';
import { endOffsets, initProducerId, negotiateVersions, prepareTopic, settledEndOffsets } from '../src/load/load-setup.js';
import type { StreamingAccumulator } from '../src/load/streaming-accumulator.js';
import { SlowProxy } from './slow-proxy.js';

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

// Issue 16: the compress-once accumulator against a slow broker (slow-proxy.ts: answers held back), where
// requests are in flight and backlogs are merged while records keep coming.
describe('load client --streaming-compression against a slow broker', () => {
  let dir: string;
  let broker: Broker;
  let proxy: SlowProxy;
  let topics = 0;
  const topic = (): string => `slow-${++topics}`;
  // Merges need a backlog above one uncompressed batch (16 KiB: 31 records); 64 KiB compressed holds ~4x that.
  const SLOW: Partial<LoadOptions> = {
    partitions: 4, recordBytes: 512, payload: 'text', acks: -1, idempotent: true, createTopic: true, compression: 'zstd',
    streamingCompression: true, batchBytes: 16 * 1024, maxBatchBytes: 64 * 1024, bufferBytes: 1024 * 1024, requestTimeoutMs: 20_000,
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-load-slow-'));
    broker = await Broker.start({ dataDir: dir, port: 0, log: () => undefined });
    proxy = await SlowProxy.start(broker.port, 100);
  });

  afterAll(async () => {
    await proxy.stop();
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a live drain (linger, rate-paced, no flush until the end) is exactly-once, byte for byte', async () => {
    const report = await runLoad({ ...SLOW, port: proxy.port, topic: topic(), lingerMs: 5, rate: 20_000, durationMs: 1500, records: null });
    expect(report.consume.kind).toBe('verified');
    if (report.consume.kind !== 'verified') return;
    expect(report.consume.violations).toEqual([]);
    expect(report.produce.recordsAcknowledged).toBe(report.produce.recordsSent);
    expect(report.consume.recordsConsumed).toBe(report.produce.recordsSent);
    // Merged while generating: more merges than the final flush alone could make (one per partition).
    expect(report.produce.streaming?.merges).toBeGreaterThan(SLOW.partitions as number);
    expect(report.produce.streaming?.mergeErrors).toBe(0);
    expect(report.produce.recordsPerBatch).toBeGreaterThan(31);
    expect(report.ok).toBe(true);
  });

  it.each(['purge', 'close'] as const)('%s with merges and requests in flight settles every record exactly once and hangs nothing', async (how) => {
    // A request holds about one merged batch, so other partitions' batches wait sealed (frozen) when the purge comes.
    const o = resolveLoadOptions({ ...SLOW, port: proxy.port, topic: topic(), lingerMs: 1, durationMs: 60_000, records: null, maxRequestBytes: 66 * 1024 });
    const control = await KafkaConnection.connect({ host: o.host, port: broker.port, clientId: 'control', requestTimeoutMs: 20_000, maxResponseBytes: 1 << 28 });
    const connection = await KafkaConnection.connect({ host: o.host, port: proxy.port, clientId: 'slow', requestTimeoutMs: 20_000, maxResponseBytes: 1 << 28 });
    try {
      const versions = await negotiateVersions(control);
      await prepareTopic(control, versions, o);
      const startOffsets = await endOffsets(control, versions, o);
      const id = await initProducerId(connection, versions, o);
      const producer = new LoadProducer(o, { index: 0, connection, produceVersion: versions.produce, ...id, records: null, rate: null });
      const accumulator = producer.accumulator as StreamingAccumulator;
      const started = performance.now();
      const done = producer.run(started, started + o.durationMs!);
      await until(() => producer.requestsInFlight >= 3 && accumulator.merges >= 3 && producer.ledger.recordsAcked > 0);
      const inFlight = producer.requestsInFlight;
      const ackedBefore = producer.ledger.recordsAcked;
      if (how === 'purge') producer.purge();
      else producer.close();
      await done; // the test's timeout is the hang detector
      const ledger = producer.ledger;
      expect(inFlight).toBeGreaterThan(0);
      expect(producer.accumulator.hasPending()).toBe(false);
      expect(ledger.settlementErrors()).toEqual([]);
      expect(ledger.recordsPurged).toBeGreaterThan(0);
      let sent = 0;
      for (let p = 0; p < o.partitions; p++) sent += ledger.sent(p);
      expect(ledger.recordsAcked + ledger.recordsFailed + ledger.recordsUncertain + ledger.recordsPurged).toBe(sent);
      if (how === 'purge') {
        expect(ledger.recordsAcked).toBeGreaterThan(ackedBefore); // the requests in flight were answered after the purge
        expect(ledger.recordsUncertain).toBe(0);
      } else {
        expect(ledger.recordsUncertain).toBeGreaterThan(0); // in flight when the connection closed
      }
      expect(ledger.recordsFailed).toBe(0);
      // The log holds every acknowledged record once, intact, and no purged one (the checker flags a record never acknowledged).
      // After close, requests the broker read may still be appending: wait until the end offsets stop moving.
      const ends = await settledEndOffsets(control, versions, o);
      const checker = new LoadChecker({
        partitions: o.partitions, recordBytes: o.recordBytes, payload: o.payload, producers: [{ ledger, ...id }],
        startOffsets, endOffsets: ends, allUncertain: false, maxViolationsReported: 10, corruption: null,
      });
      const consumed = await consumeAndCheck({
        connection: control, fetchVersion: versions.fetch, topic: o.topic, partitionMaxBytes: 1 << 20, maxFetchRequests: 10_000, endOffsets: ends,
      }, checker);
      expect(consumed.kind).toBe('verified');
      if (consumed.kind !== 'verified') return;
      expect(consumed.violations).toEqual([]);
      expect(consumed.recordsConsumed).toBe(ledger.recordsAcked + consumed.unacknowledgedPresent);
    } finally {
      control.close();
      connection.close();
    }
  }, 60_000);
});

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 2));
}
