// CreateTopics (key 19), versions 0–7 (CreateTopicsRequest/Response.json); flexible from v5.
//
//   request  topics [name, num_partitions int32, replication_factor int16,
//                    assignments [partition_index int32, broker_ids []int32],
//                    configs [name, value nullable]],
//            timeout_ms int32, validate_only bool (v1+)
//   response throttle_time_ms int32 (v2+),
//            topics [name, topic_id uuid (v7+), error_code int16, error_message nullable (v1+),
//                    num_partitions int32 (v5+), replication_factor int16 (v5+),
//                    configs nullable [name, value nullable, read_only bool,
//                                      config_source int8, is_sensitive bool] (v5+)]
//   (the response's tagged topic_config_error_code, tag 0, is never written)

import { minSizes, readArray, readInt32Array, readNullableArray, writeArray, writeInt32Array, writeNullableArray } from '../../internal/arrays.js';
import type { ProtocolReader } from '../protocol-reader.js';
import type { ProtocolWriter } from '../protocol-writer.js';
import { ZERO_UUID } from './metadata.js';

const FLEXIBLE_FROM = 5;

export interface CreatableReplicaAssignment {
  readonly partitionIndex: number;
  readonly brokerIds: readonly number[];
}

export interface CreatableTopicConfig {
  readonly name: string;
  readonly value: string | null;
}

export interface CreatableTopic {
  readonly name: string;
  /** −1 = broker default (v4+). */
  readonly numPartitions: number;
  readonly replicationFactor: number;
  readonly assignments: readonly CreatableReplicaAssignment[];
  readonly configs: readonly CreatableTopicConfig[];
}

export interface CreateTopicsRequest {
  readonly topics: readonly CreatableTopic[];
  readonly timeoutMs: number;
  readonly validateOnly: boolean;
}

export interface CreatableTopicConfigResult {
  readonly name: string;
  readonly value: string | null;
  readonly readOnly: boolean;
  readonly configSource: number;
  readonly isSensitive: boolean;
}

export interface CreatableTopicResult {
  readonly name: string;
  readonly topicId: string;
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly numPartitions: number;
  readonly replicationFactor: number;
  readonly configs: readonly CreatableTopicConfigResult[] | null;
}

export interface CreateTopicsResponse {
  readonly throttleTimeMs: number;
  readonly topics: readonly CreatableTopicResult[];
}

export function decodeCreateTopicsRequest(reader: ProtocolReader, version: number): CreateTopicsRequest {
  const flexible = version >= FLEXIBLE_FROM;
  const min = minSizes(flexible);
  const topics = readArray(reader, flexible, min.str + 6 + 2 * min.arr + min.tags, (r) => {
    const name = r.string(flexible);
    const numPartitions = r.int32();
    const replicationFactor = r.int16();
    const assignments = readArray(r, flexible, 4 + min.arr + min.tags, (a) => {
      const partitionIndex = a.int32();
      const brokerIds = readInt32Array(a, flexible);
      a.taggedFields(flexible);
      return { partitionIndex, brokerIds };
    });
    const configs = readArray(r, flexible, 2 * min.str + min.tags, (c) => {
      const configName = c.string(flexible);
      const value = c.nullableString(flexible);
      c.taggedFields(flexible);
      return { name: configName, value };
    });
    r.taggedFields(flexible);
    return { name, numPartitions, replicationFactor, assignments, configs };
  });
  const timeoutMs = reader.int32();
  const validateOnly = version >= 1 ? reader.bool() : false;
  reader.taggedFields(flexible);
  return { topics, timeoutMs, validateOnly };
}

export function encodeCreateTopicsResponse(writer: ProtocolWriter, version: number, body: CreateTopicsResponse): void {
  const flexible = version >= FLEXIBLE_FROM;
  if (version >= 2) writer.int32(body.throttleTimeMs);
  writeArray(writer, flexible, body.topics, (w, topic) => {
    w.string(topic.name, flexible);
    if (version >= 7) w.uuid(topic.topicId);
    w.int16(topic.errorCode);
    if (version >= 1) w.nullableString(topic.errorMessage, flexible);
    if (version >= 5) {
      w.int32(topic.numPartitions);
      w.int16(topic.replicationFactor);
      writeNullableArray(w, flexible, topic.configs, (cw, config) => {
        cw.string(config.name, flexible);
        cw.nullableString(config.value, flexible);
        cw.bool(config.readOnly);
        cw.int8(config.configSource);
        cw.bool(config.isSensitive);
        cw.emptyTaggedFields(flexible);
      });
    }
    w.emptyTaggedFields(flexible);
  });
  writer.emptyTaggedFields(flexible);
}

/** Client side (diagnostic client, tests). */
export function encodeCreateTopicsRequest(writer: ProtocolWriter, version: number, body: CreateTopicsRequest): void {
  const flexible = version >= FLEXIBLE_FROM;
  writeArray(writer, flexible, body.topics, (w, topic) => {
    w.string(topic.name, flexible);
    w.int32(topic.numPartitions);
    w.int16(topic.replicationFactor);
    writeArray(w, flexible, topic.assignments, (aw, assignment) => {
      aw.int32(assignment.partitionIndex);
      writeInt32Array(aw, flexible, assignment.brokerIds);
      aw.emptyTaggedFields(flexible);
    });
    writeArray(w, flexible, topic.configs, (cw, config) => {
      cw.string(config.name, flexible);
      cw.nullableString(config.value, flexible);
      cw.emptyTaggedFields(flexible);
    });
    w.emptyTaggedFields(flexible);
  });
  writer.int32(body.timeoutMs);
  if (version >= 1) writer.bool(body.validateOnly);
  writer.emptyTaggedFields(flexible);
}

/** Client side (diagnostic client, tests). */
export function decodeCreateTopicsResponse(reader: ProtocolReader, version: number): CreateTopicsResponse {
  const flexible = version >= FLEXIBLE_FROM;
  const min = minSizes(flexible);
  const throttleTimeMs = version >= 2 ? reader.int32() : 0;
  const topics = readArray(reader, flexible, min.str + 2, (r) => {
    const name = r.string(flexible);
    const topicId = version >= 7 ? r.uuid() : ZERO_UUID;
    const errorCode = r.int16();
    const errorMessage = version >= 1 ? r.nullableString(flexible) : null;
    let numPartitions = -1;
    let replicationFactor = -1;
    let configs: CreatableTopicConfigResult[] | null = null;
    if (version >= 5) {
      numPartitions = r.int32();
      replicationFactor = r.int16();
      configs = readNullableArray(r, flexible, 2 * min.str + 3 + min.tags, (c) => {
        const config = {
          name: c.string(flexible), value: c.nullableString(flexible), readOnly: c.bool(),
          configSource: c.int8(), isSensitive: c.bool(),
        };
        c.taggedFields(flexible);
        return config;
      });
    }
    r.taggedFields(flexible);
    return { name, topicId, errorCode, errorMessage, numPartitions, replicationFactor, configs };
  });
  reader.taggedFields(flexible);
  return { throttleTimeMs, topics };
}
