// Request builders and response readers shared by the broker tests that run
// a real Broker over loopback (raw-client.ts speaks the protocol).

import { expect } from 'vitest';
import { Codec, RecordBatch, RecordCursor, buildBatch } from '@seglog/records';
import type { FetchRequest, ProduceRequest } from '@seglog/protocol';
import type { RawClient } from './raw-client.js';

export function batch(values: readonly string[], timestamp0: number = Date.now()): Buffer {
  return buildBatch({ records: values.map((v, i) => ({ value: Buffer.from(v), timestamp: timestamp0 + i })), compression: Codec.none as 0 });
}

export function produce(topic: string, records: Buffer, acks = 1, partition = 0): ProduceRequest {
  return { transactionalId: null, acks, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] };
}

export function fetch(topic: string, fetchOffset: number, options: Partial<FetchRequest> = {}, partition = 0): FetchRequest {
  return {
    clusterId: null, replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [], rackId: '', ...options,
  };
}

/** Values of the records in a fetch response's raw record bytes. */
export function valuesOf(records: unknown): string[] {
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

/** CreateTopics v4 of one topic; returns the topic's error code. */
export async function createTopicCode(client: RawClient, name: string, partitions = 1): Promise<number | undefined> {
  const r = await client.request('CREATE_TOPICS', 4, {
    topics: [{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false,
  });
  return r.body.topics[0]?.errorCode;
}

export async function createTopic(client: RawClient, name: string, partitions = 1): Promise<void> {
  expect(await createTopicCode(client, name, partitions)).toBe(0);
}

/** Every record value of partition 0 of `topic`, fetching from offset 0 until the high watermark. */
export async function fetchAllValues(client: RawClient, topic: string): Promise<string[]> {
  const values: string[] = [];
  for (let guard = 0; guard < 10_000; guard++) {
    const r = await client.request('FETCH', 12, fetch(topic, values.length));
    const p = r.body.responses[0]?.partitions[0];
    expect(p?.errorCode).toBe(0);
    const got = valuesOf(p?.records);
    values.push(...got);
    if (got.length === 0 || values.length >= (p?.highWatermark ?? 0)) return values;
  }
  throw new Error('fetchAllValues: no progress');
}
