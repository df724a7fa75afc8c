// FindCoordinator: node 0 coordinates every group. v0-3 carry one key and a
// top-level answer; v4+ carry coordinatorKeys and one Coordinator entry per
// key. Key type 0 (group) only: there is no transaction coordinator yet, so
// key type 1 is COORDINATOR_NOT_AVAILABLE, any other INVALID_REQUEST. The
// coordinator is named even while it loads (Kafka does the same: the group
// calls then answer COORDINATOR_LOAD_IN_PROGRESS).

import type { FindCoordinatorRequest, FindCoordinatorResponse } from '@seglog/protocol';
import { kafkaErrorCode, type BrokerErrorName } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';
import { NODE_ID } from '../broker-context.js';

const KEY_TYPE_GROUP = 0;
const KEY_TYPE_TRANSACTION = 1;

export function handleFindCoordinator(ctx: BrokerContext, request: FindCoordinatorRequest, version: number): FindCoordinatorResponse {
  const { host, port } = ctx.advertised;
  const error: BrokerErrorName = request.keyType === KEY_TYPE_GROUP ? 'NONE'
    : request.keyType === KEY_TYPE_TRANSACTION ? 'COORDINATOR_NOT_AVAILABLE' : 'INVALID_REQUEST';
  const ok = error === 'NONE';
  const message = ok ? null : error === 'INVALID_REQUEST' ? `unknown key type ${request.keyType}` : 'no transaction coordinator';
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
