// ListOffsets (key 2), versions 0–7: descriptions transcribed from Kafka's
// ListOffsetsRequest.json / ListOffsetsResponse.json, restricted to the versions the broker supports.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const LIST_OFFSETS_REQUEST = {
  name: 'ListOffsetsRequest', kind: 'request', apiKey: 2,
  validVersions: '0-7', flexibleVersions: '6+',
  fields: [
    { name: 'replicaId', type: 'int32', versions: '0+' },
    { name: 'isolationLevel', type: 'int8', versions: '2+' },
    { name: 'topics', type: '[]ListOffsetsTopic', versions: '0+', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'partitions', type: '[]ListOffsetsPartition', versions: '0+', fields: [
        { name: 'partitionIndex', type: 'int32', versions: '0+' },
        { name: 'currentLeaderEpoch', type: 'int32', versions: '4+', default: -1 },
        { name: 'timestamp', type: 'int64', versions: '0+', saturate: true },
        { name: 'maxNumOffsets', type: 'int32', versions: '0', default: 1 },
      ] },
    ] },
  ],
} as const satisfies MessageDescription;

export const LIST_OFFSETS_RESPONSE = {
  name: 'ListOffsetsResponse', kind: 'response', apiKey: 2,
  validVersions: '0-7', flexibleVersions: '6+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '2+' },
    { name: 'topics', type: '[]ListOffsetsTopicResponse', versions: '0+', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'partitions', type: '[]ListOffsetsPartitionResponse', versions: '0+', fields: [
        { name: 'partitionIndex', type: 'int32', versions: '0+' },
        { name: 'errorCode', type: 'int16', versions: '0+' },
        { name: 'oldStyleOffsets', type: '[]int64', versions: '0' },
        { name: 'timestamp', type: 'int64', versions: '1+', default: -1 },
        { name: 'offset', type: 'int64', versions: '1+', default: -1 },
        { name: 'leaderEpoch', type: 'int32', versions: '4+', default: -1 },
      ] },
    ] },
  ],
} as const satisfies MessageDescription;

export type ListOffsetsRequest = MessageOf<typeof LIST_OFFSETS_REQUEST>;
export type ListOffsetsResponse = MessageOf<typeof LIST_OFFSETS_RESPONSE>;

// Struct types, by the broker's names.
export type ListOffsetsTopic = ListOffsetsRequest['topics'][number];
export type ListOffsetsPartition = ListOffsetsTopic['partitions'][number];
export type ListOffsetsTopicResponse = ListOffsetsResponse['topics'][number];
export type ListOffsetsPartitionResponse = ListOffsetsTopicResponse['partitions'][number];
