// ListOffsets (key 2), versions 0–7 (ListOffsetsRequest/Response.json); flexible from v6.
//
//   request  replica_id int32, isolation_level int8 (v2+),
//            topics [name, partitions [partition_index int32, current_leader_epoch
//                    int32 (v4+), timestamp int64, max_num_offsets int32 (v0 only)]]
//   response throttle_time_ms int32 (v2+),
//            topics [name, partitions [partition_index, error_code,
//                    old_style_offsets []int64 (v0 only), timestamp int64 (v1+),
//                    offset int64 (v1+), leader_epoch int32 (v4+)]]
//
// Timestamps −1 (latest), −2 (earliest) and −3 (max timestamp, v7+) are
// interpreted by the server, not here.

import { minSizes, readArray, writeArray } from '../../internal/arrays.js';
import type { ProtocolReader } from '../protocol-reader.js';
import type { ProtocolWriter } from '../protocol-writer.js';

const FLEXIBLE_FROM = 6;

export interface ListOffsetsPartition {
  readonly partitionIndex: number;
  readonly currentLeaderEpoch: number;
  readonly timestamp: number;
  /** v0 only; 1 otherwise. */
  readonly maxNumOffsets: number;
}

export interface ListOffsetsTopic {
  readonly name: string;
  readonly partitions: readonly ListOffsetsPartition[];
}

export interface ListOffsetsRequest {
  readonly replicaId: number;
  readonly isolationLevel: number;
  readonly topics: readonly ListOffsetsTopic[];
}

export interface ListOffsetsPartitionResponse {
  readonly partitionIndex: number;
  readonly errorCode: number;
  /** v0 only. */
  readonly oldStyleOffsets: readonly number[];
  readonly timestamp: number;
  readonly offset: number;
  readonly leaderEpoch: number;
}

export interface ListOffsetsTopicResponse {
  readonly name: string;
  readonly partitions: readonly ListOffsetsPartitionResponse[];
}

export interface ListOffsetsResponse {
  readonly throttleTimeMs: number;
  readonly topics: readonly ListOffsetsTopicResponse[];
}

export function decodeListOffsetsRequest(reader: ProtocolReader, version: number): ListOffsetsRequest {
  const flexible = version >= FLEXIBLE_FROM;
  const min = minSizes(flexible);
  const replicaId = reader.int32();
  const isolationLevel = version >= 2 ? reader.int8() : 0;
  const partitionBytes = 12 + (version >= 4 ? 4 : 0) + (version === 0 ? 4 : 0) + min.tags;
  const topics = readArray(reader, flexible, min.str + min.arr + min.tags, (r) => {
    const name = r.string(flexible);
    const partitions = readArray(r, flexible, partitionBytes, (p) => {
      const partitionIndex = p.int32();
      const currentLeaderEpoch = version >= 4 ? p.int32() : -1;
      const timestamp = p.int64Saturated();
      const maxNumOffsets = version === 0 ? p.int32() : 1;
      p.taggedFields(flexible);
      return { partitionIndex, currentLeaderEpoch, timestamp, maxNumOffsets };
    });
    r.taggedFields(flexible);
    return { name, partitions };
  });
  reader.taggedFields(flexible);
  return { replicaId, isolationLevel, topics };
}

export function encodeListOffsetsResponse(writer: ProtocolWriter, version: number, body: ListOffsetsResponse): void {
  const flexible = version >= FLEXIBLE_FROM;
  if (version >= 2) writer.int32(body.throttleTimeMs);
  writeArray(writer, flexible, body.topics, (w, topic) => {
    w.string(topic.name, flexible);
    writeArray(w, flexible, topic.partitions, (pw, partition) => {
      pw.int32(partition.partitionIndex);
      pw.int16(partition.errorCode);
      if (version === 0) writeArray(pw, flexible, partition.oldStyleOffsets, (ow, offset) => ow.int64(offset));
      if (version >= 1) {
        pw.int64(partition.timestamp);
        pw.int64(partition.offset);
      }
      if (version >= 4) pw.int32(partition.leaderEpoch);
      pw.emptyTaggedFields(flexible);
    });
    w.emptyTaggedFields(flexible);
  });
  writer.emptyTaggedFields(flexible);
}

/** Client side (diagnostic client, tests). */
export function encodeListOffsetsRequest(writer: ProtocolWriter, version: number, body: ListOffsetsRequest): void {
  const flexible = version >= FLEXIBLE_FROM;
  writer.int32(body.replicaId);
  if (version >= 2) writer.int8(body.isolationLevel);
  writeArray(writer, flexible, body.topics, (w, topic) => {
    w.string(topic.name, flexible);
    writeArray(w, flexible, topic.partitions, (pw, partition) => {
      pw.int32(partition.partitionIndex);
      if (version >= 4) pw.int32(partition.currentLeaderEpoch);
      pw.int64(partition.timestamp);
      if (version === 0) pw.int32(partition.maxNumOffsets);
      pw.emptyTaggedFields(flexible);
    });
    w.emptyTaggedFields(flexible);
  });
  writer.emptyTaggedFields(flexible);
}

/** Client side (diagnostic client, tests). */
export function decodeListOffsetsResponse(reader: ProtocolReader, version: number): ListOffsetsResponse {
  const flexible = version >= FLEXIBLE_FROM;
  const min = minSizes(flexible);
  const throttleTimeMs = version >= 2 ? reader.int32() : 0;
  const topics = readArray(reader, flexible, min.str + min.arr + min.tags, (r) => {
    const name = r.string(flexible);
    const partitions = readArray(r, flexible, 6, (p) => {
      const partitionIndex = p.int32();
      const errorCode = p.int16();
      const oldStyleOffsets = version === 0 ? readArray(p, flexible, 8, (o) => o.int64()) : [];
      const timestamp = version >= 1 ? p.int64() : -1;
      const offset = version >= 1 ? p.int64() : -1;
      const leaderEpoch = version >= 4 ? p.int32() : -1;
      p.taggedFields(flexible);
      return { partitionIndex, errorCode, oldStyleOffsets, timestamp, offset, leaderEpoch };
    });
    r.taggedFields(flexible);
    return { name, partitions };
  });
  reader.taggedFields(flexible);
  return { throttleTimeMs, topics };
}
