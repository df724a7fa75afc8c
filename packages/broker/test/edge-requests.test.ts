// Issue 23 item 10: requests at the edges of Kafka's rules are answered as
// Kafka answers them, on a connection that stays open:
// - Fetch at offset 2^62 → OFFSET_OUT_OF_RANGE; ListOffsets at timestamp
//   2^60 (past every record) → offset -1, timestamp -1, no error (Kafka's
//   answer when no record has a timestamp at or after the target). Before,
//   the int64 decoder refused them (UNSAFE_INTEGER) and closed the connection.
// - Topics whose names collide once '.' and '_' are unified (Kafka's
//   Topic.hasCollision, for metric names) cannot both exist:
//   INVALID_TOPIC_EXCEPTION, in CreateTopics and in Metadata auto-creation.
// - The internal topic names (__consumer_offsets, __transaction_state,
//   __cluster_metadata) cannot be created as plain topics: INVALID_REQUEST
//   (also __consumer_offsets, which the group coordinator creates itself).

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Broker, KAFKA_ERROR_CODES } from '../src/index.js';
import { batch, createTopic, createTopicCode, fetch, produce } from './broker-helpers.js';
import { RawClient } from './raw-client.js';

/** A marker int64 that the encoder accepts; replaced in the frame by the unsafe value to send. */
const ZERO_UUID = '0'.repeat(32);
const MARKER = 0x1234_5678_9abc;

/** `frame` with the 8-byte big-endian MARKER replaced by `high`·2^32 (+ 0). */
function patchInt64(frame: Buffer, high: number): Buffer {
  const marker = Buffer.alloc(8);
  marker.writeUInt32BE(Math.floor(MARKER / 2 ** 32), 0);
  marker.writeUInt32BE(MARKER % 2 ** 32, 4);
  const at = frame.indexOf(marker);
  expect(at).toBeGreaterThan(0);
  expect(frame.indexOf(marker, at + 1)).toBe(-1);
  const out = Buffer.from(frame);
  out.writeInt32BE(high, at);
  out.writeUInt32BE(0, at + 4);
  return out;
}

/** Sends `frame` (whose response is `response`) and checks the connection still answers afterwards. */
async function sendPatched<T>(client: RawClient, frame: Buffer, response: Promise<T>): Promise<T> {
  client.socket.write(frame);
  const answer = await Promise.race([response, client.closed.then(() => {
    throw new Error('the broker closed the connection instead of answering');
  })]);
  const versions = await client.request('API_VERSIONS', 3, { clientSoftwareName: 'edge', clientSoftwareVersion: '1' });
  expect(versions.body.errorCode).toBe(0);
  return answer;
}

