// TopicStore over SimIo: a crash at every crash point of a topic deletion
// and of a config change, recovered in every crash mode, reopens with the
// topic whole or gone, never half: whole means every partition with every
// record that was durable before, and its configs either the old or the new
// set; gone means no partition directory and no entry in broker-topic-configs
// (the deletion is marked before the first partition goes and finished by
// the next open).

import { describe, expect, it } from 'vitest';
import { CrashMode, SimIo } from '@seglog/io';
import { LogConfig } from '@seglog/log';
import { Codec, buildBatch } from '@seglog/records';
import { TopicStore } from '../src/internal/topic-store.js';
import { valuesOf } from './broker-helpers.js';

const DATA = '/data';
const PARTITIONS = 3;
const BASE = new LogConfig({ segmentIndexBytes: 4096, minFreeBytes: 0 });

function openStore(io: SimIo): Promise<TopicStore> {
  return TopicStore.open({ dataDir: DATA, blackhole: false, config: BASE, tailCacheBytes: null, log: () => undefined, io });
}

async function seeded(io: SimIo): Promise<TopicStore> {
  const store = await openStore(io);
  await store.create('doomed', PARTITIONS, { 'retention.ms': '5000' });
  await store.create('kept', 1);
  for (const topic of ['doomed', 'kept']) {
    for (let p = 0; p < store.partitionCount(topic); p++) {
      const log = store.get(topic, p);
      if (log === undefined) throw new Error('missing partition');
      const batch = buildBatch({ records: [{ value: Buffer.from(`${topic}-${p}`), timestamp: 1_700_000_000_000 }], compression: Codec.none as 0 });
      const result = await log.appendAsLeader(batch, { leaderEpoch: 0 });
      await log.durable(result.lastOffset);
    }
  }
  return store;
}

async function freshIo(options: ConstructorParameters<typeof SimIo>[0] = {}): Promise<SimIo> {
  const io = new SimIo(options);
  await io.mkdir(DATA);
  await io.fsyncDir('/');
  return io;
}

type Change = (store: TopicStore) => Promise<unknown>;

async function crashPointsOf(change: Change): Promise<number> {
  const io = await freshIo({ seed: 5 });
  const store = await seeded(io);
  const before = io.crashPoints;
  await change(store);
  const points = io.crashPoints - before;
  await store.close();
  return points;
}

/** Crashes `change` at each of its crash points; `check` judges each recovered store. */
async function everyCrash(change: Change, check: (store: TopicStore, io: SimIo) => Promise<void>): Promise<number> {
  const points = await crashPointsOf(change);
  expect(points).toBeGreaterThan(0);
  for (let at = 1; at <= points; at++) {
    let armed = false;
    let seen = 0;
    const io = await freshIo({ seed: 5, onCrashPoint: () => armed && ++seen === at });
    const store = await seeded(io);
    armed = true;
    await change(store).catch(() => undefined);
    expect(io.halted).toBe(true);
    for (const mode of Object.values(CrashMode)) {
      const survivor = io.recover(mode, { seed: 5 });
      const reopened = await openStore(survivor);
      await check(reopened, survivor);
      await reopened.close();
    }
  }
  return points;
}

async function records(store: TopicStore, topic: string, partition: number): Promise<string[]> {
  const log = store.get(topic, partition);
  if (log === undefined) return [];
  const plan = await log.read(0, 1 << 20);
  const bytes = plan.isEmpty ? Buffer.alloc(0) : await plan.toBuffer();
  await plan.release();
  return valuesOf(bytes);
}

describe('TopicStore under crashes', () => {
  it('a topic deletion crashed at any point leaves the topic whole or gone', async () => {
    const outcomes = { whole: 0, gone: 0 };
    const points = await everyCrash((store) => store.delete('doomed'), async (store, io) => {
      expect(store.partitionCount('kept')).toBe(1);
      expect(await records(store, 'kept', 0)).toEqual(['kept-0']);
      const dirs = (await io.readdir(DATA)).filter((name) => name.startsWith('doomed'));
      if (store.has('doomed')) {
        outcomes.whole++;
        expect(store.partitionCount('doomed')).toBe(PARTITIONS);
        for (let p = 0; p < PARTITIONS; p++) expect(await records(store, 'doomed', p)).toEqual([`doomed-${p}`]);
        expect(store.configsOf('doomed')).toEqual({ 'retention.ms': '5000' });
        expect(store.logConfigOf('doomed').retentionMs).toBe(5000);
      } else {
        outcomes.gone++;
        expect(dirs).toEqual([]);
        expect(store.configsOf('doomed')).toEqual({});
      }
    });
    process.stdout.write(`TopicStore.delete crash points: ${points}, recovered whole ${outcomes.whole}, gone ${outcomes.gone}\n`);
    expect(outcomes.whole).toBeGreaterThan(0);
    expect(outcomes.gone).toBeGreaterThan(0);
  });

  it('a config change crashed at any point leaves the old or the new configs, applied, and every record', async () => {
    const seen = new Set<string>();
    const points = await everyCrash((store) => store.setConfigs('doomed', { 'retention.ms': '9000', 'segment.ms': '60000' }), async (store) => {
      expect(store.partitionCount('doomed')).toBe(PARTITIONS);
      for (let p = 0; p < PARTITIONS; p++) expect(await records(store, 'doomed', p)).toEqual([`doomed-${p}`]);
      const configs = store.configsOf('doomed');
      seen.add(JSON.stringify(configs));
      expect([{ 'retention.ms': '5000' }, { 'retention.ms': '9000', 'segment.ms': '60000' }]).toContainEqual(configs);
      expect(store.logConfigOf('doomed').retentionMs).toBe(Number(configs['retention.ms']));
      for (let p = 0; p < PARTITIONS; p++) {
        expect((store.get('doomed', p) as unknown as { config: LogConfig }).config.retentionMs).toBe(Number(configs['retention.ms']));
      }
    });
    process.stdout.write(`TopicStore.setConfigs crash points: ${points}\n`);
    expect(seen.size).toBe(2);
  });
});
