// kafkajs 2.2.4 `producer({ transactionalId }).transaction()` against the
// broker (in-process, loopback): committed and aborted transactions on two
// partitions, read by a read_committed consumer group (kafkajs' default
// isolation) that must see exactly the committed records; sendOffsets inside
// a transaction moves the group's committed offsets only when the transaction
// commits; a second producer with the same transactional id fences the
// first, whose open transaction is aborted. Waits are polled with a generous
// hang guard only; no verdict depends on elapsed time.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kafka, Producer } from 'kafkajs';
import { Broker } from '@seglog/broker';
import { kafkaClient } from './lib/broker-kafkajs.js';

const TOPIC = 'kjtx';
const HANG_GUARD_MS = 120_000;

async function until(what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + HANG_GUARD_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`hang guard: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function messages(prefix: string, count: number): { key: string; value: string; partition: number }[] {
  return Array.from({ length: count }, (_, i) => ({ key: `${prefix}${i}`, value: `${prefix}${i}`, partition: i % 2 }));
}

async function transactional(kafka: Kafka, transactionalId: string): Promise<Producer> {
  const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  return producer;
}

describe('kafkajs transactions', () => {
  let dir: string;
  let broker: Broker;
  let kafka: Kafka;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-kafkajs-txn-'));
    broker = await Broker.start({
      dataDir: path.join(dir, 'data'), port: 0, offsetsTopicPartitions: 4, transactionStateTopicPartitions: 4,
      groupInitialRebalanceDelayMs: 100, log: () => undefined,
    });
    await broker.groupsReady();
    kafka = kafkaClient(broker.port, 'kafkajs-txn');
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2 }] });
    await admin.disconnect();
  });

  afterAll(async () => {
    const seen = [...broker.stats.versionsSeen].map(([api, v]) => `${api} v${[...v].sort((a, b) => a - b).join(',')}`).join('; ');
    process.stdout.write(`kafkajs transaction() request versions seen: ${seen}\n`);
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a read_committed consumer sees exactly the committed records', async () => {
    const producer = await transactional(kafka, 'kj-tx-1');
    const committed = [...messages('c', 10), ...messages('d', 10)];
    let txn = await producer.transaction();
    await txn.send({ topic: TOPIC, messages: messages('c', 10) });
    await txn.commit();
    txn = await producer.transaction();
    await txn.send({ topic: TOPIC, messages: messages('a', 10) });
    await txn.abort();
    txn = await producer.transaction();
    await txn.send({ topic: TOPIC, messages: messages('d', 10) });
    await txn.commit();
    // An open transaction after the last commit: read_committed stops at its first offset (the LSO).
    const open = await producer.transaction();
    await open.send({ topic: TOPIC, messages: messages('o', 4) });

    const consumer = kafka.consumer({ groupId: 'kj-txn-reader', maxWaitTimeInMs: 200 });
    const values: string[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    await consumer.run({ eachMessage: ({ message }) => Promise.resolve(void values.push(message.value?.toString() ?? '')) });
    // d9 (partition 1) and d8 (partition 0) come after every aborted record in their partitions.
    await until('every committed record consumed', () => values.includes('d9') && values.includes('d8'));
    expect([...values].sort()).toEqual(committed.map((m) => m.value).sort());
    await open.commit();
    await until('the last transaction once committed', () => values.filter((v) => v.startsWith('o')).length === 4);
    expect(values.filter((v) => v.startsWith('a'))).toEqual([]);
    await consumer.disconnect();
    await producer.disconnect();
  });

  it('sendOffsets commits the group offsets with the transaction, not on abort', async () => {
    const group = 'kj-ctp';
    const producer = await transactional(kafka, 'kj-tx-2');
    const admin = kafka.admin();
    await admin.connect();
    const offsets = async (): Promise<string[]> => {
      const rows = await admin.fetchOffsets({ groupId: group, topics: [TOPIC] });
      return [...(rows[0]?.partitions ?? [])].sort((x, y) => x.partition - y.partition).map((p) => p.offset);
    };
    let txn = await producer.transaction();
    await txn.send({ topic: `${TOPIC}`, messages: messages('t', 2) });
    await txn.sendOffsets({ consumerGroupId: group, topics: [{ topic: TOPIC, partitions: [{ partition: 0, offset: '5' }, { partition: 1, offset: '7' }] }] });
    expect(await offsets()).toEqual(['-1', '-1']);
    await txn.commit();
    expect(await offsets()).toEqual(['5', '7']);
    txn = await producer.transaction();
    await txn.sendOffsets({ consumerGroupId: group, topics: [{ topic: TOPIC, partitions: [{ partition: 0, offset: '9' }] }] });
    await txn.abort();
    expect(await offsets()).toEqual(['5', '7']);
    await admin.disconnect();
    await producer.disconnect();
  });

  it('a second producer with the same transactional id fences the first and aborts its transaction', async () => {
    const first = await transactional(kafka, 'kj-tx-3');
    const txn = await first.transaction();
    await txn.send({ topic: TOPIC, messages: messages('f', 2) });
    const second = await transactional(kafka, 'kj-tx-3');
    // kafkajs sends InitProducerId at the first transaction(): the epoch bump fences `first` and aborts its transaction.
    const next = await second.transaction();
    await expect(txn.commit()).rejects.toThrow(/fenced|epoch/i);
    await next.send({ topic: TOPIC, messages: messages('s', 2) });
    await next.commit();

    const consumer = kafka.consumer({ groupId: 'kj-txn-fence-reader', maxWaitTimeInMs: 200 });
    const values: string[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    await consumer.run({ eachMessage: ({ message }) => Promise.resolve(void values.push(message.value?.toString() ?? '')) });
    await until('the second producer\'s records', () => values.includes('s0') && values.includes('s1'));
    expect(values.filter((v) => v.startsWith('f'))).toEqual([]);
    await consumer.disconnect();
    await first.disconnect().catch(() => undefined);
    await second.disconnect();
  });
});
