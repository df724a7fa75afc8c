// The admin APIs over a real Broker on loopback (raw-client.ts): DeleteTopics,
// CreatePartitions, DescribeCluster, DescribeConfigs, AlterConfigs and
// IncrementalAlterConfigs, their error paths with Kafka's codes, that
// deletion goes through the engine (directories gone, a parked fetch and a
// racing produce answer UNKNOWN_TOPIC_OR_PARTITION), and that configs reach
// the partitions' LogConfig and survive a restart.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DescribeConfigsResourceResult } from '@seglog/protocol';
import { Broker, KAFKA_ERROR_CODES as E } from '../src/index.js';
import { TOPIC_CONFIG_FILE } from '../src/internal/topic-configs/topic-config-file.js';
import { batch, createTopic, fetch, produce, valuesOf } from './broker-helpers.js';
import { RawClient } from './raw-client.js';

const TOPIC = 2;
const BROKER = 4;
const SET = 0;
const DELETE = 1;
const APPEND = 2;
const SUBTRACT = 3;

let dir: string;
let broker: Broker;
let client: RawClient;

async function start(): Promise<void> {
  broker = await Broker.start({ dataDir: dir, port: 0, autoCreatePartitions: 0, log: () => undefined });
  client = await RawClient.connect(broker.port);
}

async function restart(): Promise<void> {
  client.close();
  await broker.stop();
  await start();
}

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-admin-'));
  await start();
});

