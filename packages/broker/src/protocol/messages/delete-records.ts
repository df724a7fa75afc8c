// DeleteRecords (key 21), versions 0–2 (DeleteRecordsRequest/Response.json); flexible from v2.
//
//   request  topics [name, partitions [partition_index int32, offset int64]], timeout_ms int32
//   response throttle_time_ms int32,
//            topics [name, partitions [partition_index int32, low_watermark int64, error_code int16]]

import { minSizes, readArray, writeArray } from '../../internal/arrays.js';
import type { ProtocolReader } from '../protocol-reader.js';
import type { ProtocolWriter } from '../protocol-writer.js';

const FLEXIBLE_FROM = 2;

export interface DeleteRecordsPartition {
  readonly partitionIndex: number;
  /** Delete records before this offset; −1 means the high watermark. */
  readonly offset: number;
}

export interface DeleteRecordsTopic {
  readonly name: string;
  readonly partitions: readonly DeleteRecordsPartition[];
}

export interface DeleteRecordsRequest {
  readonly topics: readonly DeleteRecordsTopic[];
  readonly timeoutMs: number;
}

export interface DeleteRecordsPartitionResult {
  readonly partitionIndex: number;
  readonly lowWatermark: number;
  readonly errorCode: number;
}

export interface DeleteRecordsTopicResult {
  readonly name: string;
  readonly partitions: readonly DeleteRecordsPartitionResult[];
}

export interface DeleteRecordsResponse {
  readonly throttleTimeMs: number;
  readonly topics: readonly DeleteRecordsTopicResult[];
}

export function decodeDeleteRecordsRequest(reader: ProtocolReader, version: number): DeleteRecordsRequest {
  const flexible = version >= FLEXIBLE_FROM;
  const min = minSizes(flexible);
  const topics = readArray(reader, flexible, min.str + min.arr + min.tags, (r) => {
    const name = r.string(flexible);
    const partitions = readArray(r, flexible, 12 + min.tags, (p) => {
      const partition = { partitionIndex: p.int32(), offset: p.int64Saturated() };
      p.taggedFields(flexible);
      return partition;
    });
    r.taggedFields(flexible);
    return { name, partitions };
  });
  const timeoutMs = reader.int32();
  reader.taggedFields(flexible);
  return { topics, timeoutMs };
}

export function encodeDeleteRecordsResponse(writer: ProtocolWriter, version: number, body: DeleteRecordsResponse): void {
  const flexible = version >= FLEXIBLE_FROM;
  writer.int32(body.throttleTimeMs);
  writeArray(writer, flexible, body.topics, (w, topic) => {
    w.string(topic.name, flexible);
    writeArray(w, flexible, topic.partitions, (pw, partition) => {
      pw.int32(partition.partitionIndex);
      pw.int64(partition.lowWatermark);
      pw.int16(partition.errorCode);
      pw.emptyTaggedFields(flexible);
    });
    w.emptyTaggedFields(flexible);
  });
  writer.emptyTaggedFields(flexible);
}

/** Client side (diagnostic client, tests). */
export function encodeDeleteRecordsRequest(writer: ProtocolWriter, version: number, body: DeleteRecordsRequest): void {
  const flexible = version >= FLEXIBLE_FROM;
  writeArray(writer, flexible, body.topics, (w, topic) => {
    w.string(topic.name, flexible);
    writeArray(w, flexible, topic.partitions, (pw, partition) => {
      pw.int32(partition.partitionIndex);
      pw.int64(partition.offset);
      pw.emptyTaggedFields(flexible);
    });
    w.emptyTaggedFields(flexible);
  });
  writer.int32(body.timeoutMs);
  writer.emptyTaggedFields(flexible);
}

/** Client side (diagnostic client, tests). */
export function decodeDeleteRecordsResponse(reader: ProtocolReader, version: number): DeleteRecordsResponse {
  const flexible = version >= FLEXIBLE_FROM;
  const min = minSizes(flexible);
  const throttleTimeMs = reader.int32();
  const topics = readArray(reader, flexible, min.str + min.arr + min.tags, (r) => {
    const name = r.string(flexible);
    const partitions = readArray(r, flexible, 14 + min.tags, (p) => {
      const partition = { partitionIndex: p.int32(), lowWatermark: p.int64(), errorCode: p.int16() };
      p.taggedFields(flexible);
      return partition;
    });
    r.taggedFields(flexible);
    return { name, partitions };
  });
  reader.taggedFields(flexible);
  return { throttleTimeMs, topics };
}
