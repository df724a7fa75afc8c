// EndTxn: commit or abort; answered once the markers are on every partition
// of the transaction (txn/transaction-coordinator.ts). PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH before v2.

import type { EndTxnRequest, EndTxnResponse } from '@seglog/protocol';
import { kafkaErrorCode } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';
import { fencedBefore } from './txn-errors.js';

export async function handleEndTxn(ctx: BrokerContext, request: EndTxnRequest, version: number): Promise<EndTxnResponse> {
  const error = await ctx.txns.endTxn(request, request.committed);
  return { throttleTimeMs: 0, errorCode: kafkaErrorCode(fencedBefore(2, version, error)), producerId: -1, producerEpoch: -1 };
}
