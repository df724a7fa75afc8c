// The consumer protocol's member metadata (ConsumerProtocolSubscription) and
// assignment (ConsumerProtocolAssignment), versions 0–3: descriptions
// transcribed from Kafka's ConsumerProtocolSubscription.json /
// ConsumerProtocolAssignment.json (apache/kafka 1eb7644), "data" messages
// carried as opaque bytes in JoinGroup's protocol metadata and SyncGroup's
// assignment. On the wire each is an int16 version followed by the struct at
// that version (consumer-protocol.ts reads and writes that prefix).

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const CONSUMER_PROTOCOL_SUBSCRIPTION = {
  name: 'ConsumerProtocolSubscription', kind: 'data', apiKey: -1,
  validVersions: '0-3', flexibleVersions: 'none',
  fields: [
    { name: 'topics', type: '[]string', versions: '0+' },
    { name: 'userData', type: 'bytes', versions: '0+', nullableVersions: '0+', default: null },
    { name: 'ownedPartitions', type: '[]TopicPartition', versions: '1+', ignorable: true, fields: [
      { name: 'topic', type: 'string', versions: '1+' },
      { name: 'partitions', type: '[]int32', versions: '1+' },
    ] },
    { name: 'generationId', type: 'int32', versions: '2+', default: -1, ignorable: true },
    { name: 'rackId', type: 'string', versions: '3+', nullableVersions: '3+', default: null, ignorable: true },
  ],
} as const satisfies MessageDescription;

export const CONSUMER_PROTOCOL_ASSIGNMENT = {
  name: 'ConsumerProtocolAssignment', kind: 'data', apiKey: -1,
  validVersions: '0-3', flexibleVersions: 'none',
  fields: [
    { name: 'assignedPartitions', type: '[]TopicPartition', versions: '0+', fields: [
      { name: 'topic', type: 'string', versions: '0+' },
      { name: 'partitions', type: '[]int32', versions: '0+' },
    ] },
    { name: 'userData', type: 'bytes', versions: '0+', nullableVersions: '0+', default: null },
  ],
} as const satisfies MessageDescription;

export type ConsumerProtocolSubscription = MessageOf<typeof CONSUMER_PROTOCOL_SUBSCRIPTION>;
export type ConsumerProtocolAssignment = MessageOf<typeof CONSUMER_PROTOCOL_ASSIGNMENT>;
