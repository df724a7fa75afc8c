// DeleteTopics: each named topic is deleted through TopicStore.delete (marked
// on disk, hidden at once, every partition removed by LogManager.deleteLog,
// its config entry dropped); parked fetches on its partitions are woken and
// read UNKNOWN_TOPIC_OR_PARTITION. Kafka's rules (ControllerApis.deleteTopics):
// a name listed twice is INVALID_REQUEST for both; v6 entries name a topic
// or give its id, not both (INVALID_REQUEST); topics here have no ids (the
// zero id everywhere), so a lookup by id is UNKNOWN_TOPIC_ID; an unknown name
// is UNKNOWN_TOPIC_OR_PARTITION. Internal topic names belong to the broker's
// coordinators: INVALID_REQUEST.

import { kafkaErrorCode } from '../../protocol/index.js';
import type { BrokerErrorName } from '../../protocol/index.js';
import type { DeletableTopicResult, DeleteTopicsRequest, DeleteTopicsResponse } from '@seglog/protocol';
import type { BrokerContext } from '../broker-context.js';
import { ZERO_UUID } from '../broker-context.js';
import { errorCodeOf, errorMessageOf } from '../errors.js';
import { INTERNAL_TOPICS } from '../topic-store.js';

interface Wanted {
  readonly name: string | null;
  readonly topicId: string;
}

export async function handleDeleteTopics(ctx: BrokerContext, request: DeleteTopicsRequest, version: number): Promise<DeleteTopicsResponse> {
  const wanted: readonly Wanted[] = version >= 6 ? request.topics : request.topicNames.map((name) => ({ name, topicId: ZERO_UUID }));
  const counts = new Map<string, number>();
  for (const topic of wanted) if (topic.name !== null) counts.set(topic.name, (counts.get(topic.name) ?? 0) + 1);
  const responses: DeletableTopicResult[] = [];
  for (const topic of wanted) responses.push(await deleteOne(ctx, topic, counts));
  return { throttleTimeMs: 0, responses };
}

async function deleteOne(ctx: BrokerContext, topic: Wanted, counts: ReadonlyMap<string, number>): Promise<DeletableTopicResult> {
  const { name, topicId } = topic;
  if (name === null) {
    return topicId === ZERO_UUID
      ? result(null, topicId, 'INVALID_REQUEST', 'Neither topic name nor id were specified.')
      : result(null, topicId, 'UNKNOWN_TOPIC_ID', 'topics on this broker have no topic ids: delete by name');
  }
  if (topicId !== ZERO_UUID) return result(name, topicId, 'INVALID_REQUEST', 'You may not specify both topic name and topic id.');
  if ((counts.get(name) ?? 0) > 1) return result(name, topicId, 'INVALID_REQUEST', 'Duplicate topic name.');
  if (INTERNAL_TOPICS.has(name)) return result(name, topicId, 'INVALID_REQUEST', `Deletion of internal topic ${name} is prohibited.`);
  try {
    const removed = await ctx.store.delete(name);
    if (removed === null) return result(name, topicId, 'UNKNOWN_TOPIC_OR_PARTITION', `topic '${name}' does not exist`);
    for (const log of removed) ctx.waiters.notify(log);
  } catch (error) {
    return { name, topicId, errorCode: errorCodeOf(error), errorMessage: errorMessageOf(error) };
  }
  return result(name, topicId, 'NONE', null);
}

function result(name: string | null, topicId: string, error: BrokerErrorName, message: string | null): DeletableTopicResult {
  return { name, topicId, errorCode: kafkaErrorCode(error), errorMessage: message };
}
