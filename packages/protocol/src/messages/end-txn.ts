// EndTxn (key 26), versions 0–4: descriptions transcribed from Kafka's
// EndTxnRequest.json / EndTxnResponse.json (apache/kafka 1eb7644), restricted to the versions the broker supports.
// v5 (KIP-890 part 2, an epoch bump on every transaction, unstable at that commit) is not offered.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const END_TXN_REQUEST = {
  name: 'EndTxnRequest', kind: 'request', apiKey: 26,
  validVersions: '0-4', flexibleVersions: '3+',
  fields: [
    { name: 'transactionalId', type: 'string', versions: '0+' },
    { name: 'producerId', type: 'int64', versions: '0+' },
    { name: 'producerEpoch', type: 'int16', versions: '0+' },
    { name: 'committed', type: 'bool', versions: '0+' },
  ],
} as const satisfies MessageDescription;

export const END_TXN_RESPONSE = {
  name: 'EndTxnResponse', kind: 'response', apiKey: 26,
  validVersions: '0-4', flexibleVersions: '3+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'producerId', type: 'int64', versions: '5+', default: -1, ignorable: true },
    { name: 'producerEpoch', type: 'int16', versions: '5+', default: -1, ignorable: true },
  ],
} as const satisfies MessageDescription;

export type EndTxnRequest = MessageOf<typeof END_TXN_REQUEST>;
export type EndTxnResponse = MessageOf<typeof END_TXN_RESPONSE>;
