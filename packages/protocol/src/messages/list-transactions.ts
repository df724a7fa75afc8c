// ListTransactions (key 66), versions 0–1: descriptions transcribed from Kafka's
// ListTransactionsRequest.json / ListTransactionsResponse.json (apache/kafka 1eb7644).

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const LIST_TRANSACTIONS_REQUEST = {
  name: 'ListTransactionsRequest', kind: 'request', apiKey: 66,
  validVersions: '0-1', flexibleVersions: '0+',
  fields: [
    { name: 'stateFilters', type: '[]string', versions: '0+' },
    { name: 'producerIdFilters', type: '[]int64', versions: '0+' },
    { name: 'durationFilter', type: 'int64', versions: '1+', default: -1 },
  ],
} as const satisfies MessageDescription;

export const LIST_TRANSACTIONS_RESPONSE = {
  name: 'ListTransactionsResponse', kind: 'response', apiKey: 66,
  validVersions: '0-1', flexibleVersions: '0+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'unknownStateFilters', type: '[]string', versions: '0+' },
    { name: 'transactionStates', type: '[]TransactionState', versions: '0+', fields: [
      { name: 'transactionalId', type: 'string', versions: '0+' },
      { name: 'producerId', type: 'int64', versions: '0+' },
      { name: 'transactionState', type: 'string', versions: '0+' },
    ] },
  ],
} as const satisfies MessageDescription;

export type ListTransactionsRequest = MessageOf<typeof LIST_TRANSACTIONS_REQUEST>;
export type ListTransactionsResponse = MessageOf<typeof LIST_TRANSACTIONS_RESPONSE>;
