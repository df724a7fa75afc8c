// Real clients against the broker's admin APIs (issue 21): kafkajs 2.2.4's
// admin client creates a topic with configs, describes and alters configs
// (the value is still there after a broker restart on the same directory),
// grows and deletes topics and describes the cluster, alters a topic to
// cleanup.policy=compact and reads it back compacted; kcat (librdkafka) `-L`
// sees a deleted topic gone. Broker in-process on a random loopback port.
// kcat has no admin commands; its part is skipped only when kcat is not
// installed (.ci/run installs it).

import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigResourceTypes } from 'kafkajs';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Broker } from '@seglog/broker';
import { splitBatches } from '@seglog/records';
import { kafkaClient } from './lib/broker-kafkajs.js';

const run = promisify(execFile);
const hasKcat = spawnSync('kcat', ['-V'], { encoding: 'utf8' }).status === 0;

let dir: string;
let broker: Broker;
/** Request versions the clients sent, over every broker of the file (printed at the end). */
const versionsSeen = new Map<string, Set<number>>();

async function stopBroker(): Promise<void> {
  for (const [api, versions] of broker.stats.versionsSeen) {
    const set = versionsSeen.get(api) ?? new Set<number>();
    for (const v of versions) set.add(v);
    versionsSeen.set(api, set);
  }
  await broker.stop();
}

async function start(): Promise<void> {
  broker = await Broker.start({ dataDir: dir, port: 0, autoCreatePartitions: 0, log: () => undefined });
}

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-admin-clients-'));
  await start();
});

afterAll(() => {
  const seen = [...versionsSeen].map(([api, v]) => `${api} v${[...v].sort((a, b) => a - b).join(',')}`).join('; ');
  process.stdout.write(`admin clients (kafkajs 2.2.4, kcat) request versions seen: ${seen}\n`);
});

afterEach(async () => {
  await stopBroker();
  rmSync(dir, { recursive: true, force: true });
});

async function withAdmin<T>(body: (admin: ReturnType<ReturnType<typeof kafkaClient>['admin']>) => Promise<T>): Promise<T> {
  const admin = kafkaClient(broker.port).admin();
  await admin.connect();
  try {
    return await body(admin);
  } finally {
    await admin.disconnect();
  }
}

async function topicConfig(topic: string, name: string): Promise<{ value: string; isDefault: boolean } | undefined> {
  return withAdmin(async (admin) => {
    const described = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: [name] }], includeSynonyms: false });
    const entry = described.resources[0]?.configEntries.find((e) => e.configName === name);
    return entry === undefined ? undefined : { value: entry.configValue, isDefault: entry.isDefault };
  });
}

describe('kafkajs 2.2.4 admin', () => {
  it('createTopics with configs, describeConfigs, alterConfigs; the altered value survives a broker restart', async () => {
    await withAdmin(async (admin) => {
      expect(await admin.createTopics({ topics: [{ topic: 'cfg', numPartitions: 2, configEntries: [{ name: 'retention.ms', value: '86400000' }] }] })).toBe(true);
    });
    expect(await topicConfig('cfg', 'retention.ms')).toEqual({ value: '86400000', isDefault: false });
    expect(await topicConfig('cfg', 'segment.bytes')).toEqual({ value: '1073741824', isDefault: true });
    await withAdmin(async (admin) => {
      await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'cfg', configEntries: [
        { name: 'cleanup.policy', value: 'compact' }, { name: 'max.message.bytes', value: '65536' },
      ] }] });
    });
    expect(await topicConfig('cfg', 'cleanup.policy')).toEqual({ value: 'compact', isDefault: false });
    expect(broker.logManager?.getLog('cfg', 1)?.config.maxMessageBytes).toBe(65536);
    await stopBroker();
    await start();
    expect(await topicConfig('cfg', 'cleanup.policy')).toEqual({ value: 'compact', isDefault: false });
    expect(await topicConfig('cfg', 'max.message.bytes')).toEqual({ value: '65536', isDefault: false });
    // alterConfigs replaces the overrides: retention.ms was not listed, so it is back at its default.
    expect(await topicConfig('cfg', 'retention.ms')).toEqual({ value: '604800000', isDefault: true });
    expect(broker.logManager?.getLog('cfg', 0)?.config.maxMessageBytes).toBe(65536);
  });

  it('alterConfigs with a bad value is refused with INVALID_CONFIG and changes nothing', async () => {
    await withAdmin(async (admin) => {
      await admin.createTopics({ topics: [{ topic: 'bad', numPartitions: 1 }] });
      await expect(admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'bad', configEntries: [{ name: 'retention.ms', value: 'soon' }] }] }))
        .rejects.toMatchObject({ type: 'INVALID_CONFIG' });
    });
    expect(await topicConfig('bad', 'retention.ms')).toEqual({ value: '604800000', isDefault: true });
  });

  it('describeConfigs of the broker lists its settings read-only; describeCluster names node 0', async () => {
    await withAdmin(async (admin) => {
      const described = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.BROKER, name: '0' }], includeSynonyms: false });
      const dirs = described.resources[0]?.configEntries.find((e) => e.configName === 'log.dirs');
      expect(dirs).toMatchObject({ configValue: dir, readOnly: true });
      const cluster = await admin.describeCluster();
      expect(cluster).toMatchObject({ controller: 0, clusterId: 'seglog-single-node', brokers: [{ nodeId: 0, host: '127.0.0.1', port: broker.port }] });
    });
  });

  it('createPartitions grows a topic and deleteTopics removes it through the engine', async () => {
    await withAdmin(async (admin) => {
      await admin.createTopics({ topics: [{ topic: 'grow', numPartitions: 1 }, { topic: 'stay', numPartitions: 1 }] });
      await admin.createPartitions({ topicPartitions: [{ topic: 'grow', count: 4 }] });
      const meta = await admin.fetchTopicMetadata({ topics: ['grow'] });
      expect(meta.topics[0]?.partitions.map((p) => p.partitionId).sort()).toEqual([0, 1, 2, 3]);
      await expect(admin.createPartitions({ topicPartitions: [{ topic: 'grow', count: 2 }] })).rejects.toMatchObject({ type: 'INVALID_PARTITIONS' });
      expect(readdirSync(dir).filter((n) => n.startsWith('grow-')).length).toBe(4);
      await admin.deleteTopics({ topics: ['grow'] });
      expect((await admin.listTopics()).sort()).toEqual(['stay']);
      expect(readdirSync(dir).filter((n) => n.startsWith('grow'))).toEqual([]);
    });
  });
});

