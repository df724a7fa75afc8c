// The table of described APIs: one request and one response description per
// API, compiled once into MessageCodecs. A description's validVersions are
// the versions the broker supports (its SUPPORTED_APIS table, and so its
// ApiVersions answer, is derived from this one) and a sub-range of Kafka's
// (the checker verifies it).

import { assert } from '@seglog/common';
import { inVersions, parseVersions, type MessageDescription, type VersionRange } from './description.js';
import { MessageCodec } from './message-codec.js';
import { API_VERSIONS_REQUEST, API_VERSIONS_RESPONSE, type ApiVersionsRequest, type ApiVersionsResponse } from './messages/api-versions.js';
import { CREATE_TOPICS_REQUEST, CREATE_TOPICS_RESPONSE, type CreateTopicsRequest, type CreateTopicsResponse } from './messages/create-topics.js';
import { DELETE_RECORDS_REQUEST, DELETE_RECORDS_RESPONSE, type DeleteRecordsRequest, type DeleteRecordsResponse } from './messages/delete-records.js';
import { FETCH_REQUEST, FETCH_RESPONSE, type FetchRequest, type FetchResponse } from './messages/fetch.js';
import { FIND_COORDINATOR_REQUEST, FIND_COORDINATOR_RESPONSE, type FindCoordinatorRequest, type FindCoordinatorResponse } from './messages/find-coordinator.js';
import { JOIN_GROUP_REQUEST, JOIN_GROUP_RESPONSE, type JoinGroupRequest, type JoinGroupResponse } from './messages/join-group.js';
import { SYNC_GROUP_REQUEST, SYNC_GROUP_RESPONSE, type SyncGroupRequest, type SyncGroupResponse } from './messages/sync-group.js';
import { HEARTBEAT_REQUEST, HEARTBEAT_RESPONSE, type HeartbeatRequest, type HeartbeatResponse } from './messages/heartbeat.js';
import { LEAVE_GROUP_REQUEST, LEAVE_GROUP_RESPONSE, type LeaveGroupRequest, type LeaveGroupResponse } from './messages/leave-group.js';
import { OFFSET_COMMIT_REQUEST, OFFSET_COMMIT_RESPONSE, type OffsetCommitRequest, type OffsetCommitResponse } from './messages/offset-commit.js';
import { OFFSET_FETCH_REQUEST, OFFSET_FETCH_RESPONSE, type OffsetFetchRequest, type OffsetFetchResponse } from './messages/offset-fetch.js';
import { LIST_GROUPS_REQUEST, LIST_GROUPS_RESPONSE, type ListGroupsRequest, type ListGroupsResponse } from './messages/list-groups.js';
import { DESCRIBE_GROUPS_REQUEST, DESCRIBE_GROUPS_RESPONSE, type DescribeGroupsRequest, type DescribeGroupsResponse } from './messages/describe-groups.js';
import { DELETE_GROUPS_REQUEST, DELETE_GROUPS_RESPONSE, type DeleteGroupsRequest, type DeleteGroupsResponse } from './messages/delete-groups.js';
import { OFFSET_DELETE_REQUEST, OFFSET_DELETE_RESPONSE, type OffsetDeleteRequest, type OffsetDeleteResponse } from './messages/offset-delete.js';
import { CONSUMER_PROTOCOL_ASSIGNMENT, CONSUMER_PROTOCOL_SUBSCRIPTION } from './messages/consumer-protocol.js';
import { REQUEST_HEADER, RESPONSE_HEADER } from './messages/headers.js';
import { INIT_PRODUCER_ID_REQUEST, INIT_PRODUCER_ID_RESPONSE, type InitProducerIdRequest, type InitProducerIdResponse } from './messages/init-producer-id.js';
import { LIST_OFFSETS_REQUEST, LIST_OFFSETS_RESPONSE, type ListOffsetsRequest, type ListOffsetsResponse } from './messages/list-offsets.js';
import { METADATA_REQUEST, METADATA_RESPONSE, type MetadataRequest, type MetadataResponse } from './messages/metadata.js';
import { PRODUCE_REQUEST, PRODUCE_RESPONSE, type ProduceRequest, type ProduceResponse } from './messages/produce.js';
import { ALTER_CONFIGS_REQUEST, ALTER_CONFIGS_RESPONSE, type AlterConfigsRequest, type AlterConfigsResponse } from './messages/alter-configs.js';
import { CREATE_PARTITIONS_REQUEST, CREATE_PARTITIONS_RESPONSE, type CreatePartitionsRequest, type CreatePartitionsResponse } from './messages/create-partitions.js';
import { DELETE_TOPICS_REQUEST, DELETE_TOPICS_RESPONSE, type DeleteTopicsRequest, type DeleteTopicsResponse } from './messages/delete-topics.js';
import { DESCRIBE_CLUSTER_REQUEST, DESCRIBE_CLUSTER_RESPONSE, type DescribeClusterRequest, type DescribeClusterResponse } from './messages/describe-cluster.js';
import { DESCRIBE_CONFIGS_REQUEST, DESCRIBE_CONFIGS_RESPONSE, type DescribeConfigsRequest, type DescribeConfigsResponse } from './messages/describe-configs.js';
import {
  INCREMENTAL_ALTER_CONFIGS_REQUEST, INCREMENTAL_ALTER_CONFIGS_RESPONSE, type IncrementalAlterConfigsRequest, type IncrementalAlterConfigsResponse,
} from './messages/incremental-alter-configs.js';
import { ADD_PARTITIONS_TO_TXN_REQUEST, ADD_PARTITIONS_TO_TXN_RESPONSE, type AddPartitionsToTxnRequest, type AddPartitionsToTxnResponse } from './messages/add-partitions-to-txn.js';
import { ADD_OFFSETS_TO_TXN_REQUEST, ADD_OFFSETS_TO_TXN_RESPONSE, type AddOffsetsToTxnRequest, type AddOffsetsToTxnResponse } from './messages/add-offsets-to-txn.js';
import { END_TXN_REQUEST, END_TXN_RESPONSE, type EndTxnRequest, type EndTxnResponse } from './messages/end-txn.js';
import { TXN_OFFSET_COMMIT_REQUEST, TXN_OFFSET_COMMIT_RESPONSE, type TxnOffsetCommitRequest, type TxnOffsetCommitResponse } from './messages/txn-offset-commit.js';
import {
  DESCRIBE_TRANSACTIONS_REQUEST, DESCRIBE_TRANSACTIONS_RESPONSE, type DescribeTransactionsRequest, type DescribeTransactionsResponse,
} from './messages/describe-transactions.js';
import { LIST_TRANSACTIONS_REQUEST, LIST_TRANSACTIONS_RESPONSE, type ListTransactionsRequest, type ListTransactionsResponse } from './messages/list-transactions.js';

