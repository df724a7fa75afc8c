// Heartbeat → GroupCoordinator.heartbeat (restarts the member's session timer).

import type { HeartbeatRequest, HeartbeatResponse } from '@seglog/protocol';
import { kafkaErrorCode } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';

export function handleHeartbeat(ctx: BrokerContext, request: HeartbeatRequest): HeartbeatResponse {
  return { throttleTimeMs: 0, errorCode: kafkaErrorCode(ctx.groups.heartbeat(request)) };
}
