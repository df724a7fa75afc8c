// DescribeCluster (key 60), versions 0–1 (flexible from 0): descriptions
// transcribed from Kafka's DescribeClusterRequest.json / DescribeClusterResponse.json.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const DESCRIBE_CLUSTER_REQUEST = {
  name: 'DescribeClusterRequest', kind: 'request', apiKey: 60,
  validVersions: '0-1', flexibleVersions: '0+',
  fields: [
    { name: 'includeClusterAuthorizedOperations', type: 'bool', versions: '0+' },
    { name: 'endpointType', type: 'int8', versions: '1+', default: 1 },
  ],
} as const satisfies MessageDescription;

export const DESCRIBE_CLUSTER_RESPONSE = {
  name: 'DescribeClusterResponse', kind: 'response', apiKey: 60,
  validVersions: '0-1', flexibleVersions: '0+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
    { name: 'endpointType', type: 'int8', versions: '1+', default: 1 },
    { name: 'clusterId', type: 'string', versions: '0+' },
    { name: 'controllerId', type: 'int32', versions: '0+', default: -1 },
    { name: 'brokers', type: '[]DescribeClusterBroker', versions: '0+', fields: [
      { name: 'brokerId', type: 'int32', versions: '0+' },
      { name: 'host', type: 'string', versions: '0+' },
      { name: 'port', type: 'int32', versions: '0+' },
      { name: 'rack', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
    ] },
    { name: 'clusterAuthorizedOperations', type: 'int32', versions: '0+', default: -2147483648 },
  ],
} as const satisfies MessageDescription;

export type DescribeClusterRequest = MessageOf<typeof DESCRIBE_CLUSTER_REQUEST>;
export type DescribeClusterResponse = MessageOf<typeof DESCRIBE_CLUSTER_RESPONSE>;
