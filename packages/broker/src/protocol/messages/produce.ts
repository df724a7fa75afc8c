// Produce (key 0), versions 3–9 (ProduceRequest/Response.json); flexible from v9.
// v3 is the first version that carries record batch v2 (the only format the
// log accepts); v10+ add KIP-951 leader-discovery tags we have no use for.
//
//   request  transactional_id nullable string, acks int16, timeout_ms int32,
//            topic_data [name, partition_data [index int32, records nullable bytes]]
//   response responses [name, partition_responses [index, error_code, base_offset int64,
//                       log_append_time_ms int64, log_start_offset int64 (v5+),
//                       record_errors [batch_index int32, batch_index_error_message
//                       nullable] (v8+), error_message nullable (v8+)]],
//            throttle_time_ms int32
//
// Records stay raw: a zero-copy slice of the request frame, validated later
// by @seglog/records when the log appends it.

import { minSizes, readArray, writeArray } from '../../internal/arrays.js';
import type { ProtocolReader } from '../protocol-reader.js';
import type { ProtocolWriter } from '../protocol-writer.js';

const FLEXIBLE_FROM = 9;

export interface ProducePartitionData {
  readonly index: number;
  readonly records: Buffer | null;
}

export interface ProduceTopicData {
  readonly name: string;
  readonly partitionData: readonly ProducePartitionData[];
}

export interface ProduceRequest {
  readonly transactionalId: string | null;
  readonly acks: number;
  readonly timeoutMs: number;
  readonly topicData: readonly ProduceTopicData[];
}

export interface ProduceRecordError {
  readonly batchIndex: number;
  readonly batchIndexErrorMessage: string | null;
}

export interface ProducePartitionResponse {
  readonly index: number;
  readonly errorCode: number;
  readonly baseOffset: number;
  readonly logAppendTimeMs: number;
  readonly logStartOffset: number;
  readonly recordErrors: readonly ProduceRecordError[];
  readonly errorMessage: string | null;
}

export interface ProduceTopicResponse {
  readonly name: string;
  readonly partitionResponses: readonly ProducePartitionResponse[];
}

export interface ProduceResponse {
  readonly responses: readonly ProduceTopicResponse[];
  readonly throttleTimeMs: number;
}

export function decodeProduceRequest(reader: ProtocolReader, version: number): ProduceRequest {
  const flexible = version >= FLEXIBLE_FROM;
  const min = minSizes(flexible);
  const transactionalId = reader.nullableString(flexible);
  const acks = reader.int16();
  const timeoutMs = reader.int32();
  const topicData = readArray(reader, flexible, min.str + min.arr + min.tags, (r) => {
    const name = r.string(flexible);
    const partitionData = readArray(r, flexible, 4 + (flexible ? 1 : 4) + min.tags, (p) => {
      const index = p.int32();
      const records = p.nullableBytes(flexible);
      p.taggedFields(flexible);
      return { index, records };
    });
    r.taggedFields(flexible);
    return { name, partitionData };
  });
  reader.taggedFields(flexible);
  return { transactionalId, acks, timeoutMs, topicData };
}

export function encodeProduceResponse(writer: ProtocolWriter, version: number, body: ProduceResponse): void {
  const flexible = version >= FLEXIBLE_FROM;
  writeArray(writer, flexible, body.responses, (w, topic) => {
    w.string(topic.name, flexible);
    writeArray(w, flexible, topic.partitionResponses, (pw, partition) => {
      pw.int32(partition.index);
      pw.int16(partition.errorCode);
      pw.int64(partition.baseOffset);
      pw.int64(partition.logAppendTimeMs);
      if (version >= 5) pw.int64(partition.logStartOffset);
      if (version >= 8) {
        writeArray(pw, flexible, partition.recordErrors, (ew, recordError) => {
          ew.int32(recordError.batchIndex);
          ew.nullableString(recordError.batchIndexErrorMessage, flexible);
          ew.emptyTaggedFields(flexible);
        });
        pw.nullableString(partition.errorMessage, flexible);
      }
      pw.emptyTaggedFields(flexible);
    });
    w.emptyTaggedFields(flexible);
  });
  writer.int32(body.throttleTimeMs);
  writer.emptyTaggedFields(flexible);
}

/** Client side (diagnostic client, tests). Records go out as their own part (zero-copy). */
export function encodeProduceRequest(writer: ProtocolWriter, version: number, body: ProduceRequest): void {
  const flexible = version >= FLEXIBLE_FROM;
  writer.nullableString(body.transactionalId, flexible);
  writer.int16(body.acks);
  writer.int32(body.timeoutMs);
  writeArray(writer, flexible, body.topicData, (w, topic) => {
    w.string(topic.name, flexible);
    writeArray(w, flexible, topic.partitionData, (pw, partition) => {
      pw.int32(partition.index);
      pw.records(partition.records, flexible);
      pw.emptyTaggedFields(flexible);
    });
    w.emptyTaggedFields(flexible);
  });
  writer.emptyTaggedFields(flexible);
}

/** Client side (diagnostic client, tests). */
export function decodeProduceResponse(reader: ProtocolReader, version: number): ProduceResponse {
  const flexible = version >= FLEXIBLE_FROM;
  const min = minSizes(flexible);
  const responses = readArray(reader, flexible, min.str + min.arr + min.tags, (r) => {
    const name = r.string(flexible);
    const partitionResponses = readArray(r, flexible, 22, (p) => {
      const index = p.int32();
      const errorCode = p.int16();
      const baseOffset = p.int64();
      const logAppendTimeMs = p.int64();
      const logStartOffset = version >= 5 ? p.int64() : -1;
      let recordErrors: ProduceRecordError[] = [];
      let errorMessage: string | null = null;
      if (version >= 8) {
        recordErrors = readArray(p, flexible, 4 + min.str + min.tags, (e) => {
          const batchIndex = e.int32();
          const batchIndexErrorMessage = e.nullableString(flexible);
          e.taggedFields(flexible);
          return { batchIndex, batchIndexErrorMessage };
        });
        errorMessage = p.nullableString(flexible);
      }
      p.taggedFields(flexible);
      return { index, errorCode, baseOffset, logAppendTimeMs, logStartOffset, recordErrors, errorMessage };
    });
    r.taggedFields(flexible);
    return { name, partitionResponses };
  });
  const throttleTimeMs = reader.int32();
  reader.taggedFields(flexible);
  return { responses, throttleTimeMs };
}
