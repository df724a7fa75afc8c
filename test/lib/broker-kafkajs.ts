// kafkajs 2.2.4 helpers for the broker tests: codec adapters for snappy, lz4
// and zstd over @seglog/records' codecs (kafkajs ships only gzip; it lets an
// application register the others), and a consumer that needs no consumer
// group: kafkajs' own Cluster/Broker classes (the objects its consumer uses
// underneath) issue ListOffsets and Fetch and decode the record batches, so
// the bytes the broker sends are parsed by kafkajs itself.

import { Codec, compress, decompress } from '@seglog/records';
import type { CodecId } from '@seglog/records';
import { CompressionCodecs, CompressionTypes, Kafka, logLevel } from 'kafkajs';
import { createRequire } from 'node:module';

const MAX_DECOMPRESSED = 64 * 1024 * 1024;

function adapter(codec: CodecId): () => { compress(encoder: { buffer: Buffer }): Promise<Buffer>; decompress(buffer: Buffer): Promise<Buffer> } {
  return () => ({
    compress: (encoder) => Promise.resolve(compress(codec, encoder.buffer)),
    decompress: (buffer) => Promise.resolve(decompress(codec, buffer, MAX_DECOMPRESSED)),
  });
}

/** Registers snappy (xerial framing), lz4 (frame format) and zstd (frame) with kafkajs. */
export function registerKafkajsCodecs(): void {
  const codecs = CompressionCodecs as unknown as Record<number, unknown>;
  codecs[CompressionTypes.Snappy] = adapter(Codec.snappy);
  codecs[CompressionTypes.LZ4] = adapter(Codec.lz4);
  codecs[CompressionTypes.ZSTD] = adapter(Codec.zstd);
}

export function kafkaClient(port: number, clientId = 'seglog-test'): Kafka {
  return new Kafka({
    clientId, brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 100 },
  });
}

export interface ConsumedMessage {
  readonly offset: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Record<string, Buffer | null>;
}

interface KafkajsBroker {
  fetch(request: unknown): Promise<{ responses: { topicName: string; partitions: { partition: number; errorCode: number; highWatermark: string; messages: RawMessage[] }[] }[] }>;
  listOffsets(request: unknown): Promise<{ responses: { topic: string; partitions: { partition: number; errorCode: number; offset: string }[] }[] }>;
  apiVersions?: unknown;
  versions?: Record<number, { minVersion: number; maxVersion: number }>;
}

interface RawMessage {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer | Buffer[] | null>;
  isControlRecord?: boolean;
}

interface KafkajsCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addTargetTopic(topic: string): Promise<void>;
  refreshMetadata(): Promise<void>;
  findBroker(query: { nodeId: number | string }): Promise<KafkajsBroker>;
}

function clusterOf(kafka: Kafka): KafkajsCluster {
  const create = Object.getOwnPropertySymbols(kafka).find((s) => s.description === 'private:Kafka:createCluster');
  if (create === undefined) throw new Error('kafkajs internals changed: no private:Kafka:createCluster');
  const factory = (kafka as unknown as Record<symbol, (options: object) => KafkajsCluster>)[create];
  if (factory === undefined) throw new Error('kafkajs internals changed');
  return factory({ metadataMaxAge: 300_000, allowAutoTopicCreation: false, isolationLevel: 0 });
}

/**
 * Reads partition `partition` of `topic` from the earliest offset up to the
 * high watermark with kafkajs' Fetch (its own decoder and codecs).
 */
export async function consumeAll(kafka: Kafka, topic: string, partition = 0): Promise<ConsumedMessage[]> {
  const cluster = clusterOf(kafka);
  await cluster.connect();
  try {
    await cluster.addTargetTopic(topic);
    await cluster.refreshMetadata();
    const broker = await cluster.findBroker({ nodeId: '0' });
    const listed = await broker.listOffsets({ replicaId: -1, isolationLevel: 0, topics: [{ topic, partitions: [{ partition, timestamp: -1 }] }] });
    const end = Number(listed.responses[0]?.partitions[0]?.offset ?? -1);
    if (end < 0) throw new Error(`ListOffsets failed: ${JSON.stringify(listed)}`);
    const out: ConsumedMessage[] = [];
    let next = 0;
    while (next < end) {
      const response = await broker.fetch({
        replicaId: -1, isolationLevel: 0, maxWaitTime: 100, minBytes: 1, maxBytes: 1_048_576,
        topics: [{ topic, partitions: [{ partition, fetchOffset: String(next), maxBytes: 262_144 }] }],
      });
      const p = response.responses[0]?.partitions[0];
      if (p === undefined || p.errorCode !== 0) throw new Error(`Fetch failed: ${JSON.stringify(p)}`);
      let progressed = false;
      for (const m of p.messages) {
        const offset = Number(m.offset);
        if (offset < next || m.isControlRecord === true) continue;
        const headers: Record<string, Buffer | null> = {};
        for (const [k, v] of Object.entries(m.headers ?? {})) headers[k] = Array.isArray(v) ? (v[0] ?? null) : v;
        out.push({ offset, key: m.key, value: m.value, headers });
        next = offset + 1;
        progressed = true;
      }
      if (!progressed) throw new Error(`Fetch at ${next} returned no new messages (end ${end})`);
    }
    return out;
  } finally {
    await cluster.disconnect();
  }
}
