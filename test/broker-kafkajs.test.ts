// kafkajs 2.2.4 against the broker, in-process on a random loopback port:
// produce with every codec (gzip built in; snappy, lz4, zstd registered
// through kafkajs' CompressionCodecs with @seglog/records' codecs), with and
// without idempotence, then read everything back with kafkajs' own Fetch
// decoder and compare keys, values and headers byte for byte.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompressionTypes } from 'kafkajs';
import type { Message } from 'kafkajs';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Broker } from '@seglog/broker';
import { consumeAll, kafkaClient, registerKafkajsCodecs } from './lib/broker-kafkajs.js';

const CODECS = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP, snappy: CompressionTypes.Snappy, lz4: CompressionTypes.LZ4, zstd: CompressionTypes.ZSTD } as const;

/** Deterministic binary keys, values (0 B to 3 KiB, some null) and headers. */
function messagesFor(tag: string, count: number): Message[] {
  let seed = 0x9e3779b9 ^ tag.length;
  const rand = (n: number): number => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed % n;
  };
  const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => rand(256)));
  return Array.from({ length: count }, (_, i) => ({
    key: i % 17 === 0 ? null : Buffer.concat([Buffer.from(`${tag}-${i}-`), bytes(rand(8))]),
    value: i % 23 === 0 ? null : Buffer.concat([Buffer.from(`v${i}:`), bytes(rand(3072))]),
    headers: i % 3 === 0 ? {} : { h1: Buffer.from(`hdr-${i}`), bin: bytes(rand(40)) },
  }));
}

describe('broker with kafkajs 2.2.4', () => {
  let dir: string;
  let broker: Broker;

  beforeAll(async () => {
    registerKafkajsCodecs();
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-broker-kafkajs-'));
    broker = await Broker.start({ dataDir: dir, port: 0, autoCreatePartitions: 1, log: () => undefined });
  });

  afterAll(async () => {
    const seen = [...broker.stats.versionsSeen].map(([api, v]) => `${api} v${[...v].sort((a, b) => a - b).join(',')}`).join('; ');
    process.stdout.write(`kafkajs 2.2.4 request versions seen: ${seen}\n`);
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [name, codec] of Object.entries(CODECS)) {
    for (const idempotent of [false, true]) {
      it(`produces with ${name}${idempotent ? ', idempotent' : ''} and reads every record back byte for byte`, async () => {
        const topic = `kjs-${name}-${idempotent ? 'idem' : 'plain'}`;
        const kafka = kafkaClient(broker.port);
        const admin = kafka.admin();
        await admin.connect();
        expect(await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] })).toBe(true);
        await admin.disconnect();
        const producer = kafka.producer(idempotent ? { idempotent: true, maxInFlightRequests: 1 } : {});
        await producer.connect();
        const sent = messagesFor(topic, 300);
        const acks = idempotent ? -1 : 1;
        const baseOffsets: number[] = [];
        for (let i = 0; i < sent.length; i += 50) {
          const meta = await producer.send({ topic, acks, compression: codec, messages: sent.slice(i, i + 50) });
          baseOffsets.push(Number(meta[0]?.baseOffset));
        }
        await producer.disconnect();
        expect(baseOffsets).toEqual([0, 50, 100, 150, 200, 250]);
        const got = await consumeAll(kafka, topic);
        expect(got.map((m) => m.offset)).toEqual(sent.map((_, i) => i));
        for (let i = 0; i < sent.length; i++) {
          const want = sent[i] as Message;
          const have = got[i];
          expect(have?.key ?? null).toEqual(want.key ?? null);
          expect(have?.value ?? null).toEqual(want.value ?? null);
          expect(have?.headers ?? {}).toEqual(want.headers ?? {});
        }
      });
    }
  }

  it('answers an existing topic with TOPIC_ALREADY_EXISTS and replication factor 3 with INVALID_REPLICATION_FACTOR', async () => {
    const kafka = kafkaClient(broker.port);
    const admin = kafka.admin();
    await admin.connect();
    try {
      expect(await admin.createTopics({ topics: [{ topic: 'kjs-admin', numPartitions: 3 }] })).toBe(true);
      expect(await admin.createTopics({ topics: [{ topic: 'kjs-admin', numPartitions: 3 }] })).toBe(false);
      const failure: unknown = await admin.createTopics({ topics: [{ topic: 'kjs-rf3', replicationFactor: 3 }] }).then(() => null, (e: unknown) => e);
      expect((failure as { errors?: { type?: string }[] } | null)?.errors?.map((e) => e.type)).toEqual(['INVALID_REPLICATION_FACTOR']);
      const offsets = await admin.fetchTopicOffsets('kjs-admin');
      expect(offsets.map((o) => [o.partition, o.high, o.low])).toEqual([[0, '0', '0'], [1, '0', '0'], [2, '0', '0']]);
    } finally {
      await admin.disconnect();
    }
  });
});
