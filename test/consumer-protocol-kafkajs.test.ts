// The consumer protocol bytes the load client's group members write and read
// (@seglog/protocol's ConsumerProtocolSubscription / Assignment) against a
// real client's serializers, kafkajs' AssignerProtocol: what kafkajs writes
// (v0) we read, and kafkajs reads what our members write (v3 subscription
// and assignment: kafkajs reads the v0 fields and ignores the rest, as Kafka's
// forward-compatible format intends).
import { describe, expect, it } from 'vitest';
import { AssignerProtocol } from 'kafkajs';
import {
  decodeConsumerAssignment, decodeConsumerSubscription, encodeConsumerAssignment, encodeConsumerSubscription,
} from '@seglog/protocol';

describe('consumer protocol bytes against kafkajs', () => {
  it('a kafkajs subscription and assignment decode with our descriptions', () => {
    const metadata = AssignerProtocol.MemberMetadata.encode({ version: 0, topics: ['orders', 'audit'], userData: Buffer.from('u') });
    expect(decodeConsumerSubscription(metadata)).toEqual({
      version: 0, value: { topics: ['orders', 'audit'], userData: Buffer.from('u'), ownedPartitions: [], generationId: -1, rackId: null },
    });
    const assignment = AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: { orders: [0, 3, 6] }, userData: Buffer.alloc(0) });
    const decoded = decodeConsumerAssignment(assignment);
    expect(decoded.version).toBe(0);
    expect(decoded.value.assignedPartitions).toEqual([{ topic: 'orders', partitions: [0, 3, 6] }]);
  });

  it('kafkajs decodes what our group members write (v3)', () => {
    const subscription = encodeConsumerSubscription(3, { topics: ['orders'], userData: null, ownedPartitions: [], generationId: -1, rackId: null });
    expect(AssignerProtocol.MemberMetadata.decode(subscription)).toMatchObject({ version: 3, topics: ['orders'] });
    const assignment = encodeConsumerAssignment(3, { assignedPartitions: [{ topic: 'orders', partitions: [1, 2, 7] }], userData: null });
    expect(AssignerProtocol.MemberAssignment.decode(assignment)).toMatchObject({ version: 3, assignment: { orders: [1, 2, 7] } });
  });
});
