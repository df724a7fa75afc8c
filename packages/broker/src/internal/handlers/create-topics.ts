// CreateTopics: numPartitions (-1 = the broker's autoCreatePartitions, or 1
// when auto-creation is off), replicationFactor 1 or -1 (anything else is
// INVALID_REPLICATION_FACTOR: there is one node), manual assignments only to
// node 0, validateOnly creates nothing. Topic configs (Kafka names) are
// validated as AlterConfigs validates them (topic-configs/topic-config-defs.ts:
// INVALID_CONFIG, a name listed twice INVALID_REQUEST, a null value
// INVALID_CONFIG as Kafka's "Null value not supported for topic configs"),
// persisted with the topic and applied to its partitions' LogConfig.
// Names: Kafka's Topic.validate (INVALID_TOPIC_EXCEPTION), no collision with
// an existing topic once '.' and '_' are unified (INVALID_TOPIC_EXCEPTION),
// no internal name (INVALID_REQUEST): TopicStore.checkCreatable.

import { kafkaErrorCode } from '../../protocol/index.js';
import type { CreatableTopic, CreatableTopicResult, CreateTopicsRequest, CreateTopicsResponse } from '@seglog/protocol';
import type { BrokerContext } from '../broker-context.js';
import { NODE_ID, ZERO_UUID } from '../broker-context.js';
import { errorCodeOf, errorMessageOf } from '../errors.js';
import { isApiError } from '../topic-configs/api-error.js';
import { validateTopicConfigs } from '../topic-configs/topic-config-defs.js';
import { INTERNAL_TOPICS } from '../topic-store.js';

export const MAX_PARTITIONS = 10_000;

export async function handleCreateTopics(ctx: BrokerContext, request: CreateTopicsRequest): Promise<CreateTopicsResponse> {
  const topics: CreatableTopicResult[] = [];
  const seen = new Set<string>();
  for (const topic of request.topics) {
    if (seen.has(topic.name)) {
      topics.push(result(topic.name, 'INVALID_REQUEST', 'topic listed twice in one request', -1));
      continue;
    }
    seen.add(topic.name);
    topics.push(await createOne(ctx, topic, request.validateOnly));
  }
  return { throttleTimeMs: 0, topics };
}

async function createOne(ctx: BrokerContext, topic: CreatableTopic, validateOnly: boolean): Promise<CreatableTopicResult> {
  const fallback = ctx.options.autoCreatePartitions > 0 ? ctx.options.autoCreatePartitions : 1;
  const count = topic.assignments.length > 0 ? topic.assignments.length : topic.numPartitions === -1 ? fallback : topic.numPartitions;
  if (topic.replicationFactor !== 1 && topic.replicationFactor !== -1 && topic.assignments.length === 0) {
    return result(topic.name, 'INVALID_REPLICATION_FACTOR', 'a single-node broker supports replication factor 1 only', -1);
  }
  if (topic.assignments.some((a) => a.brokerIds.length !== 1 || a.brokerIds[0] !== NODE_ID)) {
    return result(topic.name, 'INVALID_REPLICA_ASSIGNMENT', 'every partition must be assigned to broker 0 alone', -1);
  }
  if (!Number.isInteger(count) || count < 1 || count > MAX_PARTITIONS) {
    return result(topic.name, 'INVALID_PARTITIONS', `number of partitions must be in 1..${MAX_PARTITIONS}`, -1);
  }
  const configs: Record<string, string> = {};
  for (const config of topic.configs) {
    if (config.value === null) return result(topic.name, 'INVALID_CONFIG', `Null value not supported for topic configs: ${config.name}`, -1);
    if (Object.hasOwn(configs, config.name)) return result(topic.name, 'INVALID_REQUEST', `config ${config.name} listed twice`, -1);
    configs[config.name] = config.value;
  }
  try {
    validateTopicConfigs(configs, ctx.store.defaultConfig);
  } catch (error) {
    if (!isApiError(error)) throw error;
    return result(topic.name, error.error, error.message, -1);
  }
  // Kafka refuses an internal name before looking for the topic (__consumer_offsets exists: the coordinator made it).
  if (INTERNAL_TOPICS.has(topic.name)) return result(topic.name, 'INVALID_REQUEST', `Creation of internal topic ${topic.name} is prohibited.`, -1);
  await ctx.store.settled(topic.name);
  if (ctx.store.has(topic.name)) return result(topic.name, 'TOPIC_ALREADY_EXISTS', `topic '${topic.name}' already exists`, -1);
  try {
    ctx.store.checkCreatable(topic.name);
    if (validateOnly) return result(topic.name, 'NONE', null, count);
    const created = await ctx.store.create(topic.name, count, configs);
    if (!created) return result(topic.name, 'TOPIC_ALREADY_EXISTS', `topic '${topic.name}' already exists`, -1);
  } catch (error) {
    return { ...result(topic.name, 'NONE', errorMessageOf(error), -1), errorCode: errorCodeOf(error) };
  }
  return result(topic.name, 'NONE', null, count);
}

function result(name: string, error: Parameters<typeof kafkaErrorCode>[0], message: string | null, partitions: number): CreatableTopicResult {
  return {
    name, topicId: ZERO_UUID, errorCode: kafkaErrorCode(error), errorMessage: message,
    numPartitions: partitions, replicationFactor: partitions === -1 ? -1 : 1, configs: null,
  };
}
