// DescribeTransactions (key 65), version 0: descriptions transcribed from Kafka's
// DescribeTransactionsRequest.json / DescribeTransactionsResponse.json (apache/kafka 1eb7644).

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const DESCRIBE_TRANSACTIONS_REQUEST = {
  name: 'DescribeTransactionsRequest', kind: 'request', apiKey: 65,
  validVersions: '0', flexibleVersions: '0+',
  fields: [
    { name: 'transactionalIds', type: '[]string', versions: '0+' },
  ],
} as const satisfies MessageDescription;

export const DESCRIBE_TRANSACTIONS_RESPONSE = {
  name: 'DescribeTransactionsResponse', kind: 'response', apiKey: 65,
  validVersions: '0', flexibleVersions: '0+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'transactionStates', type: '[]TransactionState', versions: '0+', fields: [
      { name: 'errorCode', type: 'int16', versions: '0+' },
      { name: 'transactionalId', type: 'string', versions: '0+' },
      { name: 'transactionState', type: 'string', versions: '0+' },
      { name: 'transactionTimeoutMs', type: 'int32', versions: '0+' },
      { name: 'transactionStartTimeMs', type: 'int64', versions: '0+' },
      { name: 'producerId', type: 'int64', versions: '0+' },
      { name: 'producerEpoch', type: 'int16', versions: '0+' },
      { name: 'topics', type: '[]TopicData', versions: '0+', fields: [
        { name: 'topic', type: 'string', versions: '0+' },
        { name: 'partitions', type: '[]int32', versions: '0+' },
      ] },
    ] },
  ],
} as const satisfies MessageDescription;

export type DescribeTransactionsRequest = MessageOf<typeof DESCRIBE_TRANSACTIONS_REQUEST>;
export type DescribeTransactionsResponse = MessageOf<typeof DESCRIBE_TRANSACTIONS_RESPONSE>;
