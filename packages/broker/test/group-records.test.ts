// __consumer_offsets records in Kafka's formats: hex vectors written out by
// hand from Kafka's OffsetCommitKey/Value and GroupMetadataKey/Value
// definitions (the bytes a Kafka 3.x broker writes), older and flexible
// versions Kafka may have written, and a fast-check round trip.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { GroupRecord } from '../src/internal/group/group-persistence.js';
import { decodeGroupRecord, encodeGroupRecord } from '../src/internal/group/group-records.js';
import { offsetsPartitionFor } from '../src/internal/group/offsets-topic.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('__consumer_offsets records', () => {
  it('an offset commit: key v1 and value v3, byte for byte', () => {
    const record: GroupRecord = { kind: 'offset', groupId: 'g', topic: 't', partition: 2, value: { offset: 5, leaderEpoch: -1, metadata: 'm', commitTimestamp: 1000 } };
    const { key, value } = encodeGroupRecord(record);
    expect(key.toString('hex')).toBe('0001' + '000167' + '000174' + '00000002');
    expect(value?.toString('hex')).toBe('0003' + '0000000000000005' + 'ffffffff' + '00016d' + '00000000000003e8');
    expect(decodeGroupRecord(key, value ?? null)).toEqual(record);
  });

  it('reads OffsetCommitValue v1 (expire timestamp) and v4 (flexible), and a tombstone', () => {
    const key = hex('0001 000167 000174 00000002');
    const v1 = decodeGroupRecord(key, hex('0001 0000000000000007 0000 00000000000003e8 ffffffffffffffff'));
    expect(v1).toMatchObject({ value: { offset: 7, leaderEpoch: -1, metadata: '', commitTimestamp: 1000 } });
    const v4 = decodeGroupRecord(key, hex('0004 0000000000000009 00000003 02 6d 00000000000003e8 00'));
    expect(v4).toMatchObject({ value: { offset: 9, leaderEpoch: 3, metadata: 'm', commitTimestamp: 1000 } });
    expect(decodeGroupRecord(key, null)).toEqual({ kind: 'offset', groupId: 'g', topic: 't', partition: 2, value: null });
  });

  it('a group: key v2 and value v3, byte for byte; keys of other coordinators are not ours', () => {
    const record: GroupRecord = {
      kind: 'group', groupId: 'g', value: {
        protocolType: 'consumer', generation: 3, protocol: 'range', leader: 'a', currentStateTimestamp: 1000,
        members: [{ memberId: 'a', groupInstanceId: null, clientId: 'c', clientHost: '/h', rebalanceTimeout: 300, sessionTimeout: 100, subscription: hex('01'), assignment: hex('0203') }],
      },
    };
    const { key, value } = encodeGroupRecord(record);
    expect(key.toString('hex')).toBe('0002' + '000167');
    expect(value?.toString('hex')).toBe('0003' + '0008' + Buffer.from('consumer').toString('hex') + '00000003' + '0005' + Buffer.from('range').toString('hex')
      + '000161' + '00000000000003e8' + '00000001' + '000161' + 'ffff' + '000163' + '00022f68' + '0000012c' + '00000064' + '0000000101' + '000000020203');
    expect(decodeGroupRecord(key, value ?? null)).toEqual(record);
    expect(decodeGroupRecord(hex('0003 000167'), hex('00'))).toBeNull();
  });

  it('round-trips any record', () => {
    const str = fc.string({ maxLength: 8 });
    const bytes = fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b));
    const offset = fc.record({
      kind: fc.constant('offset' as const), groupId: str, topic: str, partition: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      value: fc.option(fc.record({ offset: fc.maxSafeInteger(), leaderEpoch: fc.integer({ min: -1, max: 2 ** 31 - 1 }), metadata: str, commitTimestamp: fc.maxSafeInteger() }), { nil: null }),
    });
    const member = fc.record({
      memberId: str, groupInstanceId: fc.option(str, { nil: null }), clientId: str, clientHost: str,
      rebalanceTimeout: fc.integer({ min: -1, max: 2 ** 31 - 1 }), sessionTimeout: fc.integer({ min: 0, max: 2 ** 31 - 1 }), subscription: bytes, assignment: bytes,
    });
    const group = fc.record({
      kind: fc.constant('group' as const), groupId: str,
      value: fc.option(fc.record({
        protocolType: str, generation: fc.integer({ min: 0, max: 2 ** 31 - 1 }), protocol: fc.option(str, { nil: null }), leader: fc.option(str, { nil: null }),
        currentStateTimestamp: fc.maxSafeInteger(), members: fc.array(member, { maxLength: 3 }),
      }), { nil: null }),
    });
    fc.assert(fc.property(fc.oneof(offset, group), (record: GroupRecord) => {
      const { key, value } = encodeGroupRecord(record);
      expect(decodeGroupRecord(key, value)).toEqual(record);
    }), { numRuns: 200 });
  });

  it('a group\'s partition is Kafka\'s abs(String.hashCode) % count', () => {
    // Java: "g".hashCode() == 103, "console-consumer-12345".hashCode() == 158455506, and
    // "polygenelubricants".hashCode() == Integer.MIN_VALUE, which Utils.abs maps to 0.
    expect(offsetsPartitionFor('g', 50)).toBe(103 % 50);
    expect(offsetsPartitionFor('console-consumer-12345', 50)).toBe(158455506 % 50);
    expect(offsetsPartitionFor('polygenelubricants', 50)).toBe(0);
    expect(offsetsPartitionFor('', 50)).toBe(0);
  });
});
