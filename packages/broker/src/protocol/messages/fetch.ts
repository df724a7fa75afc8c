// Fetch (key 1), versions 4–12 (FetchRequest/Response.json); flexible from v12.
// v4 is the first version that returns record batch v2 and aborted
// transactions; v13+ replace topic names with topic ids.
//
//   request  replica_id int32, max_wait_ms int32, min_bytes int32, max_bytes int32,
//            isolation_level int8, session_id int32 (v7+), session_epoch int32 (v7+),
//            topics [topic string, partitions [partition int32, current_leader_epoch
//                    int32 (v9+), fetch_offset int64, last_fetched_epoch int32 (v12+),
//                    log_start_offset int64 (v5+), partition_max_bytes int32]],
//            forgotten_topics_data [topic, partitions []int32] (v7+), rack_id string (v11+),
//            tag 0: cluster_id nullable string (v12+)
//   response throttle_time_ms int32, error_code int16 (v7+), session_id int32 (v7+),
//            responses [topic, partitions [partition_index, error_code, high_watermark,
//                       last_stable_offset, log_start_offset (v5+), aborted_transactions
//                       nullable [producer_id int64, first_offset int64],
//                       preferred_read_replica int32 (v11+), records nullable bytes]]
//
// Response records are written as their own part: a Buffer slice or a
// RecordsRef (a fetch plan with file-backed ranges for sendfile).

import { minSizes, readArray, readInt32Array, readNullableArray, writeArray, writeInt32Array, writeNullableArray } from '../../internal/arrays.js';
import type { ProtocolReader } from '../protocol-reader.js';
import type { ProtocolWriter, RecordsRef } from '../protocol-writer.js';

const FLEXIBLE_FROM = 12;

export interface FetchPartition {
  readonly partition: number;
  readonly currentLeaderEpoch: number;
  readonly fetchOffset: number;
  readonly lastFetchedEpoch: number;
  readonly logStartOffset: number;
  readonly partitionMaxBytes: number;
}

export interface FetchTopic {
  readonly topic: string;
  readonly partitions: readonly FetchPartition[];
}

export interface ForgottenTopic {
  readonly topic: string;
  readonly partitions: readonly number[];
}

export interface FetchRequest {
  /** Tagged (tag 0) from v12; null when absent. */
  readonly clusterId: string | null;
  readonly replicaId: number;
  readonly maxWaitMs: number;
  readonly minBytes: number;
  readonly maxBytes: number;
  /** 0 = read_uncommitted, 1 = read_committed. */
  readonly isolationLevel: number;
  readonly sessionId: number;
  readonly sessionEpoch: number;
  readonly topics: readonly FetchTopic[];
  readonly forgottenTopicsData: readonly ForgottenTopic[];
  readonly rackId: string;
}

export interface AbortedTransaction {
  readonly producerId: number;
  readonly firstOffset: number;
}

export interface FetchPartitionResponse {
  readonly partitionIndex: number;
  readonly errorCode: number;
  readonly highWatermark: number;
  readonly lastStableOffset: number;
  readonly logStartOffset: number;
  readonly abortedTransactions: readonly AbortedTransaction[] | null;
  readonly preferredReadReplica: number;
  readonly records: Buffer | RecordsRef | null;
}

export interface FetchTopicResponse {
  readonly topic: string;
  readonly partitions: readonly FetchPartitionResponse[];
}

export interface FetchResponse {
  readonly throttleTimeMs: number;
  readonly errorCode: number;
  readonly sessionId: number;
  readonly responses: readonly FetchTopicResponse[];
}

export function decodeFetchRequest(reader: ProtocolReader, version: number): FetchRequest {
  const flexible = version >= FLEXIBLE_FROM;
  const min = minSizes(flexible);
  const replicaId = reader.int32();
  const maxWaitMs = reader.int32();
  const minBytes = reader.int32();
  const maxBytes = reader.int32();
  const isolationLevel = reader.int8();
  const sessionId = version >= 7 ? reader.int32() : 0;
  const sessionEpoch = version >= 7 ? reader.int32() : -1;
  const partitionBytes = 16 + (version >= 9 ? 4 : 0) + (version >= 12 ? 4 : 0) + (version >= 5 ? 8 : 0) + min.tags;
  const topics = readArray(reader, flexible, min.str + min.arr + min.tags, (r) => {
    const topic = r.string(flexible);
    const partitions = readArray(r, flexible, partitionBytes, (p) => {
      const partition = p.int32();
      const currentLeaderEpoch = version >= 9 ? p.int32() : -1;
      const fetchOffset = p.int64Saturated();
      const lastFetchedEpoch = version >= 12 ? p.int32() : -1;
      const logStartOffset = version >= 5 ? p.int64Saturated() : -1;
      const partitionMaxBytes = p.int32();
      p.taggedFields(flexible);
      return { partition, currentLeaderEpoch, fetchOffset, lastFetchedEpoch, logStartOffset, partitionMaxBytes };
    });
    r.taggedFields(flexible);
    return { topic, partitions };
  });
  const forgottenTopicsData = version >= 7
    ? readArray(reader, flexible, min.str + min.arr + min.tags, (r) => {
      const topic = r.string(flexible);
      const partitions = readInt32Array(r, flexible);
      r.taggedFields(flexible);
      return { topic, partitions };
    })
    : [];
  const rackId = version >= 11 ? reader.string(flexible) : '';
  let clusterId: string | null = null;
  reader.taggedFields(flexible, (r, tag, size) => {
    if (tag === 0) clusterId = r.nullableString(true);
    else r.skip(size);
  });
  return {
    clusterId, replicaId, maxWaitMs, minBytes, maxBytes, isolationLevel, sessionId, sessionEpoch,
    topics, forgottenTopicsData, rackId,
  };
}

