// TxnOffsetCommit: offsets committed inside a transaction (txn-offsets.ts):
// the producer must hold the transactional id's current epoch in an Ongoing
// transaction that holds the group's __consumer_offsets partition
// (AddOffsetsToTxn first); the offsets count once the transaction commits.
// A partition the broker does not have is UNKNOWN_TOPIC_OR_PARTITION.
// PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v3 (Kafka's rule for this API).

import type { TxnOffsetCommitRequest, TxnOffsetCommitResponse } from '@seglog/protocol';
import { kafkaErrorCode, type BrokerErrorName } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';
import type { OffsetCommitEntry } from '../group/group-admin.js';
import { commitTxnOffsets } from '../group/txn-offsets.js';
import { groupPartitionOf } from './add-offsets-to-txn.js';
import { fencedBefore } from './txn-errors.js';

export async function handleTxnOffsetCommit(ctx: BrokerContext, request: TxnOffsetCommitRequest, version: number): Promise<TxnOffsetCommitResponse> {
  const errors = new Map<string, BrokerErrorName>();
  const key = (topic: string, partition: number): string => `${topic}\u0000${partition}`;
  const partition = groupPartitionOf(ctx, request.groupId);
  const check: BrokerErrorName = partition === null || ctx.groups.loading ? 'COORDINATOR_LOAD_IN_PROGRESS' : ctx.txns.checkOngoing(request, partition);
  const known: OffsetCommitEntry[] = [];
  for (const topic of request.topics) {
    for (const p of topic.partitions) {
      if (check !== 'NONE') errors.set(key(topic.name, p.partitionIndex), check);
      else if (ctx.store.get(topic.name, p.partitionIndex) === undefined) errors.set(key(topic.name, p.partitionIndex), 'UNKNOWN_TOPIC_OR_PARTITION');
      else known.push({ topic: topic.name, partition: p.partitionIndex, offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata: p.committedMetadata });
    }
  }
  const results = known.length === 0 ? [] : await commitTxnOffsets(ctx.groups, {
    groupId: request.groupId, producerId: request.producerId, producerEpoch: request.producerEpoch,
    generationId: request.generationId, memberId: request.memberId, groupInstanceId: request.groupInstanceId, offsets: known,
  });
  known.forEach((entry, i) => errors.set(key(entry.topic, entry.partition), results[i] ?? 'UNKNOWN_SERVER_ERROR'));
  return {
    throttleTimeMs: 0,
    topics: request.topics.map((topic) => ({
      name: topic.name,
      partitions: topic.partitions.map((p) => ({
        partitionIndex: p.partitionIndex,
        errorCode: kafkaErrorCode(fencedBefore(3, version, errors.get(key(topic.name, p.partitionIndex)) ?? 'UNKNOWN_SERVER_ERROR')),
      })),
    })),
  };
}