export type ApiName =
  | 'PRODUCE' | 'FETCH' | 'LIST_OFFSETS' | 'METADATA' | 'API_VERSIONS' | 'CREATE_TOPICS' | 'DELETE_RECORDS' | 'INIT_PRODUCER_ID'
  // Admin (issue 21).
  | 'DELETE_TOPICS' | 'DESCRIBE_CONFIGS' | 'ALTER_CONFIGS' | 'CREATE_PARTITIONS' | 'INCREMENTAL_ALTER_CONFIGS' | 'DESCRIBE_CLUSTER'
  // Consumer groups (the group coordinator).
  | 'OFFSET_COMMIT' | 'OFFSET_FETCH' | 'FIND_COORDINATOR' | 'JOIN_GROUP' | 'HEARTBEAT' | 'LEAVE_GROUP' | 'SYNC_GROUP'
  | 'DESCRIBE_GROUPS' | 'LIST_GROUPS' | 'DELETE_GROUPS' | 'OFFSET_DELETE'
  // Transactions (the transaction coordinator).
  | 'ADD_PARTITIONS_TO_TXN' | 'ADD_OFFSETS_TO_TXN' | 'END_TXN' | 'TXN_OFFSET_COMMIT' | 'DESCRIBE_TRANSACTIONS' | 'LIST_TRANSACTIONS';

