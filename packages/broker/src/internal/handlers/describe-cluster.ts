// DescribeCluster: the one broker (node 0 at the advertised address), which
// is also the controller. Kafka's endpoint-type rule (AuthHelper
// .computeDescribeClusterResponse): a broker answers endpoint type 1
// (brokers); type 2 (controllers) is MISMATCHED_ENDPOINT_TYPE, any other
// UNSUPPORTED_ENDPOINT_TYPE, both INVALID_REQUEST in v0. No ACLs: the
// authorized-operations field keeps its schema default.

import { kafkaErrorCode } from '../../protocol/index.js';
import type { DescribeClusterRequest, DescribeClusterResponse } from '@seglog/protocol';
import type { BrokerContext } from '../broker-context.js';
import { CLUSTER_ID, NODE_ID } from '../broker-context.js';

const BROKERS = 1;
const CONTROLLERS = 2;
const UNAUTHORIZED_DEFAULT = -2147483648;

export function handleDescribeCluster(ctx: BrokerContext, request: DescribeClusterRequest, version: number): DescribeClusterResponse {
  const base: DescribeClusterResponse = {
    throttleTimeMs: 0, errorCode: 0, errorMessage: null, endpointType: request.endpointType, clusterId: CLUSTER_ID, controllerId: -1,
    brokers: [], clusterAuthorizedOperations: UNAUTHORIZED_DEFAULT,
  };
  if (request.endpointType !== BROKERS) {
    const error = version === 0 ? 'INVALID_REQUEST' : request.endpointType === CONTROLLERS ? 'MISMATCHED_ENDPOINT_TYPE' : 'UNSUPPORTED_ENDPOINT_TYPE';
    const message = request.endpointType === CONTROLLERS
      ? 'The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER'
      : `Unsupported endpoint type ${request.endpointType}`;
    return { ...base, errorCode: kafkaErrorCode(error), errorMessage: message };
  }
  return {
    ...base, controllerId: NODE_ID,
    brokers: [{ brokerId: NODE_ID, host: ctx.advertised.host, port: ctx.advertised.port, rack: null }],
  };
}
