// Error mapping shared by the transaction handlers.

import type { BrokerErrorName } from '../../protocol/index.js';

/** Kafka answers PRODUCER_FENCED as INVALID_PRODUCER_EPOCH to versions before the one that added it. */
export function fencedBefore(firstVersion: number, version: number, error: BrokerErrorName): BrokerErrorName {
  return error === 'PRODUCER_FENCED' && version < firstVersion ? 'INVALID_PRODUCER_EPOCH' : error;
}
