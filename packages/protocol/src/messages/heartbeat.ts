// Heartbeat (key 12), versions 0–4: descriptions transcribed from Kafka's
// HeartbeatRequest.json / HeartbeatResponse.json (apache/kafka 1eb7644), restricted to the versions the broker supports.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const HEARTBEAT_REQUEST = {
  name: 'HeartbeatRequest', kind: 'request', apiKey: 12,
  validVersions: '0-4', flexibleVersions: '4+',
  fields: [
    { name: 'groupId', type: 'string', versions: '0+' },
    { name: 'generationId', type: 'int32', versions: '0+' },
    { name: 'memberId', type: 'string', versions: '0+' },
    { name: 'groupInstanceId', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
  ],
} as const satisfies MessageDescription;

export const HEARTBEAT_RESPONSE = {
  name: 'HeartbeatResponse', kind: 'response', apiKey: 12,
  validVersions: '0-4', flexibleVersions: '4+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '1+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
  ],
} as const satisfies MessageDescription;

export type HeartbeatRequest = MessageOf<typeof HEARTBEAT_REQUEST>;
export type HeartbeatResponse = MessageOf<typeof HEARTBEAT_RESPONSE>;
