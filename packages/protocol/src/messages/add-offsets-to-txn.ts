// AddOffsetsToTxn (key 25), versions 0–4: descriptions transcribed from Kafka's
// AddOffsetsToTxnRequest.json / AddOffsetsToTxnResponse.json (apache/kafka 1eb7644).

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const ADD_OFFSETS_TO_TXN_REQUEST = {
  name: 'AddOffsetsToTxnRequest', kind: 'request', apiKey: 25,
  validVersions: '0-4', flexibleVersions: '3+',
  fields: [
    { name: 'transactionalId', type: 'string', versions: '0+' },
    { name: 'producerId', type: 'int64', versions: '0+' },
    { name: 'producerEpoch', type: 'int16', versions: '0+' },
    { name: 'groupId', type: 'string', versions: '0+' },
  ],
} as const satisfies MessageDescription;

export const ADD_OFFSETS_TO_TXN_RESPONSE = {
  name: 'AddOffsetsToTxnResponse', kind: 'response', apiKey: 25,
  validVersions: '0-4', flexibleVersions: '3+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
  ],
} as const satisfies MessageDescription;

export type AddOffsetsToTxnRequest = MessageOf<typeof ADD_OFFSETS_TO_TXN_REQUEST>;
export type AddOffsetsToTxnResponse = MessageOf<typeof ADD_OFFSETS_TO_TXN_RESPONSE>;
