// The records of __consumer_offsets, in Kafka's formats (apache/kafka
// group-coordinator/src/main/resources/common/message/*.json), so the topic
// reads the same as a Kafka broker's. Each record's key and value start with
// an int16 version; the rest is the versioned struct (big-endian, int16-length
// strings, int32-length bytes; versions marked flexible use compact lengths
// and end every struct with a tagged-field section):
//
//   key v0/v1 OffsetCommitKey   group string, topic string, partition int32
//   key v2    GroupMetadataKey  group string
//   OffsetCommitValue v0-4 (flexible 4+)
//     offset int64, leaderEpoch int32 (v3+, default -1), metadata string,
//     commitTimestamp int64, expireTimestamp int64 (v1 only)
//   GroupMetadataValue v0-4 (flexible 4+)
//     protocolType string, generation int32, protocol string?, leader string?,
//     currentStateTimestamp int64 (v2+, default -1), members []:
//       memberId string, groupInstanceId string? (v3+), clientId string,
//       clientHost string, rebalanceTimeout int32 (v1+, default -1),
//       sessionTimeout int32, subscription bytes, assignment bytes
//
// A null value is a tombstone (the key's offset or group is deleted). We
// write OffsetCommitValue v3 and GroupMetadataValue v3, as Kafka 3.x does;
// we read every version above. Keys of other versions (transactions of other
// coordinators, KIP-848 records) are not ours: decodeGroupRecord returns null.

import { assert } from '@seglog/common';
import { ProtocolReader, ProtocolWriter } from '@seglog/protocol';
import type { CommittedOffset } from './classic-group.js';
import type { GroupRecord, StoredGroup, StoredMember } from './group-persistence.js';

const OFFSET_VALUE_VERSION = 3;
const GROUP_VALUE_VERSION = 3;

function finish(writer: ProtocolWriter): Buffer {
  const finished = writer.finish();
  return Buffer.concat(finished.parts.map((part) => {
    assert(Buffer.isBuffer(part), 'group-records: a record part is not a Buffer');
    return part;
  }));
}

export function encodeGroupRecord(record: GroupRecord): { key: Buffer; value: Buffer | null } {
  const key = new ProtocolWriter(64);
  if (record.kind === 'offset') {
    key.int16(1);
    key.string(record.groupId, false);
    key.string(record.topic, false);
    key.int32(record.partition);
    return { key: finish(key), value: record.value === null ? null : encodeOffsetValue(record.value) };
  }
  key.int16(2);
  key.string(record.groupId, false);
  return { key: finish(key), value: record.value === null ? null : encodeGroupValue(record.value) };
}

function encodeOffsetValue(value: CommittedOffset): Buffer {
  const writer = new ProtocolWriter(64);
  writer.int16(OFFSET_VALUE_VERSION);
  writer.int64(value.offset);
  writer.int32(value.leaderEpoch);
  writer.string(value.metadata, false);
  writer.int64(value.commitTimestamp);
  return finish(writer);
}

function encodeGroupValue(value: StoredGroup): Buffer {
  const writer = new ProtocolWriter(256);
  writer.int16(GROUP_VALUE_VERSION);
  writer.string(value.protocolType, false);
  writer.int32(value.generation);
  writer.nullableString(value.protocol, false);
  writer.nullableString(value.leader, false);
  writer.int64(value.currentStateTimestamp);
  writer.arrayLength(value.members.length, false);
  for (const member of value.members) {
    writer.string(member.memberId, false);
    writer.nullableString(member.groupInstanceId, false);
    writer.string(member.clientId, false);
    writer.string(member.clientHost, false);
    writer.int32(member.rebalanceTimeout);
    writer.int32(member.sessionTimeout);
    writer.nullableBytes(member.subscription, false);
    writer.nullableBytes(member.assignment, false);
  }
  return finish(writer);
}

/** The record a stored key/value pair holds; null for keys that are not a group's or an offset's. Throws on malformed bytes. */
export function decodeGroupRecord(key: Buffer, value: Buffer | null): GroupRecord | null {
  const reader = new ProtocolReader(key);
  const keyVersion = reader.int16();
  if (keyVersion === 0 || keyVersion === 1) {
    const groupId = reader.string(false);
    const topic = reader.string(false);
    const partition = reader.int32();
    reader.expectEnd('OffsetCommitKey');
    return { kind: 'offset', groupId, topic, partition, value: value === null ? null : decodeOffsetValue(value) };
  }
  if (keyVersion === 2) {
    const groupId = reader.string(false);
    reader.expectEnd('GroupMetadataKey');
    return { kind: 'group', groupId, value: value === null ? null : decodeGroupValue(value) };
  }
  return null;
}

function decodeOffsetValue(bytes: Buffer): CommittedOffset {
  const reader = new ProtocolReader(bytes);
  const version = reader.int16();
  const flexible = version >= 4;
  const offset = reader.int64();
  const leaderEpoch = version >= 3 ? reader.int32() : -1;
  const metadata = reader.string(flexible);
  const commitTimestamp = reader.int64();
  if (version === 1) reader.int64();
  reader.taggedFields(flexible);
  return { offset, leaderEpoch, metadata, commitTimestamp };
}

function decodeGroupValue(bytes: Buffer): StoredGroup {
  const reader = new ProtocolReader(bytes);
  const version = reader.int16();
  const flexible = version >= 4;
  const protocolType = reader.string(flexible);
  const generation = reader.int32();
  const protocol = reader.nullableString(flexible);
  const leader = reader.nullableString(flexible);
  const currentStateTimestamp = version >= 2 ? reader.int64() : -1;
  const count = reader.arrayLength(flexible, 16);
  const members: StoredMember[] = [];
  for (let i = 0; i < count; i++) {
    const memberId = reader.string(flexible);
    const groupInstanceId = version >= 3 ? reader.nullableString(flexible) : null;
    const clientId = reader.string(flexible);
    const clientHost = reader.string(flexible);
    const rebalanceTimeout = version >= 1 ? reader.int32() : -1;
    const sessionTimeout = reader.int32();
    const subscription = reader.bytes(flexible);
    const assignment = reader.bytes(flexible);
    reader.taggedFields(flexible);
    members.push({ memberId, groupInstanceId, clientId, clientHost, rebalanceTimeout, sessionTimeout, subscription, assignment });
  }
  reader.taggedFields(flexible);
  return { protocolType, generation, protocol, leader, currentStateTimestamp, members };
}