describe('compaction through the admin API (kafkajs)', () => {
  it('alterConfigs cleanup.policy=compact: duplicate keys over several segments are compacted to the latest per key', async () => {
    await stopBroker();
    broker = await Broker.start({ dataDir: dir, port: 0, autoCreatePartitions: 0, logCleanerBackoffMs: 10, log: () => undefined });
    await withAdmin(async (admin) => {
      await admin.createTopics({ topics: [{ topic: 'table', numPartitions: 1 }] });
      await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'table', configEntries: [
        { name: 'cleanup.policy', value: 'compact' }, { name: 'segment.bytes', value: '1024' }, { name: 'min.cleanable.dirty.ratio', value: '0.01' },
      ] }] });
    });
    expect(broker.logManager?.getLog('table', 0)?.config.compacted).toBe(true);
    const kafka = kafkaClient(broker.port);
    const producer = kafka.producer();
    await producer.connect();
    const rounds = 12;
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < 5; k++) await producer.send({ topic: 'table', messages: [{ key: `key-${k}`, value: `round-${round}-${'x'.repeat(40)}` }] });
    }
    await producer.disconnect();
    const log = broker.logManager?.getLog('table', 0);
    expect(log?.numberOfSegments).toBeGreaterThan(3);
    // The background cleaner (10 ms backoff) runs on its own: wait (1000 x 10 ms, a hang guard) until its passes
    // have cleaned every sealed segment written above. A pass that started while the producer was still
    // sending (its compute worker starting meanwhile) covers only the segments sealed by then.
    const cleanedAll = (): boolean => {
      const s = broker!.logManager!.cleaner.stateOf(log!);
      return s.removedRecords > 0 && s.dirtyBytes === 0;
    };
    for (let i = 0; i < 1000 && !cleanedAll(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(cleanedAll()).toBe(true);
    const state = broker.logManager?.cleaner.stateOf(log!);
    expect(state?.removedRecords).toBeGreaterThan(0);
    // Read back by the engine (every batch CRC-checked by its reader) and, where installed, by kcat: librdkafka
    // steps over the 61-byte empty batches the cleaner leaves (a group's last batch, a producer's last batch),
    // as the Java client does. kafkajs 2.2.4 cannot: a fetch answer holding only record-less batches gives it no
    // record to learn the next offset from, and it fetches the same offset again (Kafka's own cleaner leaves
    // such batches too; see the report of issue 20).
    await broker.logManager?.cleaner.stop(); // no further pass between the two reads
    const end = log!.logEndOffset;
    const messages: { offset: number; key: string; value: string }[] = [];
    let next = log!.logStartOffset;
    let recordlessAnswers = 0;
    while (next < end) {
      const plan = await log!.read(next, 1 << 20);
      const bytes = await plan.toBuffer();
      await plan.release();
      const batches = splitBatches(bytes);
      if (batches.length > 0 && batches.every((b) => b.recordsCount === 0)) recordlessAnswers++;
      for (const batch of batches) {
        expect(batch.isValid()).toBe(true);
        for (const r of batch.toRecords()) messages.push({ offset: r.offset, key: r.key?.toString() ?? '', value: r.value?.toString() ?? '' });
      }
      next = plan.nextOffset;
    }
    // Some engine reads (without skipRecordless) answered only record-less batches: a segment the cleaner emptied.
    expect(recordlessAnswers).toBeGreaterThan(0);
    if (hasKcat) {
      const { stdout } = await run('kcat', ['-b', `127.0.0.1:${broker.port}`, '-C', '-t', 'table', '-p', '0', '-o', 'beginning', '-e', '-q', '-f', '%o %k %s\\n']);
      const viaKcat = stdout.trim().split('\n').map((line) => { const [o, k, v] = line.split(' '); return { offset: Number(o), key: k ?? '', value: v ?? '' }; });
      expect(viaKcat).toEqual(messages);
    }
    // A kafkajs consumer from the beginning gets the same records: the broker's fetch passes over segments
    // holding only record-less batches (skipRecordless), where kafkajs 2.2.4 would fetch one offset forever.
    const viaKafkajs: { offset: number; key: string; value: string }[] = [];
    const reader = kafka.consumer({ groupId: 'compacted-reader' });
    await reader.connect();
    await reader.subscribe({ topic: 'table', fromBeginning: true });
    await reader.run({ eachMessage: async ({ message }) => {
      viaKafkajs.push({ offset: Number(message.offset), key: message.key?.toString() ?? '', value: message.value?.toString() ?? '' });
    } });
    // Bounded by turns, not time: 6000 × 10 ms is a hang guard, the records arrive in well under a second.
    for (let i = 0; i < 6000 && viaKafkajs.length < messages.length; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    await reader.disconnect();
    expect(viaKafkajs).toEqual(messages);
    expect(messages.length).toBeLessThan(rounds * 5);
    const latest = new Map<string, string>();
    let previous = -1;
    for (const m of messages) {
      expect(m.offset).toBeGreaterThan(previous);
      previous = m.offset;
      latest.set(m.key, m.value);
    }
    for (let k = 0; k < 5; k++) expect(latest.get(`key-${k}`)).toBe(`round-${rounds - 1}-${'x'.repeat(40)}`);
    expect(await topicConfig('table', 'cleanup.policy')).toEqual({ value: 'compact', isDefault: false });
    // A kafkajs consumer group commits to __consumer_offsets, which the broker creates compacted (Kafka's configs).
    const consumer = kafka.consumer({ groupId: 'compacted-offsets' });
    await consumer.connect();
    await consumer.subscribe({ topic: 'table', fromBeginning: false });
    await consumer.run({ eachMessage: async () => undefined });
    await consumer.disconnect();
    const offsetsLogs = broker.logManager?.logs().filter((l) => l.topic === '__consumer_offsets') ?? [];
    expect(offsetsLogs.length).toBeGreaterThan(0);
    for (const offsetsLog of offsetsLogs) {
      expect(offsetsLog.config.cleanupPolicy).toBe('compact');
      expect(offsetsLog.config.segmentBytes).toBe(100 * 1024 * 1024);
    }
    // So is __transaction_state (the transaction coordinator's topic).
    const txnLogs = broker.logManager?.logs().filter((l) => l.topic === '__transaction_state') ?? [];
    expect(txnLogs.length).toBeGreaterThan(0);
    for (const txnLog of txnLogs) {
      expect(txnLog.config.cleanupPolicy).toBe('compact');
      expect(txnLog.config.segmentBytes).toBe(100 * 1024 * 1024);
    }
  });
});

describe.skipIf(!hasKcat)('kcat (librdkafka) metadata after a deletion', () => {
  it('kcat -L lists a topic before its deletion and not after', async () => {
    await withAdmin((admin) => admin.createTopics({ topics: [{ topic: 'listed', numPartitions: 3 }, { topic: 'kept', numPartitions: 1 }] }));
    const list = async (): Promise<string[]> => {
      const { stdout } = await run('kcat', ['-b', `127.0.0.1:${broker.port}`, '-L', '-J'], { timeout: 60_000 });
      // __consumer_offsets and __transaction_state (the coordinators' internal topics) are not this test's topics.
      return (JSON.parse(stdout) as { topics: { topic: string }[] }).topics.map((t) => t.topic).filter((t) => !t.startsWith('__')).sort();
    };
    expect(await list()).toEqual(['kept', 'listed']);
    await withAdmin((admin) => admin.deleteTopics({ topics: ['listed'] }));
    expect(await list()).toEqual(['kept']);
  });
});
