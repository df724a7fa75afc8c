// __consumer_offsets on SimIo: the coordinator's writes (OffsetsTopic.append
// with ackMode 'sync') are cut by a crash at a fast-check-chosen crash point
// and every crash mode (process kill, clean / chaotic / ordered power loss);
// after recovery, loading the topic must give back every record whose append
// resolved (an acknowledged commit is never lost), later values win, and
// nothing that was never written appears.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BROKER_DEFAULTS } from '../src/index.js';
import { SimIo } from '@seglog/io';
import type { CrashMode } from '@seglog/io';
import { LogConfig } from '@seglog/log';
import type { BrokerContext } from '../src/internal/broker-context.js';
import { FetchWaiters } from '../src/internal/fetch-waiters.js';
import type { GroupCoordinator } from '../src/internal/group/group-coordinator.js';
import type { GroupRecord } from '../src/internal/group/group-persistence.js';
import { OffsetsTopic } from '../src/internal/group/offsets-topic.js';
import { TopicStore } from '../src/internal/topic-store.js';
import type { TransactionCoordinator } from '../src/internal/txn/transaction-coordinator.js';

const DIR = '/data';
const WRITES = 12;
const MODES: readonly CrashMode[] = ['process', 'power-clean', 'power-chaotic', 'power-ordered'];

async function open(io: SimIo): Promise<{ store: TopicStore; topic: OffsetsTopic }> {
  const store = await TopicStore.open({ dataDir: DIR, blackhole: false, config: new LogConfig({}), tailCacheBytes: null, log: () => undefined, io });
  const ctx = {
    options: { ...BROKER_DEFAULTS, ackMode: 'sync', log: () => undefined }, store, waiters: new FetchWaiters(10),
    stats: { requests: 0, appends: 0, appendedBytes: 0, fetches: 0, fetchedBytes: 0, connections: 0, connectionsTotal: 0, versionsSeen: new Map() },
    allocateProducerId: () => Promise.resolve(0), groups: null as unknown as GroupCoordinator, txns: null as unknown as TransactionCoordinator,
    advertised: { host: '127.0.0.1', port: 0 }, stopping: false, reportedDamage: new Set<string>(),
  } satisfies BrokerContext;
  return { store, topic: await OffsetsTopic.open(ctx, 2) };
}

function commit(n: number): GroupRecord {
  return { kind: 'offset', groupId: `g${n % 3}`, topic: 't', partition: n % 2, value: { offset: n, leaderEpoch: -1, metadata: `m${n}`, commitTimestamp: 1 } };
}

/** group/partition → the last offset in log order. */
function lastOffsets(records: readonly GroupRecord[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of records) if (r.kind === 'offset' && r.value !== null) out.set(`${r.groupId}/${r.partition}`, r.value.offset);
  return out;
}

describe('__consumer_offsets on SimIo crashes', () => {
  it('every acknowledged write is loaded after any crash point and mode', async () => {
    // Count the crash points of a full run first, so the property covers them all.
    const probe = new SimIo({ seed: 1 });
    {
      const { store, topic } = await open(probe);
      for (let n = 0; n < WRITES; n++) await topic.append(commit(n).groupId, [commit(n)]);
      await store.close();
    }
    const points = probe.crashPoints;
    expect(points).toBeGreaterThan(WRITES);
    await fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: points }), fc.constantFrom(...MODES), fc.integer({ min: 1, max: 1000 }), async (crashAt, mode, seed) => {
      const io = new SimIo({ seed, crashAt });
      const acked = new Map<string, number>();
      const sent = new Map<string, number>();
      try {
        const { topic } = await open(io);
        for (let n = 0; n < WRITES; n++) {
          const record = commit(n);
          const key = `${record.groupId}/${record.kind === 'offset' ? record.partition : -1}`;
          sent.set(key, n);
          await topic.append(record.groupId, [record]);
          acked.set(key, n);
        }
      } catch {
        // The crash: every later append fails; what resolved before it is what must survive.
      }
      const recovered = io.recover(mode, { seed });
      let loaded: GroupRecord[];
      try {
        const { store, topic } = await open(recovered);
        loaded = await topic.load();
        await store.close();
      } catch (error) {
        // A crash before the topic's first partition exists is the only acceptable refusal: nothing was acknowledged.
        expect(acked.size, `open after crash at ${crashAt} (${mode}) failed: ${String(error)}`).toBe(0);
        return;
      }
      const last = lastOffsets(loaded);
      for (const [key, offset] of acked) {
        expect(last.get(key), `${key} after crash at ${crashAt} (${mode})`).toBeGreaterThanOrEqual(offset);
      }
      for (const [key, offset] of last) expect(offset).toBeLessThanOrEqual(sent.get(key) ?? -1);
    }), { numRuns: 80 });
  });
});
