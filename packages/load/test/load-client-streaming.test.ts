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
import { Broker } from '@seglog/broker';
import { formatReport, parseLoadArgs } from '../src/index.js';
import { runLoad } from '../src/run-load.js';
import type { LoadReport } from '../src/run-load.js';
import type { LoadOptions } from '../src/load-options.js';
import { resolveLoadOptions } from '../src/load-options.js';
import { KafkaConnection } from '../src/kafka-connection.js';
import { LoadChecker } from '../src/load-checker.js';
import { consumeAndCheck } from '../src/load-consumer.js';
import { LoadProducer } from '../src/load-producer.js';
import { endOffsets, initProducerId, negotiateVersions, prepareTopic, settledEndOffsets } from '../src/load-setup.js';
import type { StreamingAccumulator } from '../src/streaming-accumulator.js';
import { SlowProxy } from './slow-proxy.js';
// The broker suite's raw protocol client (test helper, not a public export).
import { RawClient } from '../../broker/test/raw-client.js';
import { BoundedBatchBuilder, Codec, RecordBatch, RecordCursor, buildBatch } from '@seglog/records';
import type { CodecId } from '@seglog/records';
// The records package's test hook (a codec that fails on demand); no public export, by design.
import { streamFaults } from '../../records/src/internal/streaming/fault-hook.js';

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
    if (mode.compression === 'zstd') {
      // What was resent were merged batches (more records than one 16 KiB uncompressed batch holds: 31), compressed once.
      expect(report.produce.streaming?.merges).toBeGreaterThan(0);
      expect(resends.some((r) => r.count > 31)).toBe(true);
    }
    // Exactly once: the acknowledged ranges tile the log, the resent ones included once.
    const acked = report.ackedBatches[0] ?? [];
    let ackedRecords = 0;
    for (let i = 0; i < acked.length; i += 4) ackedRecords += acked[i + 3] as number;
    expect(ackedRecords).toBe(RECORDS);
  });

  it('a codec failure while merging (merges on the producer\'s thread) demotes to the uncompressed-bounded path for good: no record lost, integrity holds', async () => {
    let finishes = 0;
    streamFaults.hook = (_codec, point) => {
      if (point === 'finish' && ++finishes === 2) throw new Error('injected codec failure');
      return undefined;
    };
    let report: LoadReport;
    try {
      // mergeWorkers 0: the merges run in this thread, where the records package's codec hook is.
      // One partition: one merge at a time, so none is in flight when the second fails.
      report = await runLoad({ ...BASE, partitions: 1, compression: 'gzip', streamingCompression: true, maxBatchBytes: 64 * 1024, mergeWorkers: 0, port: broker.port, topic: topic() });
    } finally {
      streamFaults.hook = null;
    }
    expectIntact(report);
    expect(finishes).toBe(2); // no merge was tried after the failure
    expect(report.produce.streaming?.merges).toBe(1);
    expect(report.produce.streaming?.mergeErrors).toBe(1);
  });

  it.each(['throw', 'exit', 'hang'] as const)('a merge worker that fails (%s) demotes to the uncompressed-bounded path for good: no record lost, integrity holds', async (kind) => {
    const report = await runLoad({
      ...BASE, partitions: 1, compression: 'zstd', streamingCompression: true, maxBatchBytes: 64 * 1024, mergeWorkers: 1, mergeFault: { merge: 2, kind },
      // A hung worker is ended by the deadline; 1 s is far above a 64 KiB merge and keeps the test short.
      mergeDeadlineMs: kind === 'hang' ? 1000 : 10_000,
      port: broker.port, topic: topic(),
    });
    expectIntact(report);
    // The first merge was spliced, the second failed; merging is off after it, so there is no third.
    expect(report.produce.streaming?.merges).toBe(1);
    expect(report.produce.streaming?.mergeErrors).toBe(1);
  });

  it('requests are packed by the sealed batches\' exact bytes: never above maxRequestBytes, several batches when they fit', async () => {
    // Four 64 KiB partitions' batches do not fit a 150 KiB request: at most two merged ones do.
    const maxRequestBytes = 150 * 1024;
    // One request in flight, answered after 100 ms (slow-proxy.ts): batches the merge workers seal meanwhile
    // (a 64 KiB merge takes milliseconds) wait sealed and go together in the next request.
    const proxy = await SlowProxy.start(broker.port, 100);
    const o = resolveLoadOptions({ ...BASE, compression: 'gzip', streamingCompression: true, maxBatchBytes: 64 * 1024, maxRequestBytes, maxInFlight: 1, port: proxy.port, topic: topic() });
    const connection = await KafkaConnection.connect({ host: o.host, port: o.port, clientId: o.clientId, requestTimeoutMs: 20_000, maxResponseBytes: 1 << 28 });
    try {
      const versions = await negotiateVersions(connection);
      await prepareTopic(connection, versions, o);
      const id = await initProducerId(connection, versions, o);
      const producer = new LoadProducer(o, { index: 0, connection, produceVersion: versions.produce, ...id, records: RECORDS, rate: null });
      const started = performance.now();
      await producer.run(started, started + 30_000);
      expect(producer.ledger.recordsAcked).toBe(RECORDS);
      expect(producer.ledger.settlementErrors()).toEqual([]);
      expect(producer.largestBatchBytes).toBeGreaterThan(maxRequestBytes / 4); // so four would not fit
      expect(connection.largestFrameBytes).toBeLessThanOrEqual(maxRequestBytes);
      expect(producer.batchesSent).toBeGreaterThan(producer.produceRequests); // some requests carried several
    } finally {
      connection.close();
      await proxy.stop();
    }
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
    expect(parseLoadArgs(['--merge-workers', '0', '--merge-deadline-ms', '2500'])).toEqual({ json: false, options: { mergeWorkers: 0, mergeDeadlineMs: 2500 } });
    expect(parseLoadArgs(['--merge-workers', '3'])).toEqual({ json: false, options: { mergeWorkers: 3 } });
    expect(() => parseLoadArgs(['--merge-workers=-1'])).toThrow(/--merge-workers must be an integer >= 0/);
    expect(() => parseLoadArgs(['--merge-deadline-ms', '0'])).toThrow(/--merge-deadline-ms must be an integer >= 1/);
    expect(() => resolveLoadOptions({ ...BASE, mergeWorkers: 65 })).toThrow(/mergeWorkers must be an integer in 0..64/);
    expect(() => resolveLoadOptions({ ...BASE, mergeDeadlineMs: 0 })).toThrow(/mergeDeadlineMs/);
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
      // Merges in flight in a worker too (polled every macrotask: a merge of 64 KiB takes about a millisecond).
      await until(() => producer.requestsInFlight >= 3 && accumulator.merges >= 3 && producer.ledger.recordsAcked > 0 && accumulator.mergesInFlight > 0, true);
      expect(accumulator.mergesInFlight).toBeGreaterThan(0);
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
  });
});

