// The two classic consumer assignors the load client's group leader runs in
// SyncGroup, with Kafka's rules for one topic (RangeAssignor,
// RoundRobinAssignor): members are ordered by member id; "range" gives
// member i the contiguous run of floor(P / M) partitions, one more for the
// first P mod M members; "roundrobin" deals partition p to member p mod M.
// Both assign every partition to exactly one member and differ by at most
// one partition between members (test/group-assignor.test.ts). Only the
// run's partitions 0..P−1 are assigned (the checker covers those).

import { assert } from '@seglog/common';

export const GROUP_ASSIGNORS = ['range', 'roundrobin'] as const;
export type GroupAssignor = (typeof GROUP_ASSIGNORS)[number];

/** memberId → the partitions assigned to it (ascending); every member is a key. */
export function assignPartitions(assignor: GroupAssignor, memberIds: readonly string[], partitions: number): Map<string, number[]> {
  assert(memberIds.length > 0, 'assignPartitions: no members');
  assert(Number.isInteger(partitions) && partitions >= 0, 'assignPartitions: partitions must be a count');
  const members = [...memberIds].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  assert(new Set(members).size === members.length, 'assignPartitions: duplicate member id');
  const out = new Map<string, number[]>(members.map((m) => [m, []]));
  const m = members.length;
  if (assignor === 'range') {
    const per = Math.floor(partitions / m);
    const extra = partitions % m;
    members.forEach((member, i) => {
      const start = i * per + Math.min(i, extra);
      const count = per + (i < extra ? 1 : 0);
      const list = out.get(member) as number[];
      for (let p = start; p < start + count; p++) list.push(p);
    });
  } else {
    for (let p = 0; p < partitions; p++) (out.get(members[p % m] as string) as number[]).push(p);
  }
  return out;
}