/** Decoded request bodies by API (types derived from the descriptions). */
export interface RequestBodies {
  readonly PRODUCE: ProduceRequest;
  readonly FETCH: FetchRequest;
  readonly LIST_OFFSETS: ListOffsetsRequest;
  readonly METADATA: MetadataRequest;
  readonly API_VERSIONS: ApiVersionsRequest;
  readonly CREATE_TOPICS: CreateTopicsRequest;
  readonly DELETE_RECORDS: DeleteRecordsRequest;
  readonly INIT_PRODUCER_ID: InitProducerIdRequest;
  readonly DELETE_TOPICS: DeleteTopicsRequest;
  readonly DESCRIBE_CONFIGS: DescribeConfigsRequest;
  readonly ALTER_CONFIGS: AlterConfigsRequest;
  readonly CREATE_PARTITIONS: CreatePartitionsRequest;
  readonly INCREMENTAL_ALTER_CONFIGS: IncrementalAlterConfigsRequest;
  readonly DESCRIBE_CLUSTER: DescribeClusterRequest;
  readonly FIND_COORDINATOR: FindCoordinatorRequest;
  readonly JOIN_GROUP: JoinGroupRequest;
  readonly SYNC_GROUP: SyncGroupRequest;
  readonly HEARTBEAT: HeartbeatRequest;
  readonly LEAVE_GROUP: LeaveGroupRequest;
  readonly OFFSET_COMMIT: OffsetCommitRequest;
  readonly OFFSET_FETCH: OffsetFetchRequest;
  readonly LIST_GROUPS: ListGroupsRequest;
  readonly DESCRIBE_GROUPS: DescribeGroupsRequest;
  readonly DELETE_GROUPS: DeleteGroupsRequest;
  readonly OFFSET_DELETE: OffsetDeleteRequest;
  readonly ADD_PARTITIONS_TO_TXN: AddPartitionsToTxnRequest;
  readonly ADD_OFFSETS_TO_TXN: AddOffsetsToTxnRequest;
  readonly END_TXN: EndTxnRequest;
  readonly TXN_OFFSET_COMMIT: TxnOffsetCommitRequest;
  readonly DESCRIBE_TRANSACTIONS: DescribeTransactionsRequest;
  readonly LIST_TRANSACTIONS: ListTransactionsRequest;
}

/** Response bodies by API. */
export interface ResponseBodies {
  readonly PRODUCE: ProduceResponse;
  readonly FETCH: FetchResponse;
  readonly LIST_OFFSETS: ListOffsetsResponse;
  readonly METADATA: MetadataResponse;
  readonly API_VERSIONS: ApiVersionsResponse;
  readonly CREATE_TOPICS: CreateTopicsResponse;
  readonly DELETE_RECORDS: DeleteRecordsResponse;
  readonly INIT_PRODUCER_ID: InitProducerIdResponse;
  readonly DELETE_TOPICS: DeleteTopicsResponse;
  readonly DESCRIBE_CONFIGS: DescribeConfigsResponse;
  readonly ALTER_CONFIGS: AlterConfigsResponse;
  readonly CREATE_PARTITIONS: CreatePartitionsResponse;
  readonly INCREMENTAL_ALTER_CONFIGS: IncrementalAlterConfigsResponse;
  readonly DESCRIBE_CLUSTER: DescribeClusterResponse;
  readonly FIND_COORDINATOR: FindCoordinatorResponse;
  readonly JOIN_GROUP: JoinGroupResponse;
  readonly SYNC_GROUP: SyncGroupResponse;
  readonly HEARTBEAT: HeartbeatResponse;
  readonly LEAVE_GROUP: LeaveGroupResponse;
  readonly OFFSET_COMMIT: OffsetCommitResponse;
  readonly OFFSET_FETCH: OffsetFetchResponse;
  readonly LIST_GROUPS: ListGroupsResponse;
  readonly DESCRIBE_GROUPS: DescribeGroupsResponse;
  readonly DELETE_GROUPS: DeleteGroupsResponse;
  readonly OFFSET_DELETE: OffsetDeleteResponse;
  readonly ADD_PARTITIONS_TO_TXN: AddPartitionsToTxnResponse;
  readonly ADD_OFFSETS_TO_TXN: AddOffsetsToTxnResponse;
  readonly END_TXN: EndTxnResponse;
  readonly TXN_OFFSET_COMMIT: TxnOffsetCommitResponse;
  readonly DESCRIBE_TRANSACTIONS: DescribeTransactionsResponse;
  readonly LIST_TRANSACTIONS: ListTransactionsResponse;
}

