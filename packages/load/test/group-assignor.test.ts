// The group leader's assignors against a trivial reference: every partition
// assigned to exactly one member, members differ by at most one partition,
// "range" gives contiguous runs in member-id order, "roundrobin" deals in
// member-id order; the answer does not depend on the order of the members.

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { assignPartitions } from '../src/group-assignor.js';
import type { GroupAssignor } from '../src/group-assignor.js';

describe('group assignors', () => {
  it('range and roundrobin, 3 members over 8 partitions (Kafka\'s examples)', () => {
    const range = assignPartitions('range', ['c', 'a', 'b'], 8);
    expect([...range]).toEqual([['a', [0, 1, 2]], ['b', [3, 4, 5]], ['c', [6, 7]]]);
    const rr = assignPartitions('roundrobin', ['c', 'a', 'b'], 8);
    expect([...rr]).toEqual([['a', [0, 3, 6]], ['b', [1, 4, 7]], ['c', [2, 5]]]);
    expect([...assignPartitions('range', ['x', 'y'], 1)]).toEqual([['x', [0]], ['y', []]]);
  });

  it('every partition exactly once, balanced, order-independent (fast-check)', () => {
    const ids = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 12 });
    fc.assert(fc.property(fc.constantFrom<GroupAssignor>('range', 'roundrobin'), ids, fc.integer({ min: 0, max: 64 }), (assignor, members, partitions) => {
      const a = assignPartitions(assignor, members, partitions);
      const all = [...a.values()].flat().sort((x, y) => x - y);
      expect(all).toEqual(Array.from({ length: partitions }, (_, p) => p));
      const sizes = [...a.values()].map((l) => l.length);
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
      expect([...assignPartitions(assignor, [...members].reverse(), partitions)]).toEqual([...a]);
      if (assignor === 'range') for (const l of a.values()) l.forEach((p, i) => expect(p).toBe((l[0] as number) + i));
    }), { numRuns: 200 });
  });
});
