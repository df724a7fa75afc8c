// The server over real loopback sockets with our own encoder/decoder
// (raw-client.ts): ordering under pipelining, acks=0, the ApiVersions
// fallback, closing on bad frames, long-poll wake-up and timeout, offsets,
// DeleteRecords, the in-flight bound, blackhole mode and graceful stop.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Codec, RecordBatch, RecordCursor, buildBatch } from '@seglog/records';
import { Broker, KAFKA_ERROR_CODES } from '../src/index.js';
import type { FetchRequest, ProduceRequest } from '@seglog/protocol';
import { RawClient } from './raw-client.js';

const T0 = Date.now();

function batch(values: string[], compression: number = Codec.none): Buffer {
  return buildBatch({ records: values.map((v, i) => ({ value: Buffer.from(v), timestamp: T0 + i })), compression: compression as 0 });
}

function produce(topic: string, records: Buffer, acks = 1, partition = 0): ProduceRequest {
  return { transactionalId: null, acks, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] };
}

function fetch(topic: string, fetchOffset: number, options: Partial<FetchRequest> = {}, partition = 0): FetchRequest {
  return {
    clusterId: null, replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [], rackId: '', ...options,
  };
}

/** Values of the records in a fetch response's raw record bytes. */
function valuesOf(records: unknown): string[] {
  if (!Buffer.isBuffer(records)) return [];
  const out: string[] = [];
  let at = 0;
  while (at + 61 <= records.length) {
    const size = records.readInt32BE(at + 8) + 12;
    const cursor = new RecordCursor().open(new RecordBatch(records.subarray(at, at + size)));
    for (const r of cursor.toArray()) out.push(r.value === null ? '' : r.value.toString());
    cursor.close();
    at += size;
  }
  return out;
}

