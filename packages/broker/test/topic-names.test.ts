// Every legal topic name (Kafka's Topic.validate: 1..249 characters of
// [a-zA-Z0-9._-], not '.' or '..') survives produce → graceful stop → start
// → Metadata and Fetch through the broker. Issue 23 item 3: a topic whose
// name starts with '.' (its directory `.hidden-0` starts with a dot) was
// skipped at load, so its acknowledged records vanished after a restart.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Broker } from '../src/index.js';
import { batch, createTopic, fetchAllValues, produce } from './broker-helpers.js';
import { RawClient } from './raw-client.js';

const LEGAL_CHARS = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-'];

/** Kafka's legal names, with the edge cases (leading dot, dashes and digits like a partition suffix, 249 characters) made likely. */
const legalTopic = fc.oneof(
  fc.string({ unit: fc.constantFrom(...LEGAL_CHARS), minLength: 1, maxLength: 249 }),
  fc.string({ unit: fc.constantFrom('.', '-', '_', '0', 'a'), minLength: 1, maxLength: 12 }),
  fc.string({ unit: fc.constantFrom(...LEGAL_CHARS), minLength: 1, maxLength: 20 }).map((s) => `.${s}`),
  fc.string({ unit: fc.constantFrom(...LEGAL_CHARS), minLength: 249, maxLength: 249 }),
).filter((name) => name !== '.' && name !== '..');

/** Topic names that collide in Kafka's metric names ('.' and '_' unified) cannot both exist: keep one of each. */
function distinctTopics(names: readonly string[]): string[] {
  const seen = new Set<string>();
  return names.filter((name) => {
    const key = name.replaceAll('.', '_');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

async function withBroker<T>(dataDir: string, body: (client: RawClient) => Promise<T>): Promise<T> {
  const broker = await Broker.start({ dataDir, port: 0, autoCreatePartitions: 0, log: () => undefined });
  const client = await RawClient.connect(broker.port);
  try {
    return await body(client);
  } finally {
    client.close();
    await broker.stop();
  }
}

async function produceValues(client: RawClient, topic: string, values: readonly string[], perBatch: number): Promise<void> {
  for (let at = 0; at < values.length; at += perBatch) {
    const r = await client.request('PRODUCE', 9, produce(topic, batch(values.slice(at, at + perBatch)), -1));
    expect(r.body.responses[0]?.partitionResponses[0]?.errorCode).toBe(0);
  }
}

async function listed(client: RawClient): Promise<string[]> {
  const r = await client.request('METADATA', 12, { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });
  // Internal topics (the group coordinator's __consumer_offsets) are not the user's names.
  return r.body.topics.filter((t) => !t.isInternal).map((t) => t.name ?? '').sort();
}

describe('topic names across a restart', () => {
  it("'.hidden' keeps its 100 acknowledged records through a graceful restart", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-topic-names-'));
    try {
      const values = Array.from({ length: 100 }, (_, i) => `hidden ${i}`);
      await withBroker(dir, async (c) => {
        await createTopic(c, '.hidden');
        await produceValues(c, '.hidden', values, 10);
        expect(await fetchAllValues(c, '.hidden')).toEqual(values);
      });
      await withBroker(dir, async (c) => {
        expect(await listed(c)).toEqual(['.hidden']);
        expect(await fetchAllValues(c, '.hidden')).toEqual(values);
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('every legal name round-trips: produce → graceful stop → start → Metadata and Fetch', async () => {
    await fc.assert(fc.asyncProperty(fc.array(legalTopic, { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 30 }), async (names, count) => {
      const topics = distinctTopics(names);
      const dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-topic-names-'));
      try {
        const expected = new Map(topics.map((t, i) => [t, Array.from({ length: count + i }, (_, n) => `${i}/${n}`)]));
        await withBroker(dir, async (c) => {
          for (const [topic, values] of expected) {
            await createTopic(c, topic);
            await produceValues(c, topic, values, 7);
          }
        });
        await withBroker(dir, async (c) => {
          expect(await listed(c)).toEqual([...topics].sort());
          for (const [topic, values] of expected) expect(await fetchAllValues(c, topic)).toEqual(values);
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }), { numRuns: 25, examples: [[['.hidden', '..a', '-0', '_-1'], 3]] });
  });
});
