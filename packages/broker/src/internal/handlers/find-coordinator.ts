// FindCoordinator: node 0 coordinates every group (key type 0) and every
// transactional id (key type 1); any other key type is INVALID_REQUEST. v0-3
// carry one key and a top-level answer; v4+ carry coordinatorKeys and one
// Coordinator entry per key. The coordinator is named even while it loads
// (Kafka does the same: the calls then answer COORDINATOR_LOAD_IN_PROGRESS).

import type { FindCoordinatorRequest, FindCoordinatorResponse } from '@seglog/protocol';
import { kafkaErrorCode, type BrokerErrorName } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';
import { NODE_ID } from '../broker-context.js';

const KEY_TYPE_GROUP = 0;
const KEY_TYPE_TRANSACTION = 1;

export function handleFindCoordinator(ctx: BrokerContext, request: FindCoordinatorRequest, version: number): FindCoordinatorResponse {
  const { host, port } = ctx.advertised;
  const error: BrokerErrorName = request.keyType === KEY_TYPE_GROUP || request.keyType === KEY_TYPE_TRANSACTION ? 'NONE' : 'INVALID_REQUEST';
  const ok = error === 'NONE';
  const message = ok ? null : `unknown key type ${request.keyType}`;
  if (version < 4) {
    return {
      throttleTimeMs: 0, errorCode: kafkaErrorCode(error), errorMessage: version >= 1 ? message : '',
      nodeId: ok ? NODE_ID : -1, host: ok ? host : '', port: ok ? port : -1, coordinators: [],
    };
  }
  return {
    throttleTimeMs: 0, errorCode: 0, errorMessage: '', nodeId: 0, host: '', port: 0,
    coordinators: request.coordinatorKeys.map((key) => ({
      key, nodeId: ok ? NODE_ID : -1, host: ok ? host : '', port: ok ? port : -1, errorCode: kafkaErrorCode(error), errorMessage: message,
    })),
  };
}
