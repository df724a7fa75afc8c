// InitProducerId (key 22), versions 0–4 (InitProducerIdRequest/Response.json); flexible from v2.
//
//   request  transactional_id nullable string, transaction_timeout_ms int32,
//            producer_id int64 (v3+), producer_epoch int16 (v3+)
//   response throttle_time_ms int32, error_code int16, producer_id int64, producer_epoch int16

import type { ProtocolReader } from '../protocol-reader.js';
import type { ProtocolWriter } from '../protocol-writer.js';

const FLEXIBLE_FROM = 2;

export interface InitProducerIdRequest {
  readonly transactionalId: string | null;
  readonly transactionTimeoutMs: number;
  /** −1 before v3 (no existing producer to resume). */
  readonly producerId: number;
  readonly producerEpoch: number;
}

export interface InitProducerIdResponse {
  readonly throttleTimeMs: number;
  readonly errorCode: number;
  readonly producerId: number;
  readonly producerEpoch: number;
}

export function decodeInitProducerIdRequest(reader: ProtocolReader, version: number): InitProducerIdRequest {
  const flexible = version >= FLEXIBLE_FROM;
  const transactionalId = reader.nullableString(flexible);
  const transactionTimeoutMs = reader.int32();
  const producerId = version >= 3 ? reader.int64() : -1;
  const producerEpoch = version >= 3 ? reader.int16() : -1;
  reader.taggedFields(flexible);
  return { transactionalId, transactionTimeoutMs, producerId, producerEpoch };
}

export function encodeInitProducerIdResponse(writer: ProtocolWriter, version: number, body: InitProducerIdResponse): void {
  const flexible = version >= FLEXIBLE_FROM;
  writer.int32(body.throttleTimeMs);
  writer.int16(body.errorCode);
  writer.int64(body.producerId);
  writer.int16(body.producerEpoch);
  writer.emptyTaggedFields(flexible);
}

/** Client side (diagnostic client, tests). */
export function encodeInitProducerIdRequest(writer: ProtocolWriter, version: number, body: InitProducerIdRequest): void {
  const flexible = version >= FLEXIBLE_FROM;
  writer.nullableString(body.transactionalId, flexible);
  writer.int32(body.transactionTimeoutMs);
  if (version >= 3) {
    writer.int64(body.producerId);
    writer.int16(body.producerEpoch);
  }
  writer.emptyTaggedFields(flexible);
}

/** Client side (diagnostic client, tests). */
export function decodeInitProducerIdResponse(reader: ProtocolReader, version: number): InitProducerIdResponse {
  const flexible = version >= FLEXIBLE_FROM;
  const throttleTimeMs = reader.int32();
  const errorCode = reader.int16();
  const producerId = reader.int64();
  const producerEpoch = reader.int16();
  reader.taggedFields(flexible);
  return { throttleTimeMs, errorCode, producerId, producerEpoch };
}