async function createTopic(client: RawClient, name: string, partitions = 1): Promise<void> {
  const r = await client.request('CREATE_TOPICS', 4, {
    topics: [{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false,
  });
  expect(r.body.topics[0]?.errorCode).toBe(0);
}

describe('Broker server', () => {
  let dir: string;
  let broker: Broker;
  const notices: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-broker-unit-'));
    broker = await Broker.start({ dataDir: dir, port: 0, autoCreatePartitions: 2, maxInFlightRequests: 4, log: (l) => notices.push(l) });
  });

  afterAll(async () => {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers pipelined requests in order and nothing for acks=0', async () => {
    const c = await RawClient.connect(broker.port);
    await createTopic(c, 'pipe');
    const a = c.encode('API_VERSIONS', 3, { clientSoftwareName: 'raw', clientSoftwareVersion: '1' });
    const m = c.encode('METADATA', 12, { topics: [{ topicId: '00000000000000000000000000000000', name: 'pipe' }], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });
    // acks=0 is never answered: the client expects no response for it
    const p0Frame = c.encode('PRODUCE', 9, produce('pipe', batch(['zero-ack']), 0), false).frame;
    const p1 = c.encode('PRODUCE', 9, produce('pipe', batch(['one-ack']), 1));
    const f = c.encode('FETCH', 12, fetch('pipe', 0, { maxWaitMs: 2000, minBytes: 1 }));
    c.send([a.frame, m.frame, p0Frame, p1.frame, f.frame]);
    const [av, md, pr, fr] = await Promise.all([a.response, m.response, p1.response, f.response]);
    expect(av.body.errorCode).toBe(0);
    expect(av.body.apiKeys.map((k) => k.apiKey)).toEqual([0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20, 21, 22, 24, 25, 26, 28, 32, 33, 37, 42, 44, 47, 60, 65, 66]);
    expect(md.body.brokers).toEqual([{ nodeId: 0, host: '127.0.0.1', port: broker.port, rack: null }]);
    expect(md.body.topics[0]?.partitions.map((p) => [p.partitionIndex, p.leaderId, p.replicaNodes, p.isrNodes])).toEqual([[0, 0, [0], [0]]]);
    expect(pr.body.responses[0]?.partitionResponses[0]).toMatchObject({ errorCode: 0, baseOffset: 1 });
    // Requests of one connection run concurrently (answered in order): the
    // fetch sees at least the acks=0 record, maybe not yet the acks=1 one.
    expect(valuesOf(fr.body.responses[0]?.partitions[0]?.records)[0]).toBe('zero-ack');
    const after = await c.request('FETCH', 12, fetch('pipe', 0));
    expect(valuesOf(after.body.responses[0]?.partitions[0]?.records)).toEqual(['zero-ack', 'one-ack']);
    expect(c.unexpected).toEqual([]);
    c.close();
  });

  it('auto-creates topics in Metadata with autoCreatePartitions and reports unknown ones otherwise', async () => {
    const c = await RawClient.connect(broker.port);
    const ask = (name: string, allow: boolean) => c.request('METADATA', 9, {
      topics: [{ topicId: '00000000000000000000000000000000', name }], allowAutoTopicCreation: allow,
      includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false,
    });
    expect((await ask('no-auto', false)).body.topics[0]?.errorCode).toBe(KAFKA_ERROR_CODES.UNKNOWN_TOPIC_OR_PARTITION);
    const auto = await ask('auto', true);
    expect(auto.body.topics[0]?.errorCode).toBe(0);
    expect(auto.body.topics[0]?.partitions.length).toBe(2);
    expect((await ask('bad/name', true)).body.topics[0]?.errorCode).toBe(KAFKA_ERROR_CODES.INVALID_TOPIC_EXCEPTION);
    c.close();
  });

  it('Metadata: an empty topic list is "all topics" in v0 (no null list there) and "no topics" from v1', async () => {
    const c = await RawClient.connect(broker.port);
    await createTopic(c, 'listed-a');
    await createTopic(c, 'listed-b');
    const flags = { includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false };
    const names = (body: { readonly topics: readonly { readonly name: string | null }[] }): (string | null)[] => body.topics.map((t) => t.name);
    const v0 = await c.request('METADATA', 0, { topics: [], allowAutoTopicCreation: true, ...flags });
    expect(names(v0.body)).toEqual(expect.arrayContaining(['listed-a', 'listed-b']));
    const v1Null = await c.request('METADATA', 1, { topics: null, allowAutoTopicCreation: true, ...flags });
    expect(names(v1Null.body).sort()).toEqual(names(v0.body).sort());
    const v1Empty = await c.request('METADATA', 1, { topics: [], allowAutoTopicCreation: true, ...flags });
    expect(v1Empty.body.topics).toEqual([]);
    // "All topics" never auto-creates, and a named v0 request still may.
    const named = await c.request('METADATA', 0, { topics: [{ topicId: '0'.repeat(32), name: 'v0-auto' }], allowAutoTopicCreation: true, ...flags });
    expect(named.body.topics.map((t) => [t.name, t.errorCode])).toEqual([['v0-auto', 0]]);
    c.close();
  });

  it('answers an ApiVersions version it does not speak with UNSUPPORTED_VERSION and its ranges (v0 body)', async () => {
    const c = await RawClient.connect(broker.port);
    const frame = Buffer.from('0000000e' + '0012' + '0004' + '00000007' + '0001' + '61' + '00' + '0000', 'hex');
    frame.writeInt32BE(frame.length - 4, 0);
    const pending = new Promise<Buffer>((resolve) => c.socket.once('data', resolve));
    c.socket.write(frame);
    const data = await pending;
    expect(data.readInt32BE(4)).toBe(7);
    expect(data.readInt16BE(8)).toBe(KAFKA_ERROR_CODES.UNSUPPORTED_VERSION);
    expect(data.readInt32BE(10)).toBe(31);
    c.close();
  });

  it('closes the connection after an unknown API, once the earlier responses are out', async () => {
    const c = await RawClient.connect(broker.port);
    const ok = c.encode('API_VERSIONS', 0, { clientSoftwareName: '', clientSoftwareVersion: '' });
    const unknown = Buffer.from('0000000a' + '03e7' + '0000' + '00000063' + 'ffff', 'hex');
    c.send([ok.frame, unknown]);
    expect((await ok.response).body.errorCode).toBe(0);
    await c.closed;
    expect(notices.some((n) => n.includes('SEGLOG_ERR_PROTOCOL_UNKNOWN_API') && n.includes('API key 999 unknown v0'))).toBe(true);
  });

  it('names an API it does not implement: key, Kafka\'s name and version, once for the connection', async () => {
    const c = await RawClient.connect(broker.port);
    // DescribeUserScramCredentials (50) v0, twice in one write: the connection closes after the first.
    const frame = Buffer.from('0000000a' + '0032' + '0000' + '00000063' + 'ffff', 'hex');
    c.send([frame, frame]);
    await c.closed;
    const named = notices.filter((n) => n.includes('API key 50 DescribeUserScramCredentials v0: not implemented by this broker'));
    expect(named).toHaveLength(1);
  });

  it('closes the connection on a frame above maxRequestBytes before buffering it', async () => {
    const c = await RawClient.connect(broker.port);
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(broker.options.maxRequestBytes + 1, 0);
    c.socket.write(prefix);
    await c.closed;
    expect(notices.some((n) => n.includes('SEGLOG_ERR_PROTOCOL_FRAME_TOO_LARGE'))).toBe(true);
  });

  it('parks a fetch until a produce advances the high watermark, and times out empty otherwise', async () => {
    const c = await RawClient.connect(broker.port);
    const p = await RawClient.connect(broker.port);
    await createTopic(c, 'poll');
    const started = Date.now();
    const empty = await c.request('FETCH', 11, fetch('poll', 0, { maxWaitMs: 300 }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(empty.body.responses[0]?.partitions[0]).toMatchObject({ errorCode: 0, highWatermark: 0 });
    const parkedAt = Date.now();
    // Woken by the produce, not by maxWait: the bound below is far under maxWait
    // and far over any wake-up on a busy machine.
    const parked = c.request('FETCH', 11, fetch('poll', 0, { maxWaitMs: 300_000 }));
    await new Promise((r) => setTimeout(r, 100));
    await p.request('PRODUCE', 8, produce('poll', batch(['wake', 'up'], Codec.gzip), -1));
    const woke = await parked;
    expect(Date.now() - parkedAt).toBeLessThan(60_000);
    expect(woke.body.responses[0]?.partitions[0]?.highWatermark).toBe(2);
    expect(valuesOf(woke.body.responses[0]?.partitions[0]?.records)).toEqual(['wake', 'up']);
    c.close();
    p.close();
  });

  it('answers OFFSET_OUT_OF_RANGE, ListOffsets -1/-2/timestamp, and DeleteRecords', async () => {
    const c = await RawClient.connect(broker.port);
    await createTopic(c, 'offsets');
    for (let i = 0; i < 3; i++) await c.request('PRODUCE', 7, produce('offsets', batch([`a${i}`, `b${i}`])));
    const oor = await c.request('FETCH', 12, fetch('offsets', 99));
    expect(oor.body.responses[0]?.partitions[0]).toMatchObject({ errorCode: KAFKA_ERROR_CODES.OFFSET_OUT_OF_RANGE, highWatermark: 6 });
    const list = async (timestamp: number) => (await c.request('LIST_OFFSETS', 7, {
      replicaId: -1, isolationLevel: 0, topics: [{ name: 'offsets', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp, maxNumOffsets: 1 }] }],
    })).body.topics[0]?.partitions[0];
    expect((await list(-1))?.offset).toBe(6);
    expect((await list(-2))?.offset).toBe(0);
    expect((await list(T0 + 1))?.offset).toBe(1);
    expect((await list(T0 + 10_000_000))?.offset).toBe(-1);
    const deleted = await c.request('DELETE_RECORDS', 2, { topics: [{ name: 'offsets', partitions: [{ partitionIndex: 0, offset: 4 }] }], timeoutMs: 1000 });
    expect(deleted.body.topics[0]?.partitions[0]).toMatchObject({ errorCode: 0, lowWatermark: 4 });
    expect((await list(-2))?.offset).toBe(4);
    const above = await c.request('DELETE_RECORDS', 2, { topics: [{ name: 'offsets', partitions: [{ partitionIndex: 0, offset: 7 }] }], timeoutMs: 1000 });
    expect(above.body.topics[0]?.partitions[0]?.errorCode).toBe(KAFKA_ERROR_CODES.OFFSET_OUT_OF_RANGE);
    c.close();
  });

  it('answers every pipelined request in order when more are sent than the in-flight bound', async () => {
    const c = await RawClient.connect(broker.port);
    await createTopic(c, 'bound');
    const parts = Array.from({ length: 40 }, (_, i) => (i % 2 === 0
      ? c.encode('PRODUCE', 9, produce('bound', batch([`r${i}`])))
      : c.encode('FETCH', 12, fetch('bound', 0, { maxWaitMs: 50, minBytes: 1 << 20 }))));
    c.send(parts.map((p) => p.frame));
    const responses = await Promise.all(parts.map((p) => p.response));
    expect(responses.map((r) => r.correlationId)).toEqual([...responses.map((r) => r.correlationId)].sort((a, b) => a - b));
    const offsets = responses.filter((_, i) => i % 2 === 0).map((r) => (r.body as unknown as { responses: { partitionResponses: { baseOffset: number }[] }[] }).responses[0]?.partitionResponses[0]?.baseOffset);
    expect(offsets).toEqual(Array.from({ length: 20 }, (_, i) => i));
    c.close();
  });

  it('gives idempotent producers fresh ids; a transactional id gets its own id, then epoch bumps', async () => {
    const c = await RawClient.connect(broker.port);
    const a = await c.request('INIT_PRODUCER_ID', 4, { transactionalId: null, transactionTimeoutMs: 60000, producerId: -1, producerEpoch: -1 });
    const b = await c.request('INIT_PRODUCER_ID', 4, { transactionalId: null, transactionTimeoutMs: 60000, producerId: -1, producerEpoch: -1 });
    expect(b.body.producerId).toBe(a.body.producerId + 1);
    await broker.groupsReady();
    const t = await c.request('INIT_PRODUCER_ID', 4, { transactionalId: 'tx', transactionTimeoutMs: 60000, producerId: -1, producerEpoch: -1 });
    expect(t.body).toMatchObject({ errorCode: 0, producerId: b.body.producerId + 1, producerEpoch: 0 });
    const again = await c.request('INIT_PRODUCER_ID', 4, { transactionalId: 'tx', transactionTimeoutMs: 60000, producerId: -1, producerEpoch: -1 });
    expect(again.body).toMatchObject({ errorCode: 0, producerId: t.body.producerId, producerEpoch: 1 });
    const timeout = await c.request('INIT_PRODUCER_ID', 4, { transactionalId: 'tx', transactionTimeoutMs: 900_001, producerId: -1, producerEpoch: -1 });
    expect(timeout.body.errorCode).toBe(KAFKA_ERROR_CODES.INVALID_TRANSACTION_TIMEOUT);
    c.close();
  });
});

