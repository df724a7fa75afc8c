// Produce (key 0), versions 3–9: descriptions transcribed from Kafka's
// ProduceRequest.json / ProduceResponse.json, restricted to the versions the broker supports.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const PRODUCE_REQUEST = {
  name: 'ProduceRequest', kind: 'request', apiKey: 0,
  validVersions: '3-9', flexibleVersions: '9+',
  fields: [
    { name: 'transactionalId', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
    { name: 'acks', type: 'int16', versions: '0+' },
    { name: 'timeoutMs', type: 'int32', versions: '0+' },
    { name: 'topicData', type: '[]TopicProduceData', versions: '0+', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'partitionData', type: '[]PartitionProduceData', versions: '0+', fields: [
        { name: 'index', type: 'int32', versions: '0+' },
        { name: 'records', type: 'records', versions: '0+', nullableVersions: '0+' },
      ] },
    ] },
  ],
} as const satisfies MessageDescription;

export const PRODUCE_RESPONSE = {
  name: 'ProduceResponse', kind: 'response', apiKey: 0,
  validVersions: '3-9', flexibleVersions: '9+',
  fields: [
    { name: 'responses', type: '[]TopicProduceResponse', versions: '0+', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'partitionResponses', type: '[]PartitionProduceResponse', versions: '0+', fields: [
        { name: 'index', type: 'int32', versions: '0+' },
        { name: 'errorCode', type: 'int16', versions: '0+' },
        { name: 'baseOffset', type: 'int64', versions: '0+' },
        { name: 'logAppendTimeMs', type: 'int64', versions: '2+', default: -1 },
        { name: 'logStartOffset', type: 'int64', versions: '5+', default: -1 },
        { name: 'recordErrors', type: '[]BatchIndexAndErrorMessage', versions: '8+', fields: [
          { name: 'batchIndex', type: 'int32', versions: '8+' },
          { name: 'batchIndexErrorMessage', type: 'string', versions: '8+', nullableVersions: '8+', default: null },
        ] },
        { name: 'errorMessage', type: 'string', versions: '8+', nullableVersions: '8+', default: null },
      ] },
    ] },
    { name: 'throttleTimeMs', type: 'int32', versions: '1+', default: 0 },
  ],
} as const satisfies MessageDescription;

export type ProduceRequest = MessageOf<typeof PRODUCE_REQUEST>;
export type ProduceResponse = MessageOf<typeof PRODUCE_RESPONSE>;

// Struct types, by the broker's names.
export type ProduceTopicData = ProduceRequest['topicData'][number];
export type ProducePartitionData = ProduceTopicData['partitionData'][number];
export type ProduceTopicResponse = ProduceResponse['responses'][number];
export type ProducePartitionResponse = ProduceTopicResponse['partitionResponses'][number];
export type ProduceRecordError = ProducePartitionResponse['recordErrors'][number];