afterEach(async () => {
  client.close();
  await broker.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function deleteTopics(names: string[], version = 4): Promise<[string | null, number][]> {
  const r = await client.request('DELETE_TOPICS', version, { topics: [], topicNames: names, timeoutMs: 1000 });
  return r.body.responses.map((t) => [t.name, t.errorCode]);
}

async function metadataTopics(): Promise<string[]> {
  const r = await client.request('METADATA', 12, { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });
  // The group coordinator's internal __consumer_offsets is listed too (isInternal): not a user topic.
  return r.body.topics.filter((t) => !t.isInternal).map((t) => `${t.name ?? ''}:${t.partitions.length}`).sort();
}

async function describe1(type: number, name: string, keys: string[] | null = null, version = 4): Promise<{ errorCode: number; configs: readonly DescribeConfigsResourceResult[] }> {
  const r = await client.request('DESCRIBE_CONFIGS', version, {
    resources: [{ resourceType: type, resourceName: name, configurationKeys: keys }], includeSynonyms: true, includeDocumentation: true,
  });
  const result = r.body.results[0];
  return { errorCode: result?.errorCode ?? -999, configs: result?.configs ?? [] };
}

async function configValue(topic: string, name: string): Promise<[string | null, number] | undefined> {
  const entry = (await describe1(TOPIC, topic, [name])).configs.find((c) => c.name === name);
  return entry === undefined ? undefined : [entry.value, entry.configSource];
}

async function alter(topic: string, configs: Record<string, string | null>, validateOnly = false, type = TOPIC): Promise<number> {
  const r = await client.request('ALTER_CONFIGS', 2, {
    resources: [{ resourceType: type, resourceName: topic, configs: Object.entries(configs).map(([name, value]) => ({ name, value })) }], validateOnly,
  });
  return r.body.responses[0]?.errorCode ?? -999;
}

async function incremental(topic: string, ops: [string, number, string | null][], validateOnly = false): Promise<number> {
  const r = await client.request('INCREMENTAL_ALTER_CONFIGS', 1, {
    resources: [{ resourceType: TOPIC, resourceName: topic, configs: ops.map(([name, configOperation, value]) => ({ name, configOperation, value })) }],
    validateOnly,
  });
  return r.body.responses[0]?.errorCode ?? -999;
}

async function produceCode(topic: string, values: string[], partition = 0): Promise<number | undefined> {
  const r = await client.request('PRODUCE', 9, produce(topic, batch(values), 1, partition));
  return r.body.responses[0]?.partitionResponses[0]?.errorCode;
}

describe('DeleteTopics', () => {
  it('deletes the partitions through the engine: directories gone, Metadata and Fetch see no topic, the name can be reused', async () => {
    await createTopic(client, 'gone', 3);
    expect(await produceCode('gone', ['a', 'b'])).toBe(0);
    expect(readdirSync(dir).filter((n) => n.startsWith('gone-')).sort()).toEqual(['gone-0', 'gone-1', 'gone-2']);
    expect(await deleteTopics(['gone'])).toEqual([['gone', 0]]);
    expect(readdirSync(dir).filter((n) => n.startsWith('gone'))).toEqual([]);
    expect(broker.logManager?.logs().filter((log) => log.topic === 'gone')).toEqual([]);
    expect(await metadataTopics()).toEqual([]);
    const f = await client.request('FETCH', 12, fetch('gone', 0));
    expect(f.body.responses[0]?.partitions[0]?.errorCode).toBe(E.UNKNOWN_TOPIC_OR_PARTITION);
    expect(await produceCode('gone', ['late'])).toBe(E.UNKNOWN_TOPIC_OR_PARTITION);
    await createTopic(client, 'gone', 1);
    const again = await client.request('LIST_OFFSETS', 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: 'gone', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1, maxNumOffsets: 1 }] }] });
    expect(again.body.topics[0]?.partitions[0]?.offset).toBe(0);
    await restart();
    expect(await metadataTopics()).toEqual(['gone:1']);
  });

  it('answers Kafka\'s errors: unknown, duplicate, internal, by id (v6), name and id together', async () => {
    await createTopic(client, 'keep');
    expect(await deleteTopics(['nope'])).toEqual([['nope', E.UNKNOWN_TOPIC_OR_PARTITION]]);
    expect(await deleteTopics(['keep', 'keep'])).toEqual([['keep', E.INVALID_REQUEST], ['keep', E.INVALID_REQUEST]]);
    expect(await deleteTopics(['__consumer_offsets'])).toEqual([['__consumer_offsets', E.INVALID_REQUEST]]);
    const id = '0123456789abcdef0123456789abcdef';
    const zero = '00000000000000000000000000000000';
    const r = await client.request('DELETE_TOPICS', 6, { topics: [{ name: null, topicId: id }, { name: 'keep', topicId: id }, { name: null, topicId: zero }], topicNames: [], timeoutMs: 1000 });
    expect(r.body.responses.map((t) => [t.name, t.errorCode])).toEqual([[null, E.UNKNOWN_TOPIC_ID], ['keep', E.INVALID_REQUEST], [null, E.INVALID_REQUEST]]);
    expect(await metadataTopics()).toEqual(['keep:1']);
    const v6 = await client.request('DELETE_TOPICS', 6, { topics: [{ name: 'keep', topicId: zero }], topicNames: [], timeoutMs: 1000 });
    expect(v6.body.responses.map((t) => [t.name, t.errorCode, t.errorMessage])).toEqual([['keep', 0, null]]);
    expect(await deleteTopics(['keep'], 0)).toEqual([['keep', E.UNKNOWN_TOPIC_OR_PARTITION]]);
  });

  it('a fetch parked on the topic and a produce racing the deletion answer UNKNOWN_TOPIC_OR_PARTITION, and the broker carries on', async () => {
    await createTopic(client, 'race');
    expect(await produceCode('race', ['x'])).toBe(0);
    const other = await RawClient.connect(broker.port);
    try {
      // Parked: offset 1 is the end, minBytes 1, a long wait (a hang guard only: deletion wakes it).
      const parked = other.request('FETCH', 12, fetch('race', 1, { maxWaitMs: 60_000, minBytes: 1 }));
      expect(await deleteTopics(['race'])).toEqual([['race', 0]]);
      const f = await parked;
      expect(f.body.responses[0]?.partitions[0]?.errorCode).toBe(E.UNKNOWN_TOPIC_OR_PARTITION);
      // Produces pipelined with a deletion: each is stored before it or refused after it, never a storage error.
      await createTopic(client, 'race');
      const producing = Array.from({ length: 20 }, (_, i) => client.request('PRODUCE', 9, produce('race', batch([`p${i}`]), 1)));
      const deleting = other.request('DELETE_TOPICS', 4, { topics: [], topicNames: ['race'], timeoutMs: 1000 });
      const codes = (await Promise.all(producing)).map((p) => p.body.responses[0]?.partitionResponses[0]?.errorCode);
      expect((await deleting).body.responses[0]?.errorCode).toBe(0);
      for (const code of codes) expect([0, E.UNKNOWN_TOPIC_OR_PARTITION]).toContain(code);
      await createTopic(client, 'after');
      expect(await produceCode('after', ['fine'])).toBe(0);
    } finally {
      other.close();
    }
  });

  it('a deletion a crash interrupted is finished at the next start', async () => {
    await createTopic(client, 'half', 2);
    await createTopic(client, 'whole', 1);
    client.close();
    await broker.stop();
    // As the file stands after TopicStore.delete marked the topic and before any partition went.
    writeFileSync(path.join(dir, TOPIC_CONFIG_FILE), `${JSON.stringify({ format: 'seglog-topic-configs', version: 1, topics: {
      half: { configs: {}, deleting: true }, ghost: { configs: { 'retention.ms': '5' }, deleting: false },
    } })}\n`);
    await start();
    expect(await metadataTopics()).toEqual(['whole:1']);
    expect(readdirSync(dir).filter((n) => n.startsWith('half'))).toEqual([]);
    // The entry of a topic without partitions (created by a crash before its partitions) is dropped.
    // The file written above lost __consumer_offsets' entry too, so the topic reads as an older broker's
    // (no override: the default, delete) and the group coordinator's start switched it back to compact.
    expect(JSON.parse(readFileSync(path.join(dir, TOPIC_CONFIG_FILE), 'utf8')).topics).toEqual({
      __consumer_offsets: { configs: { 'cleanup.policy': 'compact' }, deleting: false },
    });
  });
});

