// Metadata: one broker (node 0 at the advertised host/port, controller 0);
// every partition led by node 0 with replicas = isr = [0]. Requested topics
// that do not exist are auto-created (when the request allows it and the
// broker's autoCreatePartitions > 0), else UNKNOWN_TOPIC_OR_PARTITION.

import { kafkaErrorCode } from '../../protocol/index.js';
import type { MetadataPartition, MetadataRequest, MetadataResponse, MetadataTopic } from '@seglog/protocol';
import type { BrokerContext } from '../broker-context.js';
import { CLUSTER_ID, LEADER_EPOCH, NODE_ID, ZERO_UUID } from '../broker-context.js';
import { errorCodeOf } from '../errors.js';
import { INTERNAL_TOPICS } from '../topic-store.js';

export async function handleMetadata(ctx: BrokerContext, request: MetadataRequest, version: number): Promise<MetadataResponse> {
  const requested = allTopics(request, version) ? null : request.topics;
  const names = requested === null ? ctx.store.topics() : requested.map((t) => t.name);
  const topics: MetadataTopic[] = [];
  for (const name of names) {
    if (name === null) {
      topics.push(topicError(null, kafkaErrorCode('UNKNOWN_TOPIC_ID')));
      continue;
    }
    topics.push(await describeTopic(ctx, name, requested !== null && request.allowAutoTopicCreation));
  }
  return {
    throttleTimeMs: 0,
    brokers: [{ nodeId: NODE_ID, host: ctx.advertised.host, port: ctx.advertised.port, rack: null }],
    clusterId: CLUSTER_ID,
    controllerId: NODE_ID,
    topics,
    clusterAuthorizedOperations: -2147483648,
  };
}

/**
 * Whether the request asks for every topic: a null list (v1+), or in v0,
 * which has no null list, an empty one (Kafka's MetadataRequest v0 rule; an
 * empty list from v1 asks for none).
 */
function allTopics(request: MetadataRequest, version: number): boolean {
  return request.topics === null || (version === 0 && request.topics.length === 0);
}

async function describeTopic(ctx: BrokerContext, name: string, mayCreate: boolean): Promise<MetadataTopic> {
  await ctx.store.settled(name);
  if (!ctx.store.has(name) && mayCreate && ctx.options.autoCreatePartitions > 0) {
    try {
      await ctx.store.create(name, ctx.options.autoCreatePartitions);
    } catch (error) {
      // Out of descriptors or space while creating it (nothing written, the
      // directory stays open): LEADER_NOT_AVAILABLE, Kafka's answer for a
      // topic still being created, which every client retries.
      const retry = (error as { code?: unknown } | null)?.code === 'SEGLOG_ERR_LOG_RESOURCE_UNAVAILABLE';
      return topicError(name, retry ? kafkaErrorCode('LEADER_NOT_AVAILABLE') : errorCodeOf(error));
    }
    await ctx.store.settled(name);
  }
  const count = ctx.store.partitionCount(name);
  if (count === 0) return topicError(name, kafkaErrorCode('UNKNOWN_TOPIC_OR_PARTITION'));
  const partitions: MetadataPartition[] = [];
  for (let index = 0; index < count; index++) {
    const exists = ctx.store.get(name, index) !== undefined;
    partitions.push({
      errorCode: exists ? 0 : kafkaErrorCode('LEADER_NOT_AVAILABLE'),
      partitionIndex: index,
      leaderId: exists ? NODE_ID : -1,
      leaderEpoch: LEADER_EPOCH,
      replicaNodes: [NODE_ID],
      isrNodes: exists ? [NODE_ID] : [],
      offlineReplicas: [],
    });
  }
  return { errorCode: 0, name, topicId: ZERO_UUID, isInternal: INTERNAL_TOPICS.has(name), partitions, topicAuthorizedOperations: -2147483648 };
}

function topicError(name: string | null, errorCode: number): MetadataTopic {
  return { errorCode, name, topicId: ZERO_UUID, isInternal: false, partitions: [], topicAuthorizedOperations: -2147483648 };
}