async function until(condition: () => boolean, everyTurn = false): Promise<void> {
  while (!condition()) await new Promise((resolve) => (everyTurn ? setImmediate(resolve) : setTimeout(resolve, 2)));
}

// Issue 16: both batching modes' batches, built from awkward records, through the real broker and back.
describe('uncompressed- and compressed-bounded batches round trip through the broker', () => {
  let dir: string;
  let broker: Broker;
  let client: RawClient;
  let topics = 0;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-roundtrip-'));
    broker = await Broker.start({ dataDir: dir, port: 0, log: () => undefined });
    client = await RawClient.connect(broker.port);
  });

  afterAll(async () => {
    client.close();
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
  const MODES = ['uncompressed-bounded', 'compressed-bounded'] as const;
  const cases = CODECS.flatMap((codec) => MODES.map((mode) => [codec, mode] as const));

  it.each(cases)('%s %s: mixed sizes, headers and nulls come back byte for byte, at their offsets', async (codec, mode) => {
    const name = `roundtrip-${++topics}`;
    const created = await client.request('CREATE_TOPICS', 4, {
      topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false,
    });
    expect(created.body.topics[0]?.errorCode).toBe(0);
    const records = mixedRecords(400, 0x5eed + topics);
    const batches = mode === 'compressed-bounded' ? boundedBatches(records, Codec[codec]) : plainBatches(records, Codec[codec]);
    expect(batches.length).toBeGreaterThan(1);
    let expectedOffset = 0;
    for (const batch of batches) {
      const r = await client.request('PRODUCE', 9, {
        transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name, partitionData: [{ index: 0, records: batch }] }],
      });
      const answer = r.body.responses[0]?.partitionResponses[0];
      expect(answer?.errorCode).toBe(0);
      expect(answer?.baseOffset).toBe(expectedOffset);
      expectedOffset += batch.readInt32BE(57);
    }
    const stored = await fetchAll(client, name, expectedOffset);
    // Byte for byte: every batch as produced, but for the fields the broker owns (base offset, leader epoch; outside the CRC).
    expect(stored.length).toBe(batches.length);
    stored.forEach((got, i) => {
      const sent = batches[i] as Buffer;
      expect(got.length).toBe(sent.length);
      expect(got.subarray(16).equals(sent.subarray(16))).toBe(true);
      expect(got.subarray(8, 12).equals(sent.subarray(8, 12))).toBe(true);
    });
    const back = stored.flatMap((b) => {
      const cursor = new RecordCursor().open(new RecordBatch(b));
      const out = cursor.toArray();
      cursor.close();
      return out;
    });
    expect(back.length).toBe(records.length);
    back.forEach((got, i) => {
      const want = records[i] as MixedRecord;
      expect(got.offset).toBe(i);
      expect(got.timestamp).toBe(want.timestamp);
      expect(got.key).toEqual(want.key);
      expect(got.value).toEqual(want.value);
      expect(got.headers).toEqual(want.headers);
    });
  });
});

