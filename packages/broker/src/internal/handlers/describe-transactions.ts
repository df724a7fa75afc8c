// DescribeTransactions and ListTransactions (KIP-664): the coordinator's
// state of transactional ids, for operators (kafka-transactions.sh).

import type { DescribeTransactionsRequest, DescribeTransactionsResponse, ListTransactionsRequest, ListTransactionsResponse } from '@seglog/protocol';
import { kafkaErrorCode } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';
import { TXN_STATES } from '../txn/txn-records.js';

export function handleDescribeTransactions(ctx: BrokerContext, request: DescribeTransactionsRequest): DescribeTransactionsResponse {
  return {
    throttleTimeMs: 0,
    transactionStates: request.transactionalIds.map((transactionalId) => {
      const { error, txn } = ctx.txns.describe(transactionalId);
      const byTopic = new Map<string, number[]>();
      for (const p of txn?.partitions.values() ?? []) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition]);
      return {
        errorCode: kafkaErrorCode(error), transactionalId, transactionState: txn?.state ?? '',
        transactionTimeoutMs: txn?.timeoutMs ?? 0, transactionStartTimeMs: txn?.startMs ?? -1,
        producerId: txn?.producerId ?? -1, producerEpoch: txn?.producerEpoch ?? -1,
        topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })),
      };
    }),
  };
}

export function handleListTransactions(ctx: BrokerContext, request: ListTransactionsRequest): ListTransactionsResponse {
  if (ctx.txns.loading) {
    return { throttleTimeMs: 0, errorCode: kafkaErrorCode('COORDINATOR_LOAD_IN_PROGRESS'), unknownStateFilters: [], transactionStates: [] };
  }
  const known: readonly string[] = TXN_STATES;
  const unknownStateFilters = request.stateFilters.filter((state) => !known.includes(state));
  const txns = ctx.txns.list({ states: request.stateFilters, producerIds: request.producerIdFilters, durationMs: request.durationFilter });
  return {
    throttleTimeMs: 0, errorCode: 0, unknownStateFilters,
    transactionStates: txns.map((txn) => ({ transactionalId: txn.transactionalId, producerId: txn.producerId, transactionState: txn.state })),
  };
}