describe('CreatePartitions', () => {
  it('grows a topic; the new partitions take produce, keep the topic configs and survive a restart', async () => {
    const c = await client.request('CREATE_TOPICS', 5, {
      topics: [{ name: 'grow', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [{ name: 'max.message.bytes', value: '300' }] }],
      timeoutMs: 1000, validateOnly: false,
    });
    expect(c.body.topics[0]?.errorCode).toBe(0);
    const r = await client.request('CREATE_PARTITIONS', 3, { topics: [{ name: 'grow', count: 3, assignments: null }], timeoutMs: 1000, validateOnly: false });
    expect(r.body.results).toEqual([{ name: 'grow', errorCode: 0, errorMessage: null }]);
    expect(await metadataTopics()).toEqual(['grow:3']);
    expect(await produceCode('grow', ['two'], 2)).toBe(0);
    expect(broker.logManager?.getLog('grow', 2)?.config.maxMessageBytes).toBe(300);
    await restart();
    expect(await metadataTopics()).toEqual(['grow:3']);
    expect(broker.logManager?.getLog('grow', 2)?.config.maxMessageBytes).toBe(300);
  });

  it('answers Kafka\'s errors and validateOnly changes nothing', async () => {
    await createTopic(client, 'g', 2);
    const grow = async (name: string, count: number, assignments: number[][] | null = null, validateOnly = false): Promise<number | undefined> => {
      const r = await client.request('CREATE_PARTITIONS', 1, {
        topics: [{ name, count, assignments: assignments === null ? null : assignments.map((brokerIds) => ({ brokerIds })) }], timeoutMs: 1000, validateOnly,
      });
      return r.body.results[0]?.errorCode;
    };
    expect(await grow('g', 1)).toBe(E.INVALID_PARTITIONS);
    expect(await grow('g', 2)).toBe(E.INVALID_PARTITIONS);
    expect(await grow('nope', 4)).toBe(E.UNKNOWN_TOPIC_OR_PARTITION);
    expect(await grow('g', 4, [[0]])).toBe(E.INVALID_REPLICA_ASSIGNMENT);
    expect(await grow('g', 3, [[1]])).toBe(E.INVALID_REPLICA_ASSIGNMENT);
    expect(await grow('g', 5, null, true)).toBe(0);
    expect(await metadataTopics()).toEqual(['g:2']);
    expect(await grow('g', 3, [[0]])).toBe(0);
    const dup = await client.request('CREATE_PARTITIONS', 0, { topics: [{ name: 'g', count: 9, assignments: null }, { name: 'g', count: 9, assignments: null }], timeoutMs: 1, validateOnly: false });
    expect(dup.body.results.map((t) => t.errorCode)).toEqual([E.INVALID_REQUEST, E.INVALID_REQUEST]);
    expect(await metadataTopics()).toEqual(['g:3']);
  });
});