export interface ApiDescription {
  readonly apiKey: number;
  /** The broker's name of the API (supported-apis.ts). */
  readonly name: ApiName;
  readonly request: MessageDescription;
  readonly response: MessageDescription;
}

/** Sorted by apiKey. */
export const API_DESCRIPTIONS: readonly ApiDescription[] = [
  { apiKey: 0, name: 'PRODUCE', request: PRODUCE_REQUEST, response: PRODUCE_RESPONSE },
  { apiKey: 1, name: 'FETCH', request: FETCH_REQUEST, response: FETCH_RESPONSE },
  { apiKey: 2, name: 'LIST_OFFSETS', request: LIST_OFFSETS_REQUEST, response: LIST_OFFSETS_RESPONSE },
  { apiKey: 3, name: 'METADATA', request: METADATA_REQUEST, response: METADATA_RESPONSE },
  { apiKey: 8, name: 'OFFSET_COMMIT', request: OFFSET_COMMIT_REQUEST, response: OFFSET_COMMIT_RESPONSE },
  { apiKey: 9, name: 'OFFSET_FETCH', request: OFFSET_FETCH_REQUEST, response: OFFSET_FETCH_RESPONSE },
  { apiKey: 10, name: 'FIND_COORDINATOR', request: FIND_COORDINATOR_REQUEST, response: FIND_COORDINATOR_RESPONSE },
  { apiKey: 11, name: 'JOIN_GROUP', request: JOIN_GROUP_REQUEST, response: JOIN_GROUP_RESPONSE },
  { apiKey: 12, name: 'HEARTBEAT', request: HEARTBEAT_REQUEST, response: HEARTBEAT_RESPONSE },
  { apiKey: 13, name: 'LEAVE_GROUP', request: LEAVE_GROUP_REQUEST, response: LEAVE_GROUP_RESPONSE },
  { apiKey: 14, name: 'SYNC_GROUP', request: SYNC_GROUP_REQUEST, response: SYNC_GROUP_RESPONSE },
  { apiKey: 15, name: 'DESCRIBE_GROUPS', request: DESCRIBE_GROUPS_REQUEST, response: DESCRIBE_GROUPS_RESPONSE },
  { apiKey: 16, name: 'LIST_GROUPS', request: LIST_GROUPS_REQUEST, response: LIST_GROUPS_RESPONSE },
  { apiKey: 18, name: 'API_VERSIONS', request: API_VERSIONS_REQUEST, response: API_VERSIONS_RESPONSE },
  { apiKey: 19, name: 'CREATE_TOPICS', request: CREATE_TOPICS_REQUEST, response: CREATE_TOPICS_RESPONSE },
  { apiKey: 20, name: 'DELETE_TOPICS', request: DELETE_TOPICS_REQUEST, response: DELETE_TOPICS_RESPONSE },
  { apiKey: 21, name: 'DELETE_RECORDS', request: DELETE_RECORDS_REQUEST, response: DELETE_RECORDS_RESPONSE },
  { apiKey: 22, name: 'INIT_PRODUCER_ID', request: INIT_PRODUCER_ID_REQUEST, response: INIT_PRODUCER_ID_RESPONSE },
  { apiKey: 24, name: 'ADD_PARTITIONS_TO_TXN', request: ADD_PARTITIONS_TO_TXN_REQUEST, response: ADD_PARTITIONS_TO_TXN_RESPONSE },
  { apiKey: 25, name: 'ADD_OFFSETS_TO_TXN', request: ADD_OFFSETS_TO_TXN_REQUEST, response: ADD_OFFSETS_TO_TXN_RESPONSE },
  { apiKey: 26, name: 'END_TXN', request: END_TXN_REQUEST, response: END_TXN_RESPONSE },
  { apiKey: 28, name: 'TXN_OFFSET_COMMIT', request: TXN_OFFSET_COMMIT_REQUEST, response: TXN_OFFSET_COMMIT_RESPONSE },
  { apiKey: 32, name: 'DESCRIBE_CONFIGS', request: DESCRIBE_CONFIGS_REQUEST, response: DESCRIBE_CONFIGS_RESPONSE },
  { apiKey: 33, name: 'ALTER_CONFIGS', request: ALTER_CONFIGS_REQUEST, response: ALTER_CONFIGS_RESPONSE },
  { apiKey: 37, name: 'CREATE_PARTITIONS', request: CREATE_PARTITIONS_REQUEST, response: CREATE_PARTITIONS_RESPONSE },
  { apiKey: 42, name: 'DELETE_GROUPS', request: DELETE_GROUPS_REQUEST, response: DELETE_GROUPS_RESPONSE },
  { apiKey: 44, name: 'INCREMENTAL_ALTER_CONFIGS', request: INCREMENTAL_ALTER_CONFIGS_REQUEST, response: INCREMENTAL_ALTER_CONFIGS_RESPONSE },
  { apiKey: 47, name: 'OFFSET_DELETE', request: OFFSET_DELETE_REQUEST, response: OFFSET_DELETE_RESPONSE },
  { apiKey: 60, name: 'DESCRIBE_CLUSTER', request: DESCRIBE_CLUSTER_REQUEST, response: DESCRIBE_CLUSTER_RESPONSE },
  { apiKey: 65, name: 'DESCRIBE_TRANSACTIONS', request: DESCRIBE_TRANSACTIONS_REQUEST, response: DESCRIBE_TRANSACTIONS_RESPONSE },
  { apiKey: 66, name: 'LIST_TRANSACTIONS', request: LIST_TRANSACTIONS_REQUEST, response: LIST_TRANSACTIONS_RESPONSE },
];

