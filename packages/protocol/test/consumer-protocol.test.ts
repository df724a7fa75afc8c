// The consumer protocol's bytes (JoinGroup metadata, SyncGroup assignment):
// an int16 version, then the struct at that version. Byte vectors written out
// from Kafka's format (int32 array counts, int16 string lengths, int32 bytes
// length with −1 for null); a newer version is read with the newest layout
// and its trailing fields ignored, as Kafka's ConsumerProtocol does.

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  ProtocolErrorCode, decodeConsumerAssignment, decodeConsumerSubscription, encodeConsumerAssignment, encodeConsumerSubscription,
} from '../src/index.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('consumer protocol subscription and assignment', () => {
  it('subscription v0 and v3 bytes', () => {
    const value = { topics: ['ab'], userData: null, ownedPartitions: [{ topic: 'ab', partitions: [1, 2] }], generationId: 7, rackId: null };
    expect(encodeConsumerSubscription(0, value)).toEqual(hex('0000 00000001 0002 6162 ffffffff'));
    const v3 = hex('0003 00000001 0002 6162 ffffffff 00000001 0002 6162 00000002 00000001 00000002 00000007 ffff');
    expect(encodeConsumerSubscription(3, value)).toEqual(v3);
    expect(decodeConsumerSubscription(v3)).toEqual({ version: 3, value });
  });

  it('assignment v1 bytes', () => {
    const value = { assignedPartitions: [{ topic: 't', partitions: [0, 5] }], userData: Buffer.from([9]) };
    const bytes = hex('0001 00000001 0001 74 00000002 00000000 00000005 00000001 09');
    expect(encodeConsumerAssignment(1, value)).toEqual(bytes);
    expect(decodeConsumerAssignment(bytes)).toEqual({ version: 1, value });
  });

  it('a newer version is read with the newest layout; trailing bytes of the current one are malformed', () => {
    const v3 = encodeConsumerAssignment(3, { assignedPartitions: [{ topic: 't', partitions: [3] }], userData: null });
    const v9 = Buffer.concat([hex('0009'), v3.subarray(2), hex('deadbeef')]);
    expect(decodeConsumerAssignment(v9).value.assignedPartitions).toEqual([{ topic: 't', partitions: [3] }]);
    expect(() => decodeConsumerAssignment(Buffer.concat([v3, hex('00')]))).toThrow(expect.objectContaining({ code: ProtocolErrorCode.MALFORMED }) as Error);
    expect(() => decodeConsumerSubscription(hex('ffff 00000000 ffffffff'))).toThrow(expect.objectContaining({ code: ProtocolErrorCode.MALFORMED }) as Error);
  });

  it('round trip at every version (fast-check)', () => {
    const partitions = fc.array(fc.integer({ min: 0, max: 0x7fffffff }), { maxLength: 8 });
    const topic = fc.string({ maxLength: 20 });
    fc.assert(fc.property(fc.integer({ min: 0, max: 3 }), fc.array(fc.record({ topic, partitions }), { maxLength: 5 }), (version, assigned) => {
      const value = { assignedPartitions: assigned, userData: null };
      expect(decodeConsumerAssignment(encodeConsumerAssignment(version, value))).toEqual({ version, value });
    }), { numRuns: 100 });
  });
});
