// Setup steps of a load run on the control connection: version negotiation
// (ApiVersions, highest version both sides speak), topic creation, metadata
// check, end offsets (ListOffsets −1 = the high watermark), producer ids.

import { ApiKey, KAFKA_ERROR_CODES, SUPPORTED_APIS } from '@seglog/protocol';
import type { KafkaConnection } from './kafka-connection.js';
import { kafkaErrorName } from './load-consumer.js';
import { LoadErrorCode, loadError } from './load-error.js';
import type { LoadOptions } from './load-options.js';

export interface ApiVersionsUsed {
  readonly produce: number;
  readonly fetch: number;
  readonly listOffsets: number;
  readonly metadata: number;
  readonly createTopics: number;
  readonly initProducerId: number;
}

const USED = {
  produce: ApiKey.PRODUCE, fetch: ApiKey.FETCH, listOffsets: ApiKey.LIST_OFFSETS, metadata: ApiKey.METADATA,
  createTopics: ApiKey.CREATE_TOPICS, initProducerId: ApiKey.INIT_PRODUCER_ID,
} as const;

export async function negotiateVersions(connection: KafkaConnection): Promise<ApiVersionsUsed> {
  let response = await connection.request('API_VERSIONS', 3, { clientSoftwareName: 'seglog-load', clientSoftwareVersion: '0.1.0' });
  if (response.errorCode === KAFKA_ERROR_CODES.UNSUPPORTED_VERSION) {
    response = await connection.request('API_VERSIONS', 0, { clientSoftwareName: '', clientSoftwareVersion: '' });
  }
  if (response.errorCode !== 0) throw loadError(LoadErrorCode.SETUP, `ApiVersions failed: ${kafkaErrorName(response.errorCode)}`);
  const pick = (apiKey: number): number => {
    const ours = SUPPORTED_APIS.find((a) => a.apiKey === apiKey);
    const theirs = response.apiKeys.find((a) => a.apiKey === apiKey);
    if (ours === undefined || theirs === undefined) throw loadError(LoadErrorCode.SETUP, `the broker does not offer API ${apiKey}`, { apiKey });
    const version = Math.min(ours.maxVersion, theirs.maxVersion);
    if (version < Math.max(ours.minVersion, theirs.minVersion)) {
      throw loadError(LoadErrorCode.SETUP, `no common version of API ${apiKey}`, { apiKey, ours: [ours.minVersion, ours.maxVersion], theirs: [theirs.minVersion, theirs.maxVersion] });
    }
    return version;
  };
  return {
    produce: pick(USED.produce), fetch: pick(USED.fetch), listOffsets: pick(USED.listOffsets), metadata: pick(USED.metadata),
    createTopics: pick(USED.createTopics), initProducerId: pick(USED.initProducerId),
  };
}

/** CreateTopics when asked, then Metadata: the topic must have at least `partitions` partitions. */
export async function prepareTopic(connection: KafkaConnection, versions: ApiVersionsUsed, o: LoadOptions): Promise<void> {
  if (o.createTopic) {
    const created = await connection.request('CREATE_TOPICS', versions.createTopics, {
      topics: [{ name: o.topic, numPartitions: o.partitions, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: o.requestTimeoutMs, validateOnly: false,
    });
    const code = created.topics[0]?.errorCode ?? -1;
    if (code !== 0 && code !== KAFKA_ERROR_CODES.TOPIC_ALREADY_EXISTS) {
      throw loadError(LoadErrorCode.SETUP, `CreateTopics ${o.topic} failed: ${kafkaErrorName(code)}`, { topic: o.topic, errorCode: code });
    }
  }
  const metadata = await connection.request('METADATA', versions.metadata, {
    topics: [{ topicId: '00000000000000000000000000000000', name: o.topic }],
    allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false,
  });
  const topic = metadata.topics.find((t) => t.name === o.topic);
  if (topic === undefined || topic.errorCode !== 0) {
    const name = topic === undefined ? 'missing' : kafkaErrorName(topic.errorCode);
    throw loadError(LoadErrorCode.SETUP, `topic ${o.topic} is not available (${name}); pass --create-topic to create it`, { topic: o.topic });
  }
  if (topic.partitions.length < o.partitions) {
    throw loadError(LoadErrorCode.SETUP, `topic ${o.topic} has ${topic.partitions.length} partitions, the run needs ${o.partitions}`, { topic: o.topic });
  }
}

/** The high watermark of partitions 0..n−1 (ListOffsets timestamp −1). */
export async function endOffsets(connection: KafkaConnection, versions: ApiVersionsUsed, o: LoadOptions): Promise<number[]> {
  const partitions = Array.from({ length: o.partitions }, (_, p) => ({ partitionIndex: p, currentLeaderEpoch: -1, timestamp: -1, maxNumOffsets: 1 }));
  const response = await connection.request('LIST_OFFSETS', versions.listOffsets, { replicaId: -1, isolationLevel: 0, topics: [{ name: o.topic, partitions }] });
  const out = new Array<number>(o.partitions).fill(-1);
  for (const p of response.topics[0]?.partitions ?? []) {
    if (p.errorCode !== 0) throw loadError(LoadErrorCode.SETUP, `ListOffsets ${o.topic}-${p.partitionIndex} failed: ${kafkaErrorName(p.errorCode)}`);
    out[p.partitionIndex] = versions.listOffsets === 0 ? (p.oldStyleOffsets[0] ?? -1) : p.offset;
  }
  if (out.some((x) => x < 0)) throw loadError(LoadErrorCode.SETUP, `ListOffsets ${o.topic} answered no offset for some partitions`);
  return out;
}

/** acks=0 has no acknowledgement to wait for: poll until the end offsets stop moving (bounded). */
export async function settledEndOffsets(connection: KafkaConnection, versions: ApiVersionsUsed, o: LoadOptions): Promise<number[]> {
  let last = await endOffsets(connection, versions, o);
  for (let round = 0; round < 50; round++) {
    await new Promise((r) => setTimeout(r, 100));
    const now = await endOffsets(connection, versions, o);
    if (now.every((x, i) => x === last[i])) return now;
    last = now;
  }
  return last;
}

export async function initProducerId(connection: KafkaConnection, versions: ApiVersionsUsed, o: LoadOptions): Promise<{ producerId: number; producerEpoch: number }> {
  const r = await connection.request('INIT_PRODUCER_ID', versions.initProducerId, {
    transactionalId: null, transactionTimeoutMs: o.requestTimeoutMs, producerId: -1, producerEpoch: -1,
  });
  if (r.errorCode !== 0) throw loadError(LoadErrorCode.SETUP, `InitProducerId failed: ${kafkaErrorName(r.errorCode)}`, { errorCode: r.errorCode });
  return { producerId: r.producerId, producerEpoch: r.producerEpoch };
}