describe('edge requests', () => {
  let dir: string;
  let broker: Broker;
  /** A connection per test, so that one closed by a failure cannot fail the next. */
  let client: RawClient;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-broker-edges-'));
    broker = await Broker.start({ dataDir: dir, port: 0, autoCreatePartitions: 1, log: () => undefined });
    const setup = await RawClient.connect(broker.port);
    await createTopic(setup, 'edges');
    await setup.request('PRODUCE', 9, produce('edges', batch(['a', 'b', 'c'])));
    setup.close();
  });

  beforeEach(async () => {
    client = await RawClient.connect(broker.port);
  });

  afterEach(() => {
    client.close();
  });

  afterAll(async () => {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('Fetch at offset 2^62 answers OFFSET_OUT_OF_RANGE and keeps the connection', async () => {
    for (const version of [4, 12]) {
      const { frame, response } = client.encode('FETCH', version, fetch('edges', MARKER));
      const r = await sendPatched(client, patchInt64(frame, 2 ** 30), response);
      expect(r.body.responses[0]?.partitions[0]).toMatchObject({ errorCode: KAFKA_ERROR_CODES.OFFSET_OUT_OF_RANGE, highWatermark: 3 });
    }
    // -2^62 too (a negative fetch offset is out of range in Kafka).
    const { frame, response } = client.encode('FETCH', 12, fetch('edges', MARKER));
    const r = await sendPatched(client, patchInt64(frame, -(2 ** 30)), response);
    expect(r.body.responses[0]?.partitions[0]?.errorCode).toBe(KAFKA_ERROR_CODES.OFFSET_OUT_OF_RANGE);
    expect(client.socket.destroyed).toBe(false);
  });

  it('ListOffsets at timestamp 2^60 answers offset -1 with no error (v1+) and no offsets (v0), keeping the connection', async () => {
    for (const version of [0, 1, 7]) {
      const { frame, response } = client.encode('LIST_OFFSETS', version, {
        replicaId: -1, isolationLevel: 0, topics: [{ name: 'edges', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: MARKER, maxNumOffsets: 1 }] }],
      });
      const r = await sendPatched(client, patchInt64(frame, 2 ** 28), response);
      const p = r.body.topics[0]?.partitions[0];
      expect(p?.errorCode, `v${version}`).toBe(0);
      if (version === 0) expect(p?.oldStyleOffsets).toEqual([]);
      else expect(p).toMatchObject({ offset: -1, timestamp: -1 });
    }
  });

  it('DeleteRecords at offset 2^62 answers OFFSET_OUT_OF_RANGE', async () => {
    const { frame, response } = client.encode('DELETE_RECORDS', 2, { topics: [{ name: 'edges', partitions: [{ partitionIndex: 0, offset: MARKER }] }], timeoutMs: 1000 });
    const r = await sendPatched(client, patchInt64(frame, 2 ** 30), response);
    expect(r.body.topics[0]?.partitions[0]?.errorCode).toBe(KAFKA_ERROR_CODES.OFFSET_OUT_OF_RANGE);
  });

  it("refuses a topic whose name collides with an existing one once '.' and '_' are unified", async () => {
    await createTopic(client, 'a.b');
    expect(await createTopicCode(client, 'a_b')).toBe(KAFKA_ERROR_CODES.INVALID_TOPIC_EXCEPTION);
    expect(await createTopicCode(client, 'a.b')).toBe(KAFKA_ERROR_CODES.TOPIC_ALREADY_EXISTS);
    await createTopic(client, 'x_.y');
    expect(await createTopicCode(client, 'x._y')).toBe(KAFKA_ERROR_CODES.INVALID_TOPIC_EXCEPTION);
    // Both in one request: the second collides with the first.
    const both = await client.request('CREATE_TOPICS', 4, {
      topics: ['p.q', 'p_q'].map((name) => ({ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] })), timeoutMs: 1000, validateOnly: false,
    });
    expect(both.body.topics.map((t) => t.errorCode)).toEqual([0, KAFKA_ERROR_CODES.INVALID_TOPIC_EXCEPTION]);
    // Metadata auto-creation follows the same rule.
    const meta = await client.request('METADATA', 12, {
      topics: [{ topicId: ZERO_UUID, name: 'a_b' }], allowAutoTopicCreation: true, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false,
    });
    expect(meta.body.topics[0]?.errorCode).toBe(KAFKA_ERROR_CODES.INVALID_TOPIC_EXCEPTION);
    expect(broker.store.topics().filter((t) => /^(a.b|x..y|p.q)$/.test(t))).toEqual(['a.b', 'p.q', 'x_.y']);
  });

  it('refuses plain creation of the internal topic names', async () => {
    for (const name of ['__consumer_offsets', '__transaction_state', '__cluster_metadata']) {
      expect(await createTopicCode(client, name), name).toBe(KAFKA_ERROR_CODES.INVALID_REQUEST);
      const meta = await client.request('METADATA', 12, {
        topics: [{ topicId: ZERO_UUID, name }], allowAutoTopicCreation: true, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false,
      });
      if (name === '__consumer_offsets' || name === '__transaction_state') {
        // The coordinators' own topics exist (created at start-up) and are listed as internal, as in Kafka.
        expect(meta.body.topics[0]?.errorCode, name).toBe(0);
        expect(meta.body.topics[0]?.isInternal, name).toBe(true);
        continue;
      }
      expect(meta.body.topics[0]?.errorCode, name).toBe(KAFKA_ERROR_CODES.INVALID_REQUEST);
      expect(broker.store.has(name)).toBe(false);
    }
    // A name that only looks like one is an ordinary topic.
    await createTopic(client, '__consumer_offsets2');
  });
});
