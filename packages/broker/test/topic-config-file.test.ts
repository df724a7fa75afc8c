// TopicConfigFile under SimIo: (a) a model test: any sequence of sets reads
// back, after a reopen, as a Map applying the same sets (fast-check); (b) a
// crash at every crash point of a sequence of sets, recovered by every
// crash mode, reopens as the state after the sets that completed, or after
// one more (the set in flight), never anything else and never a parse
// error; (c) a failed fdatasync refuses the set and changes nothing visible;
// (d) format round trip and damaged files are SEGLOG_ERR_BROKER_TOPIC_CONFIGS_CORRUPT.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CrashMode, SimIo } from '@seglog/io';
import { TopicConfigFile, formatTopicConfigFile, parseTopicConfigFile } from '../src/internal/topic-configs/topic-config-file.js';
import type { TopicEntry } from '../src/internal/topic-configs/topic-config-file.js';

const DIR = '/data';
type Op = readonly [string, TopicEntry | null];

const opArb: fc.Arbitrary<Op> = fc.tuple(
  fc.constantFrom('a', 'b', 'c.d', 'é'),
  fc.option(fc.record({
    configs: fc.dictionary(fc.constantFrom('retention.ms', 'cleanup.policy', 'segment.bytes'), fc.string({ maxLength: 6 }), { maxKeys: 3 }),
    deleting: fc.boolean(),
  }), { nil: null }),
);

function applyModel(model: Map<string, TopicEntry>, [topic, entry]: Op): void {
  if (entry === null) model.delete(topic);
  else model.set(topic, entry);
}

function snapshot(file: TopicConfigFile): Record<string, TopicEntry> {
  const out: Record<string, TopicEntry> = {};
  for (const topic of file.topics().sort()) out[topic] = file.get(topic) as TopicEntry;
  return out;
}

function modelSnapshot(model: Map<string, TopicEntry>): Record<string, TopicEntry> {
  const out: Record<string, TopicEntry> = {};
  for (const topic of [...model.keys()].sort()) out[topic] = model.get(topic) as TopicEntry;
  return out;
}

async function freshIo(options: ConstructorParameters<typeof SimIo>[0] = {}): Promise<SimIo> {
  const io = new SimIo(options);
  await io.mkdir(DIR);
  await io.fsyncDir('/');
  return io;
}

describe('TopicConfigFile', () => {
  it('reads back, after a reopen, what a Map applying the same sets holds', async () => {
    await fc.assert(fc.asyncProperty(fc.array(opArb, { maxLength: 12 }), async (ops) => {
      const io = await freshIo();
      const file = await TopicConfigFile.open(io, DIR);
      const model = new Map<string, TopicEntry>();
      for (const op of ops) {
        await file.set(op[0], op[1]);
        applyModel(model, op);
        expect(snapshot(file)).toEqual(modelSnapshot(model));
      }
      expect(snapshot(await TopicConfigFile.open(io.recover(CrashMode.powerClean), DIR))).toEqual(modelSnapshot(model));
    }), { numRuns: 60 });
  });

  it('a crash at any point of any set, in every crash mode, reopens as before or after the set in flight', async () => {
    await fc.assert(fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 5 }), fc.integer({ min: 1, max: 1000 }), async (ops, seed) => {
      // The states after 0..n sets.
      const states: Record<string, TopicEntry>[] = [{}];
      const model = new Map<string, TopicEntry>();
      for (const op of ops) {
        applyModel(model, op);
        states.push(modelSnapshot(model));
      }
      const dry = await freshIo({ seed });
      const before = dry.crashPoints;
      const dryFile = await TopicConfigFile.open(dry, DIR);
      for (const op of ops) await dryFile.set(op[0], op[1]);
      const points = dry.crashPoints - before;
      expect(points).toBeGreaterThanOrEqual(ops.length * 5);
      for (let crashAt = before + 1; crashAt <= before + points; crashAt++) {
        const io = await freshIo({ seed, crashAt });
        const file = await TopicConfigFile.open(io, DIR);
        let completed = 0;
        for (const op of ops) {
          try {
            await file.set(op[0], op[1]);
            completed++;
          } catch {
            break;
          }
        }
        expect(completed).toBeLessThan(ops.length + 1);
        for (const mode of Object.values(CrashMode)) {
          const reopened = snapshot(await TopicConfigFile.open(io.recover(mode, { seed }), DIR));
          const allowed = [states[completed], states[completed + 1]].filter((s) => s !== undefined);
          expect(allowed).toContainEqual(reopened);
        }
      }
    }), { numRuns: 25 });
  });

  it('a failed fdatasync refuses the set; what get() shows and what a reopen reads stay the old state', async () => {
    const io = await freshIo({ faults: { syncEio: { nth: 2, path: `${DIR}/broker-topic-configs.tmp` } } });
    const file = await TopicConfigFile.open(io, DIR);
    await file.set('t', { configs: { 'retention.ms': '1' }, deleting: false });
    await expect(file.set('t', { configs: { 'retention.ms': '2' }, deleting: false })).rejects.toMatchObject({ code: 'SEGLOG_ERR_IO_EIO' });
    expect(file.get('t')?.configs).toEqual({ 'retention.ms': '1' });
    // Not renamed over the file: a reader of the same machine still sees the old state.
    expect((await TopicConfigFile.open(io, DIR)).get('t')?.configs).toEqual({ 'retention.ms': '1' });
    // The next write starts from a fresh .tmp and succeeds.
    await file.set('t', { configs: { 'retention.ms': '3' }, deleting: false });
    expect((await TopicConfigFile.open(io.recover(CrashMode.powerClean), DIR)).get('t')?.configs).toEqual({ 'retention.ms': '3' });
  });

  it('formats and parses; a damaged or foreign file is SEGLOG_ERR_BROKER_TOPIC_CONFIGS_CORRUPT', () => {
    const entries = new Map<string, TopicEntry>([['x', { configs: { 'retention.ms': '5' }, deleting: true }]]);
    expect(parseTopicConfigFile(formatTopicConfigFile(entries), 'f')).toEqual(entries);
    for (const text of ['', '{', '{"format":"other","version":1,"topics":{}}', '{"format":"seglog-topic-configs","version":2,"topics":{}}',
      '{"format":"seglog-topic-configs","version":1,"topics":{"x":{"configs":{"a":1},"deleting":false}}}',
      '{"format":"seglog-topic-configs","version":1,"topics":{"x":{"configs":{}}}}']) {
      expect(() => parseTopicConfigFile(text, 'f')).toThrow(expect.objectContaining({ code: 'SEGLOG_ERR_BROKER_TOPIC_CONFIGS_CORRUPT' }) as Error);
    }
  });
});
