// CreatePartitions (key 37), versions 0–3: descriptions transcribed from
// Kafka's CreatePartitionsRequest.json / CreatePartitionsResponse.json.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const CREATE_PARTITIONS_REQUEST = {
  name: 'CreatePartitionsRequest', kind: 'request', apiKey: 37,
  validVersions: '0-3', flexibleVersions: '2+',
  fields: [
    { name: 'topics', type: '[]CreatePartitionsTopic', versions: '0+', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'count', type: 'int32', versions: '0+' },
      { name: 'assignments', type: '[]CreatePartitionsAssignment', versions: '0+', nullableVersions: '0+', fields: [
        { name: 'brokerIds', type: '[]int32', versions: '0+' },
      ] },
    ] },
    { name: 'timeoutMs', type: 'int32', versions: '0+' },
    { name: 'validateOnly', type: 'bool', versions: '0+' },
  ],
} as const satisfies MessageDescription;

export const CREATE_PARTITIONS_RESPONSE = {
  name: 'CreatePartitionsResponse', kind: 'response', apiKey: 37,
  validVersions: '0-3', flexibleVersions: '2+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'results', type: '[]CreatePartitionsTopicResult', versions: '0+', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'errorCode', type: 'int16', versions: '0+' },
      { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
    ] },
  ],
} as const satisfies MessageDescription;

export type CreatePartitionsRequest = MessageOf<typeof CREATE_PARTITIONS_REQUEST>;
export type CreatePartitionsResponse = MessageOf<typeof CREATE_PARTITIONS_RESPONSE>;

// Struct types, by the broker's names.
export type CreatePartitionsTopic = CreatePartitionsRequest['topics'][number];
export type CreatePartitionsTopicResult = CreatePartitionsResponse['results'][number];
