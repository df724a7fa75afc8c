// DeleteRecords (key 21), versions 0–2: descriptions transcribed from Kafka's
// DeleteRecordsRequest.json / DeleteRecordsResponse.json, restricted to the versions the broker supports.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const DELETE_RECORDS_REQUEST = {
  name: 'DeleteRecordsRequest', kind: 'request', apiKey: 21,
  validVersions: '0-2', flexibleVersions: '2+',
  fields: [
    { name: 'topics', type: '[]DeleteRecordsTopic', versions: '0+', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'partitions', type: '[]DeleteRecordsPartition', versions: '0+', fields: [
        { name: 'partitionIndex', type: 'int32', versions: '0+' },
        { name: 'offset', type: 'int64', versions: '0+', saturate: true },
      ] },
    ] },
    { name: 'timeoutMs', type: 'int32', versions: '0+' },
  ],
} as const satisfies MessageDescription;

export const DELETE_RECORDS_RESPONSE = {
  name: 'DeleteRecordsResponse', kind: 'response', apiKey: 21,
  validVersions: '0-2', flexibleVersions: '2+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'topics', type: '[]DeleteRecordsTopicResult', versions: '0+', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'partitions', type: '[]DeleteRecordsPartitionResult', versions: '0+', fields: [
        { name: 'partitionIndex', type: 'int32', versions: '0+' },
        { name: 'lowWatermark', type: 'int64', versions: '0+' },
        { name: 'errorCode', type: 'int16', versions: '0+' },
      ] },
    ] },
  ],
} as const satisfies MessageDescription;

export type DeleteRecordsRequest = MessageOf<typeof DELETE_RECORDS_REQUEST>;
export type DeleteRecordsResponse = MessageOf<typeof DELETE_RECORDS_RESPONSE>;

// Struct types, by the broker's names.
export type DeleteRecordsTopic = DeleteRecordsRequest['topics'][number];
export type DeleteRecordsPartition = DeleteRecordsTopic['partitions'][number];
export type DeleteRecordsTopicResult = DeleteRecordsResponse['topics'][number];
export type DeleteRecordsPartitionResult = DeleteRecordsTopicResult['partitions'][number];
