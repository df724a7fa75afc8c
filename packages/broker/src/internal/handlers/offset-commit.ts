// OffsetCommit → commitOffsets (group-admin.ts). A partition of a topic the
// broker does not have is UNKNOWN_TOPIC_OR_PARTITION (Kafka checks its
// metadata first); the others are answered once their records are stored
// per the ack mode. v0 has no generation or member (a commit from outside
// group management: generation -1).

import type { OffsetCommitRequest, OffsetCommitResponse } from '@seglog/protocol';
import { kafkaErrorCode } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';
import { commitOffsets, type OffsetCommitEntry } from '../group/group-admin.js';
import type { GroupErrorName } from '../group/group-member.js';

export async function handleOffsetCommit(ctx: BrokerContext, request: OffsetCommitRequest): Promise<OffsetCommitResponse> {
  const known: OffsetCommitEntry[] = [];
  const errors = new Map<string, GroupErrorName>();
  for (const topic of request.topics) {
    for (const p of topic.partitions) {
      if (ctx.store.get(topic.name, p.partitionIndex) === undefined) errors.set(`${topic.name}\u0000${p.partitionIndex}`, 'UNKNOWN_TOPIC_OR_PARTITION');
      else known.push({ topic: topic.name, partition: p.partitionIndex, offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata: p.committedMetadata });
    }
  }
  const results = known.length === 0 ? [] : await commitOffsets(ctx.groups, {
    groupId: request.groupId, memberId: request.memberId, generationId: request.generationIdOrMemberEpoch,
    groupInstanceId: request.groupInstanceId, offsets: known,
  });
  known.forEach((entry, i) => errors.set(`${entry.topic}\u0000${entry.partition}`, results[i] ?? 'UNKNOWN_SERVER_ERROR'));
  return {
    throttleTimeMs: 0,
    topics: request.topics.map((topic) => ({
      name: topic.name,
      partitions: topic.partitions.map((p) => ({
        partitionIndex: p.partitionIndex, errorCode: kafkaErrorCode(errors.get(`${topic.name}\u0000${p.partitionIndex}`) ?? 'UNKNOWN_SERVER_ERROR'),
      })),
    })),
  };
}
