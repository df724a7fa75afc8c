// Metadata (key 3), versions 0–12 (MetadataRequest/Response.json); flexible from v9.
//
//   request  topics [topic_id uuid (v10+), name string (nullable v10+)] (array nullable v1+;
//            in v0 an empty array means "all topics", decoded here as null),
//            allow_auto_topic_creation bool (v4+), include_cluster_authorized_operations
//            bool (v8–10), include_topic_authorized_operations bool (v8+)
//   response throttle_time_ms (v3+), brokers [node_id, host, port, rack nullable (v1+)],
//            cluster_id nullable (v2+), controller_id (v1+),
//            topics [error_code, name (nullable v12+), topic_id (v10+), is_internal (v1+),
//                    partitions [error_code, partition_index, leader_id, leader_epoch (v7+),
//                                replica_nodes, isr_nodes, offline_replicas (v5+)],
//                    topic_authorized_operations (v8+)],
//            cluster_authorized_operations (v8–10)

import { assert } from '@seglog/common';
import {
  minSizes, readArray, readInt32Array, readNullableArray, writeArray, writeInt32Array, writeNullableArray,
} from '../../internal/arrays.js';
import type { ProtocolReader } from '../protocol-reader.js';
import type { ProtocolWriter } from '../protocol-writer.js';

const FLEXIBLE_FROM = 9;
export const ZERO_UUID = '00000000000000000000000000000000';

export interface MetadataRequestTopic {
  /** ZERO_UUID before v10. */
  readonly topicId: string;
  /** Null only from v10 (lookup by id). */
  readonly name: string | null;
}

export interface MetadataRequest {
  /** Null = all topics. */
  readonly topics: readonly MetadataRequestTopic[] | null;
  /** True before v4 (the field's default). */
  readonly allowAutoTopicCreation: boolean;
  readonly includeClusterAuthorizedOperations: boolean;
  readonly includeTopicAuthorizedOperations: boolean;
}

export interface MetadataBroker {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
  readonly rack: string | null;
}

export interface MetadataPartition {
  readonly errorCode: number;
  readonly partitionIndex: number;
  readonly leaderId: number;
  readonly leaderEpoch: number;
  readonly replicaNodes: readonly number[];
  readonly isrNodes: readonly number[];
  readonly offlineReplicas: readonly number[];
}

export interface MetadataTopic {
  readonly errorCode: number;
  /** Null only from v12. */
  readonly name: string | null;
  readonly topicId: string;
  readonly isInternal: boolean;
  readonly partitions: readonly MetadataPartition[];
  readonly topicAuthorizedOperations: number;
}

export interface MetadataResponse {
  readonly throttleTimeMs: number;
  readonly brokers: readonly MetadataBroker[];
  readonly clusterId: string | null;
  readonly controllerId: number;
  readonly topics: readonly MetadataTopic[];
  readonly clusterAuthorizedOperations: number;
}

export function decodeMetadataRequest(reader: ProtocolReader, version: number): MetadataRequest {
  const flexible = version >= FLEXIBLE_FROM;
  const min = minSizes(flexible);
  const topicBytes = (version >= 10 ? 16 : 0) + min.str + min.tags;
  const readTopic = (r: ProtocolReader): MetadataRequestTopic => {
    const topicId = version >= 10 ? r.uuid() : ZERO_UUID;
    const name = version >= 10 ? r.nullableString(flexible) : r.string(flexible);
    r.taggedFields(flexible);
    return { topicId, name };
  };
  let topics = version >= 1
    ? readNullableArray(reader, flexible, topicBytes, readTopic)
    : readArray(reader, flexible, topicBytes, readTopic);
  if (version === 0 && topics !== null && topics.length === 0) topics = null;
  const allowAutoTopicCreation = version >= 4 ? reader.bool() : true;
  const includeClusterAuthorizedOperations = version >= 8 && version <= 10 ? reader.bool() : false;
  const includeTopicAuthorizedOperations = version >= 8 ? reader.bool() : false;
  reader.taggedFields(flexible);
  return { topics, allowAutoTopicCreation, includeClusterAuthorizedOperations, includeTopicAuthorizedOperations };
}

export function encodeMetadataResponse(writer: ProtocolWriter, version: number, body: MetadataResponse): void {
  const flexible = version >= FLEXIBLE_FROM;
  if (version >= 3) writer.int32(body.throttleTimeMs);
  writeArray(writer, flexible, body.brokers, (w, broker) => {
    w.int32(broker.nodeId);
    w.string(broker.host, flexible);
    w.int32(broker.port);
    if (version >= 1) w.nullableString(broker.rack, flexible);
    w.emptyTaggedFields(flexible);
  });
  if (version >= 2) writer.nullableString(body.clusterId, flexible);
  if (version >= 1) writer.int32(body.controllerId);
  writeArray(writer, flexible, body.topics, (w, topic) => encodeTopic(w, version, flexible, topic));
  if (version >= 8 && version <= 10) writer.int32(body.clusterAuthorizedOperations);
  writer.emptyTaggedFields(flexible);
}