export function encodeFetchResponse(writer: ProtocolWriter, version: number, body: FetchResponse): void {
  const flexible = version >= FLEXIBLE_FROM;
  writer.int32(body.throttleTimeMs);
  if (version >= 7) {
    writer.int16(body.errorCode);
    writer.int32(body.sessionId);
  }
  writeArray(writer, flexible, body.responses, (w, topic) => {
    w.string(topic.topic, flexible);
    writeArray(w, flexible, topic.partitions, (pw, partition) => {
      pw.int32(partition.partitionIndex);
      pw.int16(partition.errorCode);
      pw.int64(partition.highWatermark);
      pw.int64(partition.lastStableOffset);
      if (version >= 5) pw.int64(partition.logStartOffset);
      writeNullableArray(pw, flexible, partition.abortedTransactions, (aw, aborted) => {
        aw.int64(aborted.producerId);
        aw.int64(aborted.firstOffset);
        aw.emptyTaggedFields(flexible);
      });
      if (version >= 11) pw.int32(partition.preferredReadReplica);
      pw.records(partition.records, flexible);
      pw.emptyTaggedFields(flexible);
    });
    w.emptyTaggedFields(flexible);
  });
  writer.emptyTaggedFields(flexible);
}

/** Client side (diagnostic client, tests). */
export function encodeFetchRequest(writer: ProtocolWriter, version: number, body: FetchRequest): void {
  const flexible = version >= FLEXIBLE_FROM;
  writer.int32(body.replicaId);
  writer.int32(body.maxWaitMs);
  writer.int32(body.minBytes);
  writer.int32(body.maxBytes);
  writer.int8(body.isolationLevel);
  if (version >= 7) {
    writer.int32(body.sessionId);
    writer.int32(body.sessionEpoch);
  }
  writeArray(writer, flexible, body.topics, (w, topic) => {
    w.string(topic.topic, flexible);
    writeArray(w, flexible, topic.partitions, (pw, partition) => {
      pw.int32(partition.partition);
      if (version >= 9) pw.int32(partition.currentLeaderEpoch);
      pw.int64(partition.fetchOffset);
      if (version >= 12) pw.int32(partition.lastFetchedEpoch);
      if (version >= 5) pw.int64(partition.logStartOffset);
      pw.int32(partition.partitionMaxBytes);
      pw.emptyTaggedFields(flexible);
    });
    w.emptyTaggedFields(flexible);
  });
  if (version >= 7) {
    writeArray(writer, flexible, body.forgottenTopicsData, (w, forgotten) => {
      w.string(forgotten.topic, flexible);
      writeInt32Array(w, flexible, forgotten.partitions);
      w.emptyTaggedFields(flexible);
    });
  }
  if (version >= 11) writer.string(body.rackId, flexible);
  if (flexible) writeClusterIdTag(writer, body.clusterId);
}

function writeClusterIdTag(writer: ProtocolWriter, clusterId: string | null): void {
  if (clusterId === null) {
    writer.uvarint(0);
    return;
  }
  writer.uvarint(1);
  writer.uvarint(0);
  writer.uvarint(Buffer.byteLength(clusterId, 'utf8') + sizeOfUvarint(Buffer.byteLength(clusterId, 'utf8') + 1));
  writer.nullableString(clusterId, true);
}

function sizeOfUvarint(value: number): number {
  let size = 1;
  for (let rest = value; rest >= 0x80; rest = Math.floor(rest / 128)) size++;
  return size;
}

/** Client side (diagnostic client, tests). Records come back as zero-copy slices. */
export function decodeFetchResponse(reader: ProtocolReader, version: number): FetchResponse {
  const flexible = version >= FLEXIBLE_FROM;
  const min = minSizes(flexible);
  const throttleTimeMs = reader.int32();
  const errorCode = version >= 7 ? reader.int16() : 0;
  const sessionId = version >= 7 ? reader.int32() : 0;
  const responses = readArray(reader, flexible, min.str + min.arr + min.tags, (r) => {
    const topic = r.string(flexible);
    const partitions = readArray(r, flexible, 22 + min.arr, (p) => {
      const partitionIndex = p.int32();
      const errorCode = p.int16();
      const highWatermark = p.int64();
      const lastStableOffset = p.int64();
      const logStartOffset = version >= 5 ? p.int64() : -1;
      const abortedTransactions = readNullableArray(p, flexible, 16 + min.tags, (a) => {
        const aborted = { producerId: a.int64(), firstOffset: a.int64() };
        a.taggedFields(flexible);
        return aborted;
      });
      const preferredReadReplica = version >= 11 ? p.int32() : -1;
      const records = p.nullableBytes(flexible);
      p.taggedFields(flexible);
      return {
        partitionIndex, errorCode, highWatermark, lastStableOffset, logStartOffset, abortedTransactions,
        preferredReadReplica, records,
      };
    });
    r.taggedFields(flexible);
    return { topic, partitions };
  });
  reader.taggedFields(flexible);
  return { throttleTimeMs, errorCode, sessionId, responses };
}
