// Real clients against the broker's admin APIs (issue 21): kafkajs 2.2.4's
// admin client creates a topic with configs, describes and alters configs
// (the value is still there after a broker restart on the same directory),
// grows and deletes topics and describes the cluster; kcat (librdkafka) `-L`
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

describe.skipIf(!hasKcat)('kcat (librdkafka) metadata after a deletion', () => {
  it('kcat -L lists a topic before its deletion and not after', async () => {
    await withAdmin((admin) => admin.createTopics({ topics: [{ topic: 'listed', numPartitions: 3 }, { topic: 'kept', numPartitions: 1 }] }));
    const list = async (): Promise<string[]> => {
      const { stdout } = await run('kcat', ['-b', `127.0.0.1:${broker.port}`, '-L', '-J'], { timeout: 60_000 });
      // __consumer_offsets (the group coordinator's internal topic) is not one of this test's topics.
      return (JSON.parse(stdout) as { topics: { topic: string }[] }).topics.map((t) => t.topic).filter((t) => t !== '__consumer_offsets').sort();
    };
    expect(await list()).toEqual(['kept', 'listed']);
    await withAdmin((admin) => admin.deleteTopics({ topics: ['listed'] }));
    expect(await list()).toEqual(['kept']);
  });
});
