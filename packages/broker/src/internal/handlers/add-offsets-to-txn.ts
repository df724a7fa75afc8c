// AddOffsetsToTxn: the group's __consumer_offsets partition joins the
// transaction, so EndTxn writes a marker there too, which completes the
// transaction's offsets (TxnOffsetCommit). PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH before v2.

import type { AddOffsetsToTxnRequest, AddOffsetsToTxnResponse } from '@seglog/protocol';
import { kafkaErrorCode } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';
import { OFFSETS_TOPIC, offsetsPartitionFor } from '../group/offsets-topic.js';
import type { TxnPartition } from '../txn/txn-records.js';
import { fencedBefore } from './txn-errors.js';

/** The __consumer_offsets partition of a group (null while the topic does not exist: the group coordinator is still loading). */
export function groupPartitionOf(ctx: BrokerContext, groupId: string): TxnPartition | null {
  if (!ctx.store.has(OFFSETS_TOPIC)) return null;
  return { topic: OFFSETS_TOPIC, partition: offsetsPartitionFor(groupId, ctx.store.partitionCount(OFFSETS_TOPIC)) };
}

export async function handleAddOffsetsToTxn(ctx: BrokerContext, request: AddOffsetsToTxnRequest, version: number): Promise<AddOffsetsToTxnResponse> {
  const partition = groupPartitionOf(ctx, request.groupId);
  if (partition === null || ctx.groups.loading) return { throttleTimeMs: 0, errorCode: kafkaErrorCode('COORDINATOR_LOAD_IN_PROGRESS') };
  if (request.groupId.length === 0) return { throttleTimeMs: 0, errorCode: kafkaErrorCode('INVALID_GROUP_ID') };
  const error = await ctx.txns.addPartitions(request, [partition]);
  return { throttleTimeMs: 0, errorCode: kafkaErrorCode(fencedBefore(2, version, error)) };
}