/** Every description: the two headers, each API's request and response, then the data messages (the consumer protocol). */
export const ALL_DESCRIPTIONS: readonly MessageDescription[] = [
  REQUEST_HEADER, RESPONSE_HEADER, ...API_DESCRIPTIONS.flatMap((api) => [api.request, api.response]),
  CONSUMER_PROTOCOL_SUBSCRIPTION, CONSUMER_PROTOCOL_ASSIGNMENT,
];

export interface ApiCodecs {
  readonly api: ApiDescription;
  readonly request: MessageCodec;
  readonly response: MessageCodec;
  /** Parsed once: the request's and the response's flexible versions. */
  readonly requestFlexible: VersionRange;
  readonly responseFlexible: VersionRange;
}

const codecsByKey = new Map<number, ApiCodecs>(API_DESCRIPTIONS.map((api) => [api.apiKey, {
  api, request: new MessageCodec(api.request), response: new MessageCodec(api.response),
  requestFlexible: parseVersions(api.request.flexibleVersions), responseFlexible: parseVersions(api.response.flexibleVersions),
}]));

export const REQUEST_HEADER_CODEC = new MessageCodec(REQUEST_HEADER);
export const RESPONSE_HEADER_CODEC = new MessageCodec(RESPONSE_HEADER);

const codecsByName = new Map<string, ApiCodecs>([...codecsByKey.values()].map((codecs) => [codecs.api.name, codecs]));

/** The compiled codecs of a described API, by its name. */
export function apiCodecsByName(name: ApiName): ApiCodecs {
  const codecs = codecsByName.get(name);
  assert(codecs !== undefined, 'apiCodecsByName: not a described API');
  return codecs;
}

/** The compiled codecs of an API, or undefined for an API that is not described. */
export function apiCodecs(apiKey: number): ApiCodecs | undefined {
  return codecsByKey.get(apiKey);
}

/**
 * Request header version: 2 for flexible versions of the API, else 1. Like
 * the broker, also beyond our max version (Kafka's flexibleVersions are open
 * ranges "N+"), and 1 for an API that is not described.
 */
export function requestHeaderVersion(apiKey: number, apiVersion: number): 1 | 2 {
  const codecs = codecsByKey.get(apiKey);
  return codecs !== undefined && inVersions(codecs.requestFlexible, apiVersion) ? 2 : 1;
}

/** Response header version: 1 for flexible versions, except ApiVersions (always 0, KIP-511). */
export function responseHeaderVersion(apiKey: number, apiVersion: number): 0 | 1 {
  if (apiKey === 18) return 0;
  const codecs = codecsByKey.get(apiKey);
  return codecs !== undefined && inVersions(codecs.responseFlexible, apiVersion) ? 1 : 0;
}