describe('DescribeCluster', () => {
  it('names the one broker as the controller; controller endpoints are refused', async () => {
    for (const version of [0, 1]) {
      const r = await client.request('DESCRIBE_CLUSTER', version, { includeClusterAuthorizedOperations: false, endpointType: 1 });
      expect(r.body).toMatchObject({ errorCode: 0, clusterId: 'seglog-single-node', controllerId: 0, brokers: [{ brokerId: 0, host: '127.0.0.1', port: broker.port, rack: null }] });
    }
    const controllers = await client.request('DESCRIBE_CLUSTER', 1, { includeClusterAuthorizedOperations: false, endpointType: 2 });
    expect(controllers.body.errorCode).toBe(E.MISMATCHED_ENDPOINT_TYPE);
    const unknown = await client.request('DESCRIBE_CLUSTER', 1, { includeClusterAuthorizedOperations: false, endpointType: 7 });
    expect(unknown.body.errorCode).toBe(E.UNSUPPORTED_ENDPOINT_TYPE);
  });
});

describe('DescribeConfigs', () => {
  it('lists a topic\'s configs with their sources, filters keys, and reports errors per resource', async () => {
    await createTopic(client, 'd');
    const all = await describe1(TOPIC, 'd');
    expect(all.errorCode).toBe(0);
    expect(all.configs.map((c) => c.name)).toContain('cleanup.policy');
    expect(all.configs.find((c) => c.name === 'retention.ms')).toMatchObject({ value: '604800000', configSource: 5, readOnly: false, configType: 5 });
    expect(all.configs.find((c) => c.name === 'min.cleanable.dirty.ratio')).toMatchObject({ value: '0.5', configType: 6 });
    expect((await describe1(TOPIC, 'd', ['segment.bytes'])).configs.map((c) => [c.name, c.value])).toEqual([['segment.bytes', '1073741824']]);
    const v0 = await describe1(TOPIC, 'd', ['retention.ms'], 0);
    expect(v0.configs[0]).toMatchObject({ isDefault: true, synonyms: [], documentation: '' });
    expect((await describe1(TOPIC, 'nope')).errorCode).toBe(E.UNKNOWN_TOPIC_OR_PARTITION);
    expect((await describe1(TOPIC, '')).errorCode).toBe(E.INVALID_TOPIC_EXCEPTION);
    expect((await describe1(99, 'x')).errorCode).toBe(E.INVALID_REQUEST);
  });

  it('answers the broker resource read-only; another broker id is INVALID_REQUEST', async () => {
    const own = await describe1(BROKER, '0');
    expect(own.errorCode).toBe(0);
    expect(own.configs.find((c) => c.name === 'log.dirs')).toMatchObject({ value: dir, readOnly: true, configSource: 4 });
    expect(own.configs.every((c) => c.readOnly)).toBe(true);
    expect((await describe1(BROKER, '')).configs).toEqual([]);
    expect((await describe1(BROKER, '3')).errorCode).toBe(E.INVALID_REQUEST);
    expect((await describe1(BROKER, 'x')).errorCode).toBe(E.INVALID_REQUEST);
    expect(await alter('0', { 'log.retention.ms': '1' }, false, BROKER)).toBe(E.INVALID_REQUEST);
  });
});

