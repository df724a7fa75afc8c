// InitProducerId: idempotent producers get a fresh producer id (from the
// counter persisted in the data directory, never reused across restarts) and
// epoch 0. A client that already holds an id and asks for an epoch bump
// (KIP-360: producerId/producerEpoch ≥ 0) keeps its id with epoch + 1 (a new
// id when the epoch would overflow). Transactional ids are refused with
// INVALID_REQUEST: there is no transaction coordinator yet (FindCoordinator,
// AddPartitionsToTxn, EndTxn and WriteTxnMarkers are not implemented), so a
// transactional producer could never commit.

import { kafkaErrorCode } from '../../protocol/index.js';
import type { InitProducerIdRequest, InitProducerIdResponse } from '@seglog/protocol';
import type { BrokerContext } from '../broker-context.js';
import { errorCodeOf } from '../errors.js';

const MAX_EPOCH = 32766;

export async function handleInitProducerId(ctx: BrokerContext, request: InitProducerIdRequest): Promise<InitProducerIdResponse> {
  if (request.transactionalId !== null) {
    return { throttleTimeMs: 0, errorCode: kafkaErrorCode('INVALID_REQUEST'), producerId: -1, producerEpoch: -1 };
  }
  if (request.producerId >= 0 && request.producerEpoch >= 0 && request.producerEpoch < MAX_EPOCH) {
    return { throttleTimeMs: 0, errorCode: 0, producerId: request.producerId, producerEpoch: request.producerEpoch + 1 };
  }
  try {
    return { throttleTimeMs: 0, errorCode: 0, producerId: await ctx.allocateProducerId(), producerEpoch: 0 };
  } catch (error) {
    return { throttleTimeMs: 0, errorCode: errorCodeOf(error), producerId: -1, producerEpoch: -1 };
  }
}