describe('Broker modes and shutdown', () => {
  it('blackhole mode accepts produce and answers fetch with KAFKA_STORAGE_ERROR', async () => {
    const broker = await Broker.start({ blackhole: true, port: 0, log: () => undefined });
    try {
      const c = await RawClient.connect(broker.port);
      await createTopic(c, 'void');
      const p = await c.request('PRODUCE', 9, produce('void', batch(['gone', 'too']), -1));
      expect(p.body.responses[0]?.partitionResponses[0]).toMatchObject({ errorCode: 0, baseOffset: 0 });
      const f = await c.request('FETCH', 12, fetch('void', 0, { maxWaitMs: 5000 }));
      expect(f.body.responses[0]?.partitions[0]).toMatchObject({ errorCode: KAFKA_ERROR_CODES.KAFKA_STORAGE_ERROR, highWatermark: 2 });
      c.close();
    } finally {
      await broker.stop();
    }
  });

  it('stop() answers a parked long poll at once and closes the data directory cleanly', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-broker-stop-'));
    try {
      const broker = await Broker.start({ dataDir: dir, port: 0, log: () => undefined });
      const c = await RawClient.connect(broker.port);
      await createTopic(c, 'stop');
      const parked = c.request('FETCH', 12, fetch('stop', 0, { maxWaitMs: 300_000 }));
      await new Promise((r) => setTimeout(r, 100));
      const started = Date.now();
      await broker.stop();
      expect(Date.now() - started).toBeLessThan(60_000);
      expect((await parked).body.responses[0]?.partitions[0]?.errorCode).toBe(0);
      await c.closed;
      const again = await Broker.start({ dataDir: dir, port: 0, log: () => undefined });
      expect(again.store.logManager?.hadCleanShutdown).toBe(true);
      await again.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Broker options reach the engine', () => {
  it('--max-open-segment-files sets the LogManager handle-cache budget (default 1000)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-broker-handles-'));
    try {
      const sized = await Broker.start({ dataDir: path.join(dir, 'a'), port: 0, maxOpenSegmentFiles: 64, log: () => undefined });
      const defaulted = await Broker.start({ dataDir: path.join(dir, 'b'), port: 0, log: () => undefined });
      try {
        expect(sized.logManager?.handleStats().maxOpenFiles).toBe(64);
        expect(defaulted.logManager?.handleStats().maxOpenFiles).toBe(1000);
      } finally {
        await sized.stop();
        await defaulted.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--tail-cache-bytes sets the LogManager tail-cache budget (default 256 MiB)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-broker-cache-'));
    try {
      const sized = await Broker.start({ dataDir: path.join(dir, 'a'), port: 0, tailCacheBytes: 3 * 1024 * 1024, log: () => undefined });
      const defaulted = await Broker.start({ dataDir: path.join(dir, 'b'), port: 0, log: () => undefined });
      try {
        expect(sized.logManager?.tailCacheBudget.maxBytes).toBe(3 * 1024 * 1024);
        expect(defaulted.logManager?.tailCacheBudget.maxBytes).toBe(256 * 1024 * 1024);
      } finally {
        await sized.stop();
        await defaulted.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
