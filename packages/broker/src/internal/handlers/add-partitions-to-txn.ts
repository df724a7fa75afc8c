// AddPartitionsToTxn: v0–3 carry one transaction (what clients send), v4+ a
// batch of them (VerifyOnly checks membership without adding). A partition
// the broker does not have is UNKNOWN_TOPIC_OR_PARTITION and the others of
// that transaction OPERATION_NOT_ATTEMPTED (Kafka's rule); otherwise every
// partition gets the coordinator's one answer. PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH before v2.

import type { AddPartitionsToTxnRequest, AddPartitionsToTxnResponse } from '@seglog/protocol';
import { kafkaErrorCode, type BrokerErrorName } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';
import type { TxnPartition } from '../txn/txn-records.js';
import { fencedBefore } from './txn-errors.js';

type Topics = readonly { readonly name: string; readonly partitions: readonly number[] }[];
type TopicResults = AddPartitionsToTxnResponse['resultsByTopicV3AndBelow'];

export async function handleAddPartitionsToTxn(ctx: BrokerContext, request: AddPartitionsToTxnRequest, version: number): Promise<AddPartitionsToTxnResponse> {
  if (version <= 3) {
    const txn = { transactionalId: request.v3AndBelowTransactionalId, producerId: request.v3AndBelowProducerId, producerEpoch: request.v3AndBelowProducerEpoch };
    const results = await addOne(ctx, txn, request.v3AndBelowTopics, false, version);
    return { throttleTimeMs: 0, errorCode: 0, resultsByTransaction: [], resultsByTopicV3AndBelow: results };
  }
  const resultsByTransaction = await Promise.all(request.transactions.map(async (t) => ({
    transactionalId: t.transactionalId,
    topicResults: await addOne(ctx, t, t.topics, t.verifyOnly, version),
  })));
  return { throttleTimeMs: 0, errorCode: 0, resultsByTransaction, resultsByTopicV3AndBelow: [] };
}

async function addOne(
  ctx: BrokerContext, txn: { transactionalId: string; producerId: number; producerEpoch: number }, topics: Topics, verifyOnly: boolean, version: number,
): Promise<TopicResults> {
  const partitions: TxnPartition[] = topics.flatMap((t) => t.partitions.map((partition) => ({ topic: t.name, partition })));
  const unknown = new Set(partitions.filter((p) => ctx.store.get(p.topic, p.partition) === undefined).map((p) => `${p.topic}\u0000${p.partition}`));
  let errors: BrokerErrorName[];
  if (unknown.size > 0) errors = partitions.map((p) => (unknown.has(`${p.topic}\u0000${p.partition}`) ? 'UNKNOWN_TOPIC_OR_PARTITION' : 'OPERATION_NOT_ATTEMPTED'));
  else if (verifyOnly) errors = ctx.txns.verifyPartitions(txn, partitions);
  else {
    const error = await ctx.txns.addPartitions(txn, partitions);
    errors = partitions.map(() => error);
  }
  let i = 0;
  return topics.map((t) => ({
    name: t.name,
    resultsByPartition: t.partitions.map((partitionIndex) => ({
      partitionIndex, partitionErrorCode: kafkaErrorCode(fencedBefore(2, version, errors[i++] ?? 'UNKNOWN_SERVER_ERROR')),
    })),
  }));
}
