// OffsetDelete → deleteOffsets (group-admin.ts): offsets of topics an active
// consumer group subscribes to stay (GROUP_SUBSCRIBED_TO_TOPIC). The
// subscriptions are read from the consumer protocol's metadata
// (ConsumerProtocolSubscription: int16 version, then an int16-length-string
// array of topics); one that does not read protects every topic.

import type { OffsetDeleteRequest, OffsetDeleteResponse } from '@seglog/protocol';
import { ProtocolReader } from '@seglog/protocol';
import { kafkaErrorCode } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';
import { deleteOffsets } from '../group/group-admin.js';

export async function handleOffsetDelete(ctx: BrokerContext, request: OffsetDeleteRequest): Promise<OffsetDeleteResponse> {
  const partitions = request.topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex })));
  const result = await deleteOffsets(ctx.groups, request.groupId, partitions, subscribedTopics);
  if (result.error !== 'NONE') return { errorCode: kafkaErrorCode(result.error), throttleTimeMs: 0, topics: [] };
  let i = 0;
  return {
    errorCode: 0, throttleTimeMs: 0,
    topics: request.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: kafkaErrorCode(result.errors[i++] ?? 'UNKNOWN_SERVER_ERROR') })),
    })),
  };
}

/** The topics of a ConsumerProtocolSubscription (any version: the topic list leads every one), or null. */
export function subscribedTopics(metadata: Buffer): readonly string[] | null {
  try {
    const reader = new ProtocolReader(metadata);
    const version = reader.int16();
    if (version < 0) return null;
    const count = reader.arrayLength(false, 2);
    const topics: string[] = [];
    for (let n = 0; n < count; n++) topics.push(reader.string(false));
    return topics;
  } catch {
    return null;
  }
}
