// AddPartitionsToTxn (key 24), versions 0–5: descriptions transcribed from Kafka's
// AddPartitionsToTxnRequest.json / AddPartitionsToTxnResponse.json (apache/kafka 1eb7644).
// v0–3 carry one transaction (the V3AndBelow* fields, what clients send); v4+ batch several
// transactions and add VerifyOnly (Kafka's brokers send these to the coordinator). v5 only adds
// the TRANSACTION_ABORTABLE error code.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const ADD_PARTITIONS_TO_TXN_REQUEST = {
  name: 'AddPartitionsToTxnRequest', kind: 'request', apiKey: 24,
  validVersions: '0-5', flexibleVersions: '3+',
  fields: [
    { name: 'transactions', type: '[]AddPartitionsToTxnTransaction', versions: '4+', fields: [
      { name: 'transactionalId', type: 'string', versions: '4+' },
      { name: 'producerId', type: 'int64', versions: '4+' },
      { name: 'producerEpoch', type: 'int16', versions: '4+' },
      { name: 'verifyOnly', type: 'bool', versions: '4+', default: false },
      { name: 'topics', type: '[]AddPartitionsToTxnTopic', versions: '4+', fields: [
        { name: 'name', type: 'string', versions: '0+' },
        { name: 'partitions', type: '[]int32', versions: '0+' },
      ] },
    ] },
    { name: 'v3AndBelowTransactionalId', type: 'string', versions: '0-3' },
    { name: 'v3AndBelowProducerId', type: 'int64', versions: '0-3' },
    { name: 'v3AndBelowProducerEpoch', type: 'int16', versions: '0-3' },
    { name: 'v3AndBelowTopics', type: '[]AddPartitionsToTxnTopic', versions: '0-3', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'partitions', type: '[]int32', versions: '0+' },
    ] },
  ],
} as const satisfies MessageDescription;

export const ADD_PARTITIONS_TO_TXN_RESPONSE = {
  name: 'AddPartitionsToTxnResponse', kind: 'response', apiKey: 24,
  validVersions: '0-5', flexibleVersions: '3+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '4+', ignorable: true },
    { name: 'resultsByTransaction', type: '[]AddPartitionsToTxnResult', versions: '4+', fields: [
      { name: 'transactionalId', type: 'string', versions: '4+' },
      { name: 'topicResults', type: '[]AddPartitionsToTxnTopicResult', versions: '4+', fields: [
        { name: 'name', type: 'string', versions: '0+' },
        { name: 'resultsByPartition', type: '[]AddPartitionsToTxnPartitionResult', versions: '0+', fields: [
          { name: 'partitionIndex', type: 'int32', versions: '0+' },
          { name: 'partitionErrorCode', type: 'int16', versions: '0+' },
        ] },
      ] },
    ] },
    { name: 'resultsByTopicV3AndBelow', type: '[]AddPartitionsToTxnTopicResult', versions: '0-3', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'resultsByPartition', type: '[]AddPartitionsToTxnPartitionResult', versions: '0+', fields: [
        { name: 'partitionIndex', type: 'int32', versions: '0+' },
        { name: 'partitionErrorCode', type: 'int16', versions: '0+' },
      ] },
    ] },
  ],
} as const satisfies MessageDescription;

export type AddPartitionsToTxnRequest = MessageOf<typeof ADD_PARTITIONS_TO_TXN_REQUEST>;
export type AddPartitionsToTxnResponse = MessageOf<typeof ADD_PARTITIONS_TO_TXN_RESPONSE>;