function encodeTopic(writer: ProtocolWriter, version: number, flexible: boolean, topic: MetadataTopic): void {
  writer.int16(topic.errorCode);
  assert(topic.name !== null || version >= 12, 'encodeMetadataResponse: null topic name before v12');
  writer.nullableString(topic.name, flexible);
  if (version >= 10) writer.uuid(topic.topicId);
  if (version >= 1) writer.bool(topic.isInternal);
  writeArray(writer, flexible, topic.partitions, (w, partition) => {
    w.int16(partition.errorCode);
    w.int32(partition.partitionIndex);
    w.int32(partition.leaderId);
    if (version >= 7) w.int32(partition.leaderEpoch);
    writeInt32Array(w, flexible, partition.replicaNodes);
    writeInt32Array(w, flexible, partition.isrNodes);
    if (version >= 5) writeInt32Array(w, flexible, partition.offlineReplicas);
    w.emptyTaggedFields(flexible);
  });
  if (version >= 8) writer.int32(topic.topicAuthorizedOperations);
  writer.emptyTaggedFields(flexible);
}

/** Test and client side. */
export function decodeMetadataResponse(reader: ProtocolReader, version: number): MetadataResponse {
  const flexible = version >= FLEXIBLE_FROM;
  const min = minSizes(flexible);
  const throttleTimeMs = version >= 3 ? reader.int32() : 0;
  const brokers = readArray(reader, flexible, 8 + min.str, (r) => {
    const nodeId = r.int32();
    const host = r.string(flexible);
    const port = r.int32();
    const rack = version >= 1 ? r.nullableString(flexible) : null;
    r.taggedFields(flexible);
    return { nodeId, host, port, rack };
  });
  const clusterId = version >= 2 ? reader.nullableString(flexible) : null;
  const controllerId = version >= 1 ? reader.int32() : -1;
  const topics = readArray(reader, flexible, 2 + min.str + min.arr, (r) => {
    const errorCode = r.int16();
    const name = version >= 12 ? r.nullableString(flexible) : r.string(flexible);
    const topicId = version >= 10 ? r.uuid() : ZERO_UUID;
    const isInternal = version >= 1 ? r.bool() : false;
    const partitions = readArray(r, flexible, 10 + 2 * min.arr, (p) => {
      const partition = {
        errorCode: p.int16(),
        partitionIndex: p.int32(),
        leaderId: p.int32(),
        leaderEpoch: version >= 7 ? p.int32() : -1,
        replicaNodes: readInt32Array(p, flexible),
        isrNodes: readInt32Array(p, flexible),
        offlineReplicas: version >= 5 ? readInt32Array(p, flexible) : [],
      };
      p.taggedFields(flexible);
      return partition;
    });
    const topicAuthorizedOperations = version >= 8 ? r.int32() : -2147483648;
    r.taggedFields(flexible);
    return { errorCode, name, topicId, isInternal, partitions, topicAuthorizedOperations };
  });
  const clusterAuthorizedOperations = version >= 8 && version <= 10 ? reader.int32() : -2147483648;
  reader.taggedFields(flexible);
  return { throttleTimeMs, brokers, clusterId, controllerId, topics, clusterAuthorizedOperations };
}

/** Client side (diagnostic client, tests). */
export function encodeMetadataRequest(writer: ProtocolWriter, version: number, body: MetadataRequest): void {
  const flexible = version >= FLEXIBLE_FROM;
  const writeTopic = (w: ProtocolWriter, topic: MetadataRequestTopic): void => {
    if (version >= 10) w.uuid(topic.topicId);
    assert(topic.name !== null || version >= 10, 'encodeMetadataRequest: null topic name before v10');
    w.nullableString(topic.name, flexible);
    w.emptyTaggedFields(flexible);
  };
  if (version === 0) writeArray(writer, flexible, body.topics ?? [], writeTopic);
  else writeNullableArray(writer, flexible, body.topics, writeTopic);
  if (version >= 4) writer.bool(body.allowAutoTopicCreation);
  if (version >= 8 && version <= 10) writer.bool(body.includeClusterAuthorizedOperations);
  if (version >= 8) writer.bool(body.includeTopicAuthorizedOperations);
  writer.emptyTaggedFields(flexible);
}
