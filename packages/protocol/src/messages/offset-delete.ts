// OffsetDelete (key 47), versions 0: descriptions transcribed from Kafka's
// OffsetDeleteRequest.json / OffsetDeleteResponse.json (apache/kafka 1eb7644), restricted to the versions the broker supports.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const OFFSET_DELETE_REQUEST = {
  name: 'OffsetDeleteRequest', kind: 'request', apiKey: 47,
  validVersions: '0', flexibleVersions: 'none',
  fields: [
    { name: 'groupId', type: 'string', versions: '0+' },
    { name: 'topics', type: '[]OffsetDeleteRequestTopic', versions: '0+', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'partitions', type: '[]OffsetDeleteRequestPartition', versions: '0+', fields: [
        { name: 'partitionIndex', type: 'int32', versions: '0+' },
      ] },
    ] },
  ],
} as const satisfies MessageDescription;

export const OFFSET_DELETE_RESPONSE = {
  name: 'OffsetDeleteResponse', kind: 'response', apiKey: 47,
  validVersions: '0', flexibleVersions: 'none',
  fields: [
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'topics', type: '[]OffsetDeleteResponseTopic', versions: '0+', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'partitions', type: '[]OffsetDeleteResponsePartition', versions: '0+', fields: [
        { name: 'partitionIndex', type: 'int32', versions: '0+' },
        { name: 'errorCode', type: 'int16', versions: '0+' },
      ] },
    ] },
  ],
} as const satisfies MessageDescription;

export type OffsetDeleteRequest = MessageOf<typeof OFFSET_DELETE_REQUEST>;
export type OffsetDeleteResponse = MessageOf<typeof OFFSET_DELETE_RESPONSE>;
