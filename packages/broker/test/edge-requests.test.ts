// Issue 23 item 10: requests at the edges of Kafka's rules are answered as
// Kafka answers them, on a connection that stays open:
// - Fetch at offset 2^62 → OFFSET_OUT_OF_RANGE; ListOffsets at timestamp
//   2^60 (past every record) → offset -1, timestamp -1, no error (Kafka's
//   answer when no record has a timestamp at or after the target). Before,
//   the int64 decoder refused them (UNSAFE_INTEGER) and closed the connection.

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Broker, KAFKA_ERROR_CODES } from '../src/index.js';
import { batch, createTopic, fetch, produce } from './broker-helpers.js';
import { RawClient } from './raw-client.js';

/** A marker int64 that the encoder accepts; replaced in the frame by the unsafe value to send. */
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
});