describe('AlterConfigs', () => {
  it('sets the complete overrides, applies them to the open partitions at once and after a restart', async () => {
    await createTopic(client, 'a');
    expect(await produceCode('a', ['x'.repeat(400)])).toBe(0);
    expect(await alter('a', { 'max.message.bytes': '200', 'retention.ms': '1000' })).toBe(0);
    expect(await configValue('a', 'retention.ms')).toEqual(['1000', 1]);
    expect(broker.logManager?.getLog('a', 0)?.config.maxMessageBytes).toBe(200);
    expect(await produceCode('a', ['x'.repeat(400)])).toBe(E.MESSAGE_TOO_LARGE);
    expect(await produceCode('a', ['small'])).toBe(0);
    await restart();
    expect(await configValue('a', 'max.message.bytes')).toEqual(['200', 1]);
    expect(broker.logManager?.getLog('a', 0)?.config.retentionMs).toBe(1000);
    expect(await produceCode('a', ['x'.repeat(400)])).toBe(E.MESSAGE_TOO_LARGE);
    // The legacy API replaces: retention.ms, not listed, goes back to the default.
    expect(await alter('a', { 'max.message.bytes': '100000' })).toBe(0);
    expect(await configValue('a', 'retention.ms')).toEqual(['604800000', 5]);
    expect(await produceCode('a', ['x'.repeat(400)])).toBe(0);
  });

  it('produces and a parked fetch racing a config change answer 0 or NOT_LEADER_OR_FOLLOWER, never a storage error', async () => {
    await createTopic(client, 'live');
    const other = await RawClient.connect(broker.port);
    try {
      // A fetch parked on the partition is woken by the reopen and parks again on the new log, which a produce then wakes.
      const parked = other.request('FETCH', 12, fetch('live', 0, { maxWaitMs: 60_000, minBytes: 1 }));
      expect(await incremental('live', [['segment.ms', SET, '3600000']])).toBe(0);
      expect(await produceCode('live', ['first'])).toBe(0);
      const woken = (await parked).body.responses[0]?.partitions[0];
      expect(woken?.errorCode).toBe(0);
      expect(valuesOf(woken?.records)).toEqual(['first']);
      // Produces pipelined with a reopen: stored before it, or refused as retriable after it.
      const producing = Array.from({ length: 20 }, (_, i) => client.request('PRODUCE', 9, produce('live', batch([`p${i}`]), 1)));
      const altering = other.request('INCREMENTAL_ALTER_CONFIGS', 1, {
        resources: [{ resourceType: TOPIC, resourceName: 'live', configs: [{ name: 'segment.bytes', configOperation: SET, value: '100000' }] }], validateOnly: false,
      });
      const codes = (await Promise.all(producing)).map((p) => p.body.responses[0]?.partitionResponses[0]?.errorCode);
      expect((await altering).body.responses[0]?.errorCode).toBe(0);
      for (const code of codes) expect([0, E.NOT_LEADER_OR_FOLLOWER]).toContain(code);
      const acked = codes.filter((code) => code === 0).length;
      const after = await client.request('LIST_OFFSETS', 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: 'live', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1, maxNumOffsets: 1 }] }] });
      expect(after.body.topics[0]?.partitions[0]?.offset).toBeGreaterThanOrEqual(acked + 1);
      expect(broker.logManager?.getLog('live', 0)?.config.segmentBytes).toBe(100000);
      expect(await produceCode('live', ['after'])).toBe(0);
    } finally {
      other.close();
    }
  });

  it('refuses bad values, unknown names, nulls and duplicates, changing nothing; validateOnly stores nothing', async () => {
    await createTopic(client, 'v');
    expect(await alter('v', { 'retention.ms': '-2' })).toBe(E.INVALID_CONFIG);
    expect(await alter('v', { 'segment.bytes': '13' })).toBe(E.INVALID_CONFIG);
    expect(await alter('v', { 'segment.bytes': 'big' })).toBe(E.INVALID_CONFIG);
    expect(await alter('v', { 'cleanup.policy': 'compact,shred' })).toBe(E.INVALID_CONFIG);
    expect(await alter('v', { 'min.cleanable.dirty.ratio': '1.5' })).toBe(E.INVALID_CONFIG);
    expect(await alter('v', { 'no.such.config': '1' })).toBe(E.INVALID_CONFIG);
    expect(await alter('v', { 'compression.type': 'zstd' })).toBe(E.INVALID_CONFIG);
    expect(await alter('v', { 'retention.ms': null })).toBe(E.INVALID_REQUEST);
    expect(await alter('nope', { 'retention.ms': '5' })).toBe(E.UNKNOWN_TOPIC_OR_PARTITION);
    expect(await alter('', { 'retention.ms': '5' })).toBe(E.INVALID_REQUEST);
    expect(await alter('v', { 'retention.ms': '5' }, true)).toBe(0);
    expect(await configValue('v', 'retention.ms')).toEqual(['604800000', 5]);
    const dup = await client.request('ALTER_CONFIGS', 0, {
      resources: [{ resourceType: TOPIC, resourceName: 'v', configs: [] }, { resourceType: TOPIC, resourceName: 'v', configs: [] }], validateOnly: false,
    });
    expect(dup.body.responses.map((r) => r.errorCode)).toEqual([E.INVALID_REQUEST, E.INVALID_REQUEST]);
    const keys = await client.request('ALTER_CONFIGS', 1, {
      resources: [{ resourceType: TOPIC, resourceName: 'v', configs: [{ name: 'retention.ms', value: '1' }, { name: 'retention.ms', value: '2' }] }], validateOnly: false,
    });
    expect(keys.body.responses[0]?.errorCode).toBe(E.INVALID_REQUEST);
    expect(await configValue('v', 'retention.ms')).toEqual(['604800000', 5]);
  });
});

