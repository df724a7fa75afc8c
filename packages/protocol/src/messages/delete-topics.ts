// DeleteTopics (key 20), versions 0–6: descriptions transcribed from Kafka's
// DeleteTopicsRequest.json / DeleteTopicsResponse.json. Versions 0–5 name the
// topics (topicNames); v6 lists {name, topicId} pairs (topics), where a null
// name means "by topic id".

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const DELETE_TOPICS_REQUEST = {
  name: 'DeleteTopicsRequest', kind: 'request', apiKey: 20,
  validVersions: '0-6', flexibleVersions: '4+',
  fields: [
    { name: 'topics', type: '[]DeleteTopicState', versions: '6+', fields: [
      { name: 'name', type: 'string', versions: '6+', nullableVersions: '6+', default: null },
      { name: 'topicId', type: 'uuid', versions: '6+' },
    ] },
    { name: 'topicNames', type: '[]string', versions: '0-5', ignorable: true },
    { name: 'timeoutMs', type: 'int32', versions: '0+' },
  ],
} as const satisfies MessageDescription;

export const DELETE_TOPICS_RESPONSE = {
  name: 'DeleteTopicsResponse', kind: 'response', apiKey: 20,
  validVersions: '0-6', flexibleVersions: '4+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '1+', ignorable: true },
    { name: 'responses', type: '[]DeletableTopicResult', versions: '0+', fields: [
      { name: 'name', type: 'string', versions: '0+', nullableVersions: '6+' },
      { name: 'topicId', type: 'uuid', versions: '6+', ignorable: true },
      { name: 'errorCode', type: 'int16', versions: '0+' },
      { name: 'errorMessage', type: 'string', versions: '5+', nullableVersions: '5+', ignorable: true, default: null },
    ] },
  ],
} as const satisfies MessageDescription;

export type DeleteTopicsRequest = MessageOf<typeof DELETE_TOPICS_REQUEST>;
export type DeleteTopicsResponse = MessageOf<typeof DELETE_TOPICS_RESPONSE>;

// Struct types, by the broker's names.
export type DeleteTopicState = DeleteTopicsRequest['topics'][number];
export type DeletableTopicResult = DeleteTopicsResponse['responses'][number];
