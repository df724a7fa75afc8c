// kafkajs 2.2.4 `consumer()` against the broker (in-process, loopback): two
// consumers of one group with eachBatch share a 4-partition topic (each is
// assigned partitions, together all four, disjoint), consume every record
// and commit; after a broker restart a consumer of the same group reads
// exactly the records produced since. Waits are polled with a generous hang
// guard only; no verdict depends on elapsed time.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Consumer, Kafka } from 'kafkajs';
import { Broker } from '@seglog/broker';
import { kafkaClient } from './lib/broker-kafkajs.js';

const TOPIC = 'kj4';
const GROUP = 'kafkajs-group';
const HANG_GUARD_MS = 120_000;

async function until(what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + HANG_GUARD_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`hang guard: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface Member {
  readonly consumer: Consumer;
  readonly values: string[];
  /** Partitions of the latest GROUP_JOIN. */
  partitions: number[];
}

async function startMember(kafka: Kafka): Promise<Member> {
  const consumer = kafka.consumer({ groupId: GROUP, sessionTimeout: 10_000, heartbeatInterval: 300, maxWaitTimeInMs: 300 });
  const member: Member = { consumer, values: [], partitions: [] };
  consumer.on(consumer.events.GROUP_JOIN, (event) => {
    member.partitions = [...(event.payload.memberAssignment[TOPIC] ?? [])].sort((a, b) => a - b);
  });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
      for (const message of batch.messages) {
        member.values.push(message.value?.toString() ?? '');
        resolveOffset(message.offset);
      }
      await heartbeat();
    },
  });
  return member;
}

async function produce(kafka: Kafka, values: readonly string[]): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: TOPIC, messages: values.map((value) => ({ key: value, value })) });
  await producer.disconnect();
}

describe('kafkajs consumer groups', () => {
  let dir: string;
  let broker: Broker;

  const startBroker = async (): Promise<Kafka> => {
    broker = await Broker.start({ dataDir: path.join(dir, 'data'), port: 0, autoCreatePartitions: 4, offsetsTopicPartitions: 4, groupInitialRebalanceDelayMs: 300, log: () => undefined });
    return kafkaClient(broker.port, 'kafkajs-groups');
  };

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-kafkajs-groups-'));
  });

  afterAll(async () => {
    const seen = [...broker.stats.versionsSeen].map(([api, v]) => `${api} v${[...v].sort((a, b) => a - b).join(',')}`).join('; ');
    process.stdout.write(`kafkajs consumer() request versions seen (last broker run): ${seen}\n`);
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('two consumers with eachBatch split the partitions, commit, and a restart resumes after the commits', async () => {
    let kafka = await startBroker();
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 4 }] });
    const first = Array.from({ length: 400 }, (_, i) => `a${i}`);
    await produce(kafka, first);

    const one = await startMember(kafka);
    const two = await startMember(kafka);
    await until('both consumers assigned, all partitions, disjoint', () => one.partitions.length > 0 && two.partitions.length > 0
      && [...one.partitions, ...two.partitions].sort().join(',') === '0,1,2,3');
    const second = Array.from({ length: 40 }, (_, i) => `b${i}`);
    await produce(kafka, second);
    const all = [...first, ...second];
    await until('every record consumed', () => new Set([...one.values, ...two.values]).size === all.length);
    expect([...new Set([...one.values, ...two.values])].sort()).toEqual([...all].sort());
    // Both committed what they consumed (kafkajs commits after each batch and on disconnect): the partitions' ends.
    await one.consumer.disconnect();
    await two.consumer.disconnect();
    const committed = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
    const ends = await admin.fetchTopicOffsets(TOPIC);
    const byPartition = (rows: readonly { partition: number; offset: string }[]): string[] => [...rows].sort((x, y) => x.partition - y.partition).map((r) => r.offset);
    expect(byPartition(committed[0]?.partitions ?? [])).toEqual(byPartition(ends));
    await admin.disconnect();

    await broker.stop();
    kafka = await startBroker();
    const third = Array.from({ length: 20 }, (_, i) => `c${i}`);
    await produce(kafka, third);
    const resumed = await startMember(kafka);
    await until('the resumed consumer read 20 records', () => resumed.values.length >= third.length);
    expect([...resumed.values].sort()).toEqual([...third].sort());
    await resumed.consumer.disconnect();
  });
});
