// InitProducerId: idempotent producers (no transactional id) get a fresh
// producer id (from the counter persisted in the data directory, never reused
// across restarts) and epoch 0. A client that already holds an id and asks
// for an epoch bump (KIP-360: producerId/producerEpoch ≥ 0) keeps its id with
// epoch + 1 (a new id when the epoch would overflow). A transactional id goes
// to the transaction coordinator (epoch bump, fencing, abort of the open
// transaction: txn/transaction-coordinator.ts). PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH before v4, as in Kafka.

import { kafkaErrorCode } from '../../protocol/index.js';
import type { InitProducerIdRequest, InitProducerIdResponse } from '@seglog/protocol';
import type { BrokerContext } from '../broker-context.js';
import { errorCodeOf } from '../errors.js';
import { MAX_PRODUCER_EPOCH } from '../txn/transaction-coordinator.js';
import { fencedBefore } from './txn-errors.js';

export async function handleInitProducerId(ctx: BrokerContext, request: InitProducerIdRequest, version: number): Promise<InitProducerIdResponse> {
  if (request.transactionalId !== null) {
    const result = await ctx.txns.initProducerId(request.transactionalId, request.transactionTimeoutMs, request);
    return {
      throttleTimeMs: 0, errorCode: kafkaErrorCode(fencedBefore(4, version, result.error)), producerId: result.producerId, producerEpoch: result.producerEpoch,
    };
  }
  if (request.producerId >= 0 && request.producerEpoch >= 0 && request.producerEpoch < MAX_PRODUCER_EPOCH) {
    return { throttleTimeMs: 0, errorCode: 0, producerId: request.producerId, producerEpoch: request.producerEpoch + 1 };
  }
  try {
    return { throttleTimeMs: 0, errorCode: 0, producerId: await ctx.allocateProducerId(), producerEpoch: 0 };
  } catch (error) {
    return { throttleTimeMs: 0, errorCode: errorCodeOf(error), producerId: -1, producerEpoch: -1 };
  }
}
