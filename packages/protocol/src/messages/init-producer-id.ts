// InitProducerId (key 22), versions 0–4: descriptions transcribed from Kafka's
// InitProducerIdRequest.json / InitProducerIdResponse.json, restricted to the versions the broker supports.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const INIT_PRODUCER_ID_REQUEST = {
  name: 'InitProducerIdRequest', kind: 'request', apiKey: 22,
  validVersions: '0-4', flexibleVersions: '2+',
  fields: [
    { name: 'transactionalId', type: 'string', versions: '0+', nullableVersions: '0+' },
    { name: 'transactionTimeoutMs', type: 'int32', versions: '0+' },
    { name: 'producerId', type: 'int64', versions: '3+', default: -1 },
    { name: 'producerEpoch', type: 'int16', versions: '3+', default: -1 },
  ],
} as const satisfies MessageDescription;

export const INIT_PRODUCER_ID_RESPONSE = {
  name: 'InitProducerIdResponse', kind: 'response', apiKey: 22,
  validVersions: '0-4', flexibleVersions: '2+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'producerId', type: 'int64', versions: '0+', default: -1 },
    { name: 'producerEpoch', type: 'int16', versions: '0+' },
  ],
} as const satisfies MessageDescription;

export type InitProducerIdRequest = MessageOf<typeof INIT_PRODUCER_ID_REQUEST>;
export type InitProducerIdResponse = MessageOf<typeof INIT_PRODUCER_ID_RESPONSE>;
