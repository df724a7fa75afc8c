// CreatePartitions: grows a topic to `count` partitions (TopicStore.addPartitions:
// the new partitions get the topic's LogConfig and appear together). Kafka's
// rules (ReplicationControlManager.createPartitions): a topic listed twice
// is INVALID_REQUEST; unknown topic UNKNOWN_TOPIC_OR_PARTITION; a count not
// above the current one INVALID_PARTITIONS (partitions are never removed);
// manual assignments must number exactly the added partitions and name node
// 0 alone (INVALID_REPLICA_ASSIGNMENT); validateOnly checks and changes nothing.

import { kafkaErrorCode } from '../../protocol/index.js';
import type { BrokerErrorName } from '../../protocol/index.js';
import type { CreatePartitionsRequest, CreatePartitionsResponse, CreatePartitionsTopic, CreatePartitionsTopicResult } from '@seglog/protocol';
import type { BrokerContext } from '../broker-context.js';
import { NODE_ID } from '../broker-context.js';
import { errorCodeOf, errorMessageOf } from '../errors.js';
import { MAX_PARTITIONS } from './create-topics.js';

export async function handleCreatePartitions(ctx: BrokerContext, request: CreatePartitionsRequest): Promise<CreatePartitionsResponse> {
  const counts = new Map<string, number>();
  for (const topic of request.topics) counts.set(topic.name, (counts.get(topic.name) ?? 0) + 1);
  const results: CreatePartitionsTopicResult[] = [];
  for (const topic of request.topics) {
    if ((counts.get(topic.name) ?? 0) > 1) results.push(result(topic.name, 'INVALID_REQUEST', 'Duplicate topic name.'));
    else results.push(await growOne(ctx, topic, request.validateOnly));
  }
  return { throttleTimeMs: 0, results };
}

async function growOne(ctx: BrokerContext, topic: CreatePartitionsTopic, validateOnly: boolean): Promise<CreatePartitionsTopicResult> {
  await ctx.store.settled(topic.name);
  const current = ctx.store.partitionCount(topic.name);
  if (current === 0) return result(topic.name, 'UNKNOWN_TOPIC_OR_PARTITION', `topic '${topic.name}' does not exist`);
  if (topic.count < current) {
    return result(topic.name, 'INVALID_PARTITIONS', `The topic ${topic.name} currently has ${current} partition(s); ${topic.count} would not be an increase.`);
  }
  if (topic.count === current) return result(topic.name, 'INVALID_PARTITIONS', `Topic already has ${current} partition(s).`);
  if (topic.count > MAX_PARTITIONS) return result(topic.name, 'INVALID_PARTITIONS', `number of partitions must be in 1..${MAX_PARTITIONS}`);
  const added = topic.count - current;
  if (topic.assignments !== null) {
    if (topic.assignments.length !== added) {
      return result(topic.name, 'INVALID_REPLICA_ASSIGNMENT', `Attempted to add ${added} additional partition(s), but only ${topic.assignments.length} assignment(s) were specified.`);
    }
    if (topic.assignments.some((a) => a.brokerIds.length !== 1 || a.brokerIds[0] !== NODE_ID)) {
      return result(topic.name, 'INVALID_REPLICA_ASSIGNMENT', 'every partition must be assigned to broker 0 alone');
    }
  }
  if (validateOnly) return result(topic.name, 'NONE', null);
  try {
    const grown = await ctx.store.addPartitions(topic.name, topic.count);
    if (!grown) return result(topic.name, 'UNKNOWN_TOPIC_OR_PARTITION', `topic '${topic.name}' does not exist`);
  } catch (error) {
    return { name: topic.name, errorCode: errorCodeOf(error), errorMessage: errorMessageOf(error) };
  }
  return result(topic.name, 'NONE', null);
}

function result(name: string, error: BrokerErrorName, message: string | null): CreatePartitionsTopicResult {
  return { name, errorCode: kafkaErrorCode(error), errorMessage: message };
}
