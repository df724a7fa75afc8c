// OffsetFetch (key 9), versions 0–8: descriptions transcribed from Kafka's
// OffsetFetchRequest.json / OffsetFetchResponse.json (apache/kafka 1eb7644), restricted to the versions the broker supports.
// v8 fetches several groups at once (groups[]); v9 (KIP-848 member epoch) is not offered.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const OFFSET_FETCH_REQUEST = {
  name: 'OffsetFetchRequest', kind: 'request', apiKey: 9,
  validVersions: '0-8', flexibleVersions: '6+',
  fields: [
    { name: 'groupId', type: 'string', versions: '0-7' },
    { name: 'topics', type: '[]OffsetFetchRequestTopic', versions: '0-7', nullableVersions: '2-7', fields: [
      { name: 'name', type: 'string', versions: '0-7' },
      { name: 'partitionIndexes', type: '[]int32', versions: '0-7' },
    ] },
    { name: 'groups', type: '[]OffsetFetchRequestGroup', versions: '8+', fields: [
      { name: 'groupId', type: 'string', versions: '8+' },
      { name: 'topics', type: '[]OffsetFetchRequestTopics', versions: '8+', nullableVersions: '8+', fields: [
        { name: 'name', type: 'string', versions: '8+' },
        { name: 'partitionIndexes', type: '[]int32', versions: '8+' },
      ] },
    ] },
    { name: 'requireStable', type: 'bool', versions: '7+', default: false },
  ],
} as const satisfies MessageDescription;

export const OFFSET_FETCH_RESPONSE = {
  name: 'OffsetFetchResponse', kind: 'response', apiKey: 9,
  validVersions: '0-8', flexibleVersions: '6+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '3+' },
    { name: 'topics', type: '[]OffsetFetchResponseTopic', versions: '0-7', fields: [
      { name: 'name', type: 'string', versions: '0-7' },
      { name: 'partitions', type: '[]OffsetFetchResponsePartition', versions: '0-7', fields: [
        { name: 'partitionIndex', type: 'int32', versions: '0-7' },
        { name: 'committedOffset', type: 'int64', versions: '0-7' },
        { name: 'committedLeaderEpoch', type: 'int32', versions: '5-7', default: -1 },
        { name: 'metadata', type: 'string', versions: '0-7', nullableVersions: '0-7' },
        { name: 'errorCode', type: 'int16', versions: '0-7' },
      ] },
    ] },
    { name: 'errorCode', type: 'int16', versions: '2-7', default: 0 },
    { name: 'groups', type: '[]OffsetFetchResponseGroup', versions: '8+', fields: [
      { name: 'groupId', type: 'string', versions: '8+' },
      { name: 'topics', type: '[]OffsetFetchResponseTopics', versions: '8+', fields: [
        { name: 'name', type: 'string', versions: '8+' },
        { name: 'partitions', type: '[]OffsetFetchResponsePartitions', versions: '8+', fields: [
          { name: 'partitionIndex', type: 'int32', versions: '8+' },
          { name: 'committedOffset', type: 'int64', versions: '8+' },
          { name: 'committedLeaderEpoch', type: 'int32', versions: '8+', default: -1 },
          { name: 'metadata', type: 'string', versions: '8+', nullableVersions: '8+' },
          { name: 'errorCode', type: 'int16', versions: '8+' },
        ] },
      ] },
      { name: 'errorCode', type: 'int16', versions: '8+', default: 0 },
    ] },
  ],
} as const satisfies MessageDescription;

export type OffsetFetchRequest = MessageOf<typeof OFFSET_FETCH_REQUEST>;
export type OffsetFetchResponse = MessageOf<typeof OFFSET_FETCH_RESPONSE>;
