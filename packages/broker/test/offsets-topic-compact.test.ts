// __consumer_offsets made by an older broker with cleanup.policy=delete
// (explicit, or no override under a delete broker default) is switched to
// compact when OffsetsTopic opens it (issue 20): the override is persisted in
// the topic config file (a reopen without OffsetsTopic sees it), the other
// overrides are kept, every partition's log is compacted, the records written
// before the switch still load, and the switch is logged once (a second open
// has nothing to do). A new topic is created compacted, no switch logged.

import { describe, expect, it } from 'vitest';
import { BROKER_DEFAULTS } from '../src/index.js';
import { SimIo } from '@seglog/io';
import { LogConfig } from '@seglog/log';
import { buildBatch } from '@seglog/records';
import type { Log } from '@seglog/log';
import type { BrokerContext } from '../src/internal/broker-context.js';
import { FetchWaiters } from '../src/internal/fetch-waiters.js';
import type { GroupCoordinator } from '../src/internal/group/group-coordinator.js';
import type { GroupRecord } from '../src/internal/group/group-persistence.js';
import { encodeGroupRecord } from '../src/internal/group/group-records.js';
import { OFFSETS_TOPIC, OffsetsTopic, offsetsPartitionFor } from '../src/internal/group/offsets-topic.js';
import { TopicStore } from '../src/internal/topic-store.js';
import type { TransactionCoordinator } from '../src/internal/txn/transaction-coordinator.js';

const DIR = '/data';

function openStore(io: SimIo): Promise<TopicStore> {
  return TopicStore.open({ dataDir: DIR, blackhole: false, config: new LogConfig({}), tailCacheBytes: null, log: () => undefined, io });
}

function contextOf(store: TopicStore, lines: string[]): BrokerContext {
  return {
    options: { ...BROKER_DEFAULTS, ackMode: 'sync', log: (line: string) => lines.push(line) }, store, waiters: new FetchWaiters(10),
    stats: { requests: 0, appends: 0, appendedBytes: 0, fetches: 0, fetchedBytes: 0, connections: 0, connectionsTotal: 0, versionsSeen: new Map() },
    allocateProducerId: () => Promise.resolve(0), groups: null as unknown as GroupCoordinator, txns: null as unknown as TransactionCoordinator,
    advertised: { host: '127.0.0.1', port: 0 }, stopping: false, reportedDamage: new Set<string>(),
  } satisfies BrokerContext;
}

function commit(n: number): GroupRecord {
  return { kind: 'offset', groupId: `g${n}`, topic: 't', partition: 0, value: { offset: n, leaderEpoch: -1, metadata: `m${n}`, commitTimestamp: 1 } };
}

function compactedPartitions(store: TopicStore): boolean[] {
  const out: boolean[] = [];
  for (let p = 0; p < store.partitionCount(OFFSETS_TOPIC); p++) out.push((store.get(OFFSETS_TOPIC, p) as Log).config.compacted);
  return out;
}

/** An older broker's topic: created with `configs`, three commits appended as OffsetsTopic.append lays them out, closed. */
async function olderBrokerTopic(io: SimIo, configs: Readonly<Record<string, string>>): Promise<void> {
  const store = await openStore(io);
  expect(await store.createInternal(OFFSETS_TOPIC, 2, configs)).toBe(true);
  expect(store.logConfigOf(OFFSETS_TOPIC).compacted).toBe(false);
  for (let n = 0; n < 3; n++) {
    const record = commit(n);
    const log = store.get(OFFSETS_TOPIC, offsetsPartitionFor(record.groupId, 2)) as Log;
    const result = await log.appendAsLeader(buildBatch({ records: [{ ...encodeGroupRecord(record), timestamp: 1 }] }), { leaderEpoch: 0 });
    await log.durable(result.lastOffset);
  }
  await store.close();
}

describe('__consumer_offsets created with cleanup.policy=delete', () => {
  for (const [name, configs] of [
    ['an explicit delete override', { 'cleanup.policy': 'delete', 'segment.bytes': String(1024 * 1024) }],
    ['no override (the broker default, delete)', {}],
  ] as const) {
    it(`${name}: switched to compact at open, persisted, other overrides kept, records kept, logged once`, async () => {
      const io = new SimIo({ seed: 1 });
      await olderBrokerTopic(io, configs);

      const store = await openStore(io);
      expect(store.logConfigOf(OFFSETS_TOPIC).compacted).toBe(false);
      expect(compactedPartitions(store)).toEqual([false, false]);
      const lines: string[] = [];
      const topic = await OffsetsTopic.open(contextOf(store, lines), 2);
      expect(store.configsOf(OFFSETS_TOPIC)).toEqual({ ...configs, 'cleanup.policy': 'compact' });
      expect(store.logConfigOf(OFFSETS_TOPIC).compacted).toBe(true);
      expect(compactedPartitions(store)).toEqual([true, true]);
      expect(lines.filter((l) => l.includes('switched to compact'))).toHaveLength(1);
      expect(lines[0]).toContain('cleanup.policy=delete');
      const loaded = await topic.load();
      expect(loaded.map((r) => (r.kind === 'offset' ? r.value?.offset : -1)).sort()).toEqual([0, 1, 2]);
      await topic.append(commit(3).groupId, [commit(3)]);
      await store.close();

      // Persisted: the store alone opens it compacted, and a second OffsetsTopic.open has nothing to do.
      const again = await openStore(io);
      expect(again.logConfigOf(OFFSETS_TOPIC).compacted).toBe(true);
      expect(compactedPartitions(again)).toEqual([true, true]);
      const quiet: string[] = [];
      const reopened = await OffsetsTopic.open(contextOf(again, quiet), 2);
      expect(quiet).toEqual([]);
      expect((await reopened.load()).length).toBe(4);
      await again.close();
      expect(io.openHandles()).toEqual([]);
    });
  }

  it('a new __consumer_offsets is created compacted; nothing is logged', async () => {
    const io = new SimIo({ seed: 2 });
    const store = await openStore(io);
    const lines: string[] = [];
    await OffsetsTopic.open(contextOf(store, lines), 3);
    expect(compactedPartitions(store)).toEqual([true, true, true]);
    expect(store.configsOf(OFFSETS_TOPIC)['cleanup.policy']).toBe('compact');
    expect(lines).toEqual([]);
    await store.close();
  });
});
