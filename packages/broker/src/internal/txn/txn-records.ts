// The records of __transaction_state, in Kafka's formats (apache/kafka
// transaction-coordinator/src/main/resources/common/message/TransactionLog{Key,Value}.json),
// so the topic reads the same as a Kafka broker's. Key and value start with an
// int16 version; the rest is the versioned struct (big-endian, int16-length
// strings; version 1 of the value is flexible: compact lengths and a tagged-field
// section after every struct):
//
//   TransactionLogKey v0     transactionalId string
//   TransactionLogValue v0-1 producerId int64, [PreviousProducerId tag 0, NextProducerId tag 1 (v1, tagged)],
//                            producerEpoch int16, transactionTimeoutMs int32, transactionStatus int8,
//                            transactionPartitions []{topic string, partitionIds []int32} (nullable),
//                            transactionLastUpdateTimestampMs int64, transactionStartTimestampMs int64,
//                            [ClientTransactionVersion tag 2 (v1, tagged)]
//
// transactionStatus is Kafka's TransactionState id (TXN_STATES below). We write
// value v0 (what Kafka 3.x writes); we read v0 and v1 (tagged fields skipped).
// A null value is a tombstone (the transactional id expired).

import { assert } from '@seglog/common';
import { ProtocolReader, ProtocolWriter } from '@seglog/protocol';

/** Kafka's TransactionState names, by their stored id. */
export const TXN_STATES = [
  'Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence',
] as const;
export type TxnStateName = (typeof TXN_STATES)[number];

export interface TxnPartition {
  readonly topic: string;
  readonly partition: number;
}

/** TransactionLogValue (Kafka's field names, camelCase). */
export interface StoredTxn {
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly transactionTimeoutMs: number;
  readonly state: TxnStateName;
  readonly partitions: readonly TxnPartition[];
  readonly lastUpdateTimestampMs: number;
  readonly startTimestampMs: number;
}

export interface TxnRecord {
  readonly transactionalId: string;
  readonly value: StoredTxn | null;
}

const VALUE_VERSION = 0;

function finish(writer: ProtocolWriter): Buffer {
  return Buffer.concat(writer.finish().parts.map((part) => {
    assert(Buffer.isBuffer(part), 'txn-records: a record part is not a Buffer');
    return part;
  }));
}

export function encodeTxnRecord(record: TxnRecord): { key: Buffer; value: Buffer | null } {
  const key = new ProtocolWriter(64);
  key.int16(0);
  key.string(record.transactionalId, false);
  return { key: finish(key), value: record.value === null ? null : encodeTxnValue(record.value) };
}

function encodeTxnValue(value: StoredTxn): Buffer {
  const writer = new ProtocolWriter(128);
  writer.int16(VALUE_VERSION);
  writer.int64(value.producerId);
  writer.int16(value.producerEpoch);
  writer.int32(value.transactionTimeoutMs);
  writer.int8(TXN_STATES.indexOf(value.state));
  const byTopic = new Map<string, number[]>();
  for (const { topic, partition } of value.partitions) {
    const list = byTopic.get(topic) ?? [];
    list.push(partition);
    byTopic.set(topic, list);
  }
  writer.arrayLength(byTopic.size, false);
  for (const [topic, partitions] of byTopic) {
    writer.string(topic, false);
    writer.arrayLength(partitions.length, false);
    for (const partition of partitions) writer.int32(partition);
  }
  writer.int64(value.lastUpdateTimestampMs);
  writer.int64(value.startTimestampMs);
  return finish(writer);
}

/** The record a stored key/value pair holds; null for a key version that is not TransactionLogKey v0. Throws on malformed bytes. */
export function decodeTxnRecord(key: Buffer, value: Buffer | null): TxnRecord | null {
  const reader = new ProtocolReader(key);
  if (reader.int16() !== 0) return null;
  const transactionalId = reader.string(false);
  reader.expectEnd('TransactionLogKey');
  return { transactionalId, value: value === null ? null : decodeTxnValue(value) };
}

function readCount(reader: ProtocolReader, flexible: boolean, minItemBytes: number): number | null {
  const count = flexible ? reader.uvarint() - 1 : reader.int32();
  if (count === -1) return null;
  if (count < 0 || count * minItemBytes > reader.remaining()) {
    throw new RangeError(`TransactionLogValue: array count ${count} exceeds the record`);
  }
  return count;
}

function decodeTxnValue(bytes: Buffer): StoredTxn {
  const reader = new ProtocolReader(bytes);
  const version = reader.int16();
  if (version !== 0 && version !== 1) throw new RangeError(`TransactionLogValue: unknown version ${version}`);
  const flexible = version >= 1;
  const producerId = reader.int64();
  const producerEpoch = reader.int16();
  const transactionTimeoutMs = reader.int32();
  const status = reader.int8();
  const state = TXN_STATES[status];
  if (state === undefined) throw new RangeError(`TransactionLogValue: unknown transaction status ${status}`);
  const partitions: TxnPartition[] = [];
  const topics = readCount(reader, flexible, 2) ?? 0;
  for (let i = 0; i < topics; i++) {
    const topic = reader.string(flexible);
    const count = readCount(reader, flexible, 4) ?? 0;
    for (let j = 0; j < count; j++) partitions.push({ topic, partition: reader.int32() });
    reader.taggedFields(flexible);
  }
  const lastUpdateTimestampMs = reader.int64();
  const startTimestampMs = reader.int64();
  reader.taggedFields(flexible);
  reader.expectEnd('TransactionLogValue');
  return { producerId, producerEpoch, transactionTimeoutMs, state, partitions, lastUpdateTimestampMs, startTimestampMs };
}