interface MixedRecord {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: { key: string; value: Buffer | null }[];
  readonly timestamp: number;
}

/** Seeded: values of 0..6000 bytes (text, some random, some null), null keys, 0..3 headers with null values. */
function mixedRecords(count: number, seed: number): MixedRecord[] {
  let x = seed | 1;
  const rand = (n: number): number => {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    return (x >>> 0) % n;
  };
  const bytes = (n: number, text: boolean): Buffer => {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = text ? 97 + (rand(7) === 0 ? 26 : rand(6)) : rand(256);
    return b;
  };
  const t0 = 1_700_000_000_000;
  return Array.from({ length: count }, (_, i) => {
    const size = rand(10) === 0 ? 2000 + rand(4000) : rand(600);
    const headers = Array.from({ length: rand(4) }, (_, h) => ({ key: `h${h}-${rand(100)}`, value: rand(3) === 0 ? null : bytes(rand(40), true) }));
    return {
      key: rand(4) === 0 ? null : bytes(rand(20), true),
      value: rand(5) === 0 ? null : bytes(size, rand(8) !== 0),
      headers, timestamp: t0 + i * 3 - rand(5),
    };
  });
}

const ROUND_TRIP_BATCH_BYTES = 16 * 1024;

/** The uncompressed-bounded path: cut at 16 KiB of uncompressed records, one-shot compressed. */
function plainBatches(records: readonly MixedRecord[], codec: CodecId): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  let bytes = 61;
  for (let i = 0; i <= records.length; i++) {
    const r = records[i];
    const size = r === undefined ? 0 : 32 + (r.value?.length ?? 0) + (r.key?.length ?? 0) + r.headers.reduce((a, h) => a + 8 + h.key.length + (h.value?.length ?? 0), 0);
    if (r !== undefined && (i === start || bytes + size <= ROUND_TRIP_BATCH_BYTES)) {
      bytes += size;
      continue;
    }
    out.push(buildBatch({ records: records.slice(start, i), compression: codec }));
    start = i;
    bytes = 61 + size;
  }
  return out;
}

/** The compressed-bounded path: streamed through BoundedBatchBuilder, 16 KiB compressed. */
function boundedBatches(records: readonly MixedRecord[], codec: CodecId): Buffer[] {
  const out: Buffer[] = [];
  let builder = new BoundedBatchBuilder({ codec, maxBytes: ROUND_TRIP_BATCH_BYTES });
  for (const r of records) {
    if (builder.tryAppend(r)) continue;
    if (builder.recordsCount > 0) out.push(...builder.seal());
    builder = new BoundedBatchBuilder({ codec, maxBytes: ROUND_TRIP_BATCH_BYTES });
    if (!builder.tryAppend(r)) out.push(builder.buildAlone(r));
  }
  if (builder.recordsCount > 0) out.push(...builder.seal());
  for (const b of out) expect(b.length).toBeLessThanOrEqual(ROUND_TRIP_BATCH_BYTES);
  return out;
}

/** Every stored batch of `topic`-0 up to `end`, as the broker returns them. */
async function fetchAll(client: RawClient, topic: string, end: number): Promise<Buffer[]> {
  const out: Buffer[] = [];
  let offset = 0;
  for (let round = 0; offset < end && round < 1000; round++) {
    const r = await client.request('FETCH', 12, {
      clusterId: null, replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: offset, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: 1 << 20 }] }],
      forgottenTopicsData: [], rackId: '',
    });
    const part = r.body.responses[0]?.partitions[0];
    expect(part?.errorCode).toBe(0);
    const bytes = part?.records;
    if (!Buffer.isBuffer(bytes)) break;
    let at = 0;
    while (at + 61 <= bytes.length) {
      const size = bytes.readInt32BE(at + 8) + 12;
      if (at + size > bytes.length) break;
      const batch = Buffer.from(bytes.subarray(at, at + size));
      out.push(batch);
      offset = Number(batch.readBigInt64BE(0)) + batch.readInt32BE(23) + 1;
      at += size;
    }
  }
  return out;
}