describe('IncrementalAlterConfigs', () => {
  it('SET, DELETE, APPEND and SUBTRACT as Kafka defines them', async () => {
    await createTopic(client, 'i');
    expect(await incremental('i', [['retention.ms', SET, '7000'], ['segment.ms', SET, '60000']])).toBe(0);
    expect(await configValue('i', 'retention.ms')).toEqual(['7000', 1]);
    expect(await incremental('i', [['cleanup.policy', APPEND, 'compact']])).toBe(0);
    expect(await configValue('i', 'cleanup.policy')).toEqual(['delete,compact', 1]);
    expect(await incremental('i', [['cleanup.policy', APPEND, 'compact,delete']])).toBe(0);
    expect(await configValue('i', 'cleanup.policy')).toEqual(['delete,compact', 1]);
    expect(await incremental('i', [['cleanup.policy', SUBTRACT, 'delete']])).toBe(0);
    expect(await configValue('i', 'cleanup.policy')).toEqual(['compact', 1]);
    expect(await incremental('i', [['retention.ms', DELETE, null]])).toBe(0);
    expect(await configValue('i', 'retention.ms')).toEqual(['604800000', 5]);
    expect(await configValue('i', 'segment.ms')).toEqual(['60000', 1]);
    expect(broker.logManager?.getLog('i', 0)?.config.segmentMs).toBe(60000);
    await restart();
    expect(await configValue('i', 'cleanup.policy')).toEqual(['compact', 1]);
    expect(broker.logManager?.getLog('i', 0)?.config.segmentMs).toBe(60000);
  });

  it('refuses APPEND to a non-list, unknown operations, nulls, conflicting compaction lags; one bad entry changes nothing', async () => {
    await createTopic(client, 'j');
    expect(await incremental('j', [['retention.ms', APPEND, '5']])).toBe(E.INVALID_CONFIG);
    expect(await incremental('j', [['retention.ms', 9, '5']])).toBe(E.INVALID_REQUEST);
    expect(await incremental('j', [['retention.ms', SET, null]])).toBe(E.INVALID_REQUEST);
    expect(await incremental('j', [['min.compaction.lag.ms', SET, '10'], ['max.compaction.lag.ms', SET, '5']])).toBe(E.INVALID_CONFIG);
    expect(await incremental('j', [['retention.ms', SET, '5'], ['segment.bytes', SET, '1']])).toBe(E.INVALID_CONFIG);
    expect(await incremental('nope', [['retention.ms', SET, '5']])).toBe(E.UNKNOWN_TOPIC_OR_PARTITION);
    expect(await incremental('j', [['retention.ms', SET, '5']], true)).toBe(0);
    expect(await configValue('j', 'retention.ms')).toEqual(['604800000', 5]);
  });
});

describe('CreateTopics configs', () => {
  it('validates, persists and applies them', async () => {
    const create = async (name: string, configs: { name: string; value: string | null }[]): Promise<number | undefined> => {
      const r = await client.request('CREATE_TOPICS', 5, { topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs }], timeoutMs: 1000, validateOnly: false });
      return r.body.topics[0]?.errorCode;
    };
    expect(await create('bad', [{ name: 'retention.ms', value: 'soon' }])).toBe(E.INVALID_CONFIG);
    expect(await create('bad', [{ name: 'unknown.thing', value: '1' }])).toBe(E.INVALID_CONFIG);
    expect(await create('bad', [{ name: 'retention.ms', value: null }])).toBe(E.INVALID_CONFIG);
    expect(await metadataTopics()).toEqual([]);
    expect(await create('ok', [{ name: 'retention.ms', value: '1234' }, { name: 'message.timestamp.type', value: 'LogAppendTime' }])).toBe(0);
    expect(broker.logManager?.getLog('ok', 0)?.config.messageTimestampType).toBe('LogAppendTime');
    await restart();
    expect(await configValue('ok', 'retention.ms')).toEqual(['1234', 1]);
    expect(broker.logManager?.getLog('ok', 0)?.config.retentionMs).toBe(1234);
  });

  it('a damaged config file refuses the start with a typed error', async () => {
    client.close();
    await broker.stop();
    writeFileSync(path.join(dir, TOPIC_CONFIG_FILE), '{"format":"seglog-topic-configs","version":1,"topics":{"t":');
    await expect(Broker.start({ dataDir: dir, port: 0, log: () => undefined })).rejects.toMatchObject({ code: 'SEGLOG_ERR_BROKER_TOPIC_CONFIGS_CORRUPT' });
    rmSync(path.join(dir, TOPIC_CONFIG_FILE));
    expect(existsSync(path.join(dir, TOPIC_CONFIG_FILE))).toBe(false);
    await start();
  });
});
