// FindCoordinator (key 10), versions 0–4: descriptions transcribed from Kafka's
// FindCoordinatorRequest.json / FindCoordinatorResponse.json (apache/kafka 1eb7644), restricted to the versions the broker supports.
// v4+ batches: coordinatorKeys in, one Coordinator entry per key out. v5 (transaction version 2) and v6 (share groups) are not offered.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const FIND_COORDINATOR_REQUEST = {
  name: 'FindCoordinatorRequest', kind: 'request', apiKey: 10,
  validVersions: '0-4', flexibleVersions: '3+',
  fields: [
    { name: 'key', type: 'string', versions: '0-3' },
    { name: 'keyType', type: 'int8', versions: '1+', default: 0 },
    { name: 'coordinatorKeys', type: '[]string', versions: '4+' },
  ],
} as const satisfies MessageDescription;

export const FIND_COORDINATOR_RESPONSE = {
  name: 'FindCoordinatorResponse', kind: 'response', apiKey: 10,
  validVersions: '0-4', flexibleVersions: '3+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '1+' },
    { name: 'errorCode', type: 'int16', versions: '0-3' },
    { name: 'errorMessage', type: 'string', versions: '1-3', nullableVersions: '1-3' },
    { name: 'nodeId', type: 'int32', versions: '0-3' },
    { name: 'host', type: 'string', versions: '0-3' },
    { name: 'port', type: 'int32', versions: '0-3' },
    { name: 'coordinators', type: '[]Coordinator', versions: '4+', fields: [
      { name: 'key', type: 'string', versions: '4+' },
      { name: 'nodeId', type: 'int32', versions: '4+' },
      { name: 'host', type: 'string', versions: '4+' },
      { name: 'port', type: 'int32', versions: '4+' },
      { name: 'errorCode', type: 'int16', versions: '4+' },
      { name: 'errorMessage', type: 'string', versions: '4+', nullableVersions: '4+' },
    ] },
  ],
} as const satisfies MessageDescription;

export type FindCoordinatorRequest = MessageOf<typeof FIND_COORDINATOR_REQUEST>;
export type FindCoordinatorResponse = MessageOf<typeof FIND_COORDINATOR_RESPONSE>;
