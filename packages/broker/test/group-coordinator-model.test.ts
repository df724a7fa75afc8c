// The group coordinator against simulated members and a simulated clock
// (fast-check, bounded by counts: no verdict depends on elapsed time). Each
// member behaves as a classic consumer does (join, rejoin with the id of
// MEMBER_ID_REQUIRED, sync, heartbeat, rejoin on REBALANCE_IN_PROGRESS /
// ILLEGAL_GENERATION, start over on UNKNOWN_MEMBER_ID); fast-check picks a
// schedule of steps, crashes (a member goes silent), leaves, restarts,
// commits and clock advances. Then every live member runs steadily.
//
// Checked:
//   - safety: within one generation no partition is handed to two members,
//     and every member gets exactly the leader's assignment for it;
//   - fencing: a commit is acknowledged only from a member of the current
//     generation, and never while the group completes a rebalance;
//   - offsets: OffsetFetch returns the last acknowledged commit per partition;
//   - liveness: after the steady phase the group is Stable, its members are
//     exactly the live members, all in its generation, and the partitions are
//     assigned exactly once.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { commitOffsets, fetchOffsets } from '../src/internal/group/group-admin.js';
import type { GroupClock, GroupTimer } from '../src/internal/group/group-clock.js';
import { GroupCoordinator } from '../src/internal/group/group-coordinator.js';
import type { GroupErrorName, JoinResult } from '../src/internal/group/group-member.js';
import type { GroupPersistence, GroupRecord } from '../src/internal/group/group-persistence.js';

const GROUP = 'g';
const TOPIC = 't';
const PARTITIONS = 6;
const SESSION_MS = 10_000;
const REBALANCE_MS = 10_000;
const MEMBERS = 4;
const STEADY_ROUNDS = 120;

/** Timers fire only when the test advances the clock. */
class SimClock implements GroupClock {
  nowMs = 1_000_000;
  private timers: { at: number; seq: number; fire: () => void; live: boolean }[] = [];
  private seq = 0;

  now(): number {
    return this.nowMs;
  }

  schedule(delayMs: number, fire: () => void): GroupTimer {
    const timer = { at: this.nowMs + Math.max(0, delayMs), seq: this.seq++, fire, live: true };
    this.timers.push(timer);
    return { cancel: () => { timer.live = false; } };
  }

  async advance(ms: number): Promise<void> {
    const until = this.nowMs + ms;
    for (;;) {
      this.timers = this.timers.filter((t) => t.live);
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (next === undefined || next.at > until) break;
      next.live = false;
      this.nowMs = next.at;
      next.fire();
      await settle();
    }
    this.nowMs = until;
  }
}

/** Lets every promise chain the coordinator and the members started run to its end. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

class MemoryPersistence implements GroupPersistence {
  readonly records: GroupRecord[] = [];
  append(_groupId: string, records: readonly GroupRecord[]): Promise<void> {
    this.records.push(...records);
    return Promise.resolve();
  }
}

type Phase = 'down' | 'join' | 'joining' | 'sync' | 'syncing' | 'stable';

interface SimMember {
  readonly index: number;
  phase: Phase;
  memberId: string;
  generation: number;
  /** The generation of the last assignment received (what a consumer commits with, also mid-rebalance). */
  stableGeneration: number;
  assignment: number[];
  busy: boolean;
  /** Bumped on crash: answers to an older incarnation are dropped. */
  epoch: number;
  pendingJoin: JoinResult | null;
}

interface World {
  readonly clock: SimClock;
  readonly coordinator: GroupCoordinator;
  readonly members: SimMember[];
  /** generation → member id → partitions the coordinator handed out. */
  readonly handedOut: Map<number, Map<string, number[]>>;
  /** generation → the leader's assignment. */
  readonly leaderPlan: Map<number, Map<string, number[]>>;
  readonly committed: Map<number, number>;
  readonly problems: string[];
}

function protocols(): { name: string; metadata: Buffer }[] {
  return [{ name: 'range', metadata: Buffer.from(TOPIC) }];
}

function plan(memberIds: readonly string[]): Map<string, number[]> {
  const sorted = [...memberIds].sort();
  const out = new Map<string, number[]>(sorted.map((id) => [id, []]));
  for (let p = 0; p < PARTITIONS; p++) out.get(sorted[p % sorted.length] as string)?.push(p);
  return out;
}

function onJoin(world: World, member: SimMember, result: JoinResult): void {
  if (result.error === 'MEMBER_ID_REQUIRED') {
    member.memberId = result.memberId;
    member.phase = 'join';
  } else if (result.error === 'NONE') {
    member.memberId = result.memberId;
    member.generation = result.generationId;
    member.pendingJoin = result;
    member.phase = 'sync';
  } else if (result.error === 'UNKNOWN_MEMBER_ID') {
    member.memberId = '';
    member.phase = 'join';
  } else {
    member.phase = 'join';
  }
  void world;
}

function act(world: World, member: SimMember): void {
  if (member.phase === 'down' || member.busy) return;
  const epoch = member.epoch;
  const done = <T>(promise: Promise<T>, then: (value: T) => void): void => {
    member.busy = true;
    void promise.then((value) => {
      if (member.epoch !== epoch) return;
      member.busy = false;
      then(value);
    });
  };
  const c = world.coordinator;
  if (member.phase === 'join') {
    member.phase = 'joining';
    done(c.join({
      groupId: GROUP, memberId: member.memberId, groupInstanceId: null, clientId: `m${member.index}`, clientHost: '/sim',
      sessionTimeoutMs: SESSION_MS, rebalanceTimeoutMs: REBALANCE_MS, protocolType: 'consumer', protocols: protocols(),
      requireKnownMemberId: true,
    }), (result) => onJoin(world, member, result));
  } else if (member.phase === 'sync') {
    const join = member.pendingJoin;
    const isLeader = join !== null && join.leaderId === member.memberId;
    const leaderPlan = isLeader ? plan(join.members.map((m) => m.memberId)) : new Map<string, number[]>();
    if (isLeader) world.leaderPlan.set(member.generation, leaderPlan);
    member.phase = 'syncing';
    const generation = member.generation;
    done(c.sync({
      groupId: GROUP, memberId: member.memberId, generationId: generation, groupInstanceId: null, protocolType: 'consumer',
      protocolName: 'range', assignments: [...leaderPlan].map(([memberId, parts]) => ({ memberId, assignment: Buffer.from(JSON.stringify(parts)) })),
    }), (result) => {
      if (result.error !== 'NONE') {
        member.phase = result.error === 'UNKNOWN_MEMBER_ID' ? 'join' : 'join';
        if (result.error === 'UNKNOWN_MEMBER_ID') member.memberId = '';
        return;
      }
      const parts = result.assignment.length === 0 ? [] : JSON.parse(result.assignment.toString()) as number[];
      member.assignment = parts;
      member.stableGeneration = generation;
      member.phase = 'stable';
      const byMember = world.handedOut.get(generation) ?? new Map<string, number[]>();
      byMember.set(member.memberId, parts);
      world.handedOut.set(generation, byMember);
      const expected = world.leaderPlan.get(generation)?.get(member.memberId) ?? [];
      if (JSON.stringify(expected) !== JSON.stringify(parts)) world.problems.push(`gen ${generation}: ${member.memberId} got ${JSON.stringify(parts)}, leader said ${JSON.stringify(expected)}`);
    });
  } else if (member.phase === 'stable') {
    const error = c.heartbeat({ groupId: GROUP, memberId: member.memberId, generationId: member.generation, groupInstanceId: null });
    rejoinOn(member, error);
  }
}

function rejoinOn(member: SimMember, error: GroupErrorName): void {
  if (error === 'NONE') return;
  if (error === 'UNKNOWN_MEMBER_ID') member.memberId = '';
  member.phase = 'join';
}

async function commit(world: World, member: SimMember, partition: number, offset: number, joined: boolean): Promise<void> {
  // Like a consumer committing what it owned when a rebalance starts: any phase, its last assignment's generation.
  // `joined`: with the generation of its latest JoinGroup answer instead (a client that commits before its SyncGroup).
  const generation = joined ? member.generation : member.stableGeneration;
  if (member.phase === 'down' || member.memberId === '' || generation < 0) return;
  const group = world.coordinator.groups.get(GROUP);
  const generationBefore = group?.generationId;
  const stateBefore = group?.state;
  const [error] = await commitOffsets(world.coordinator, {
    groupId: GROUP, memberId: member.memberId, generationId: generation, groupInstanceId: null,
    offsets: [{ topic: TOPIC, partition, offset, leaderEpoch: -1, metadata: null }],
  });
  if (error === 'NONE') {
    if (generationBefore !== generation) world.problems.push(`commit acknowledged from generation ${generation}, group at ${String(generationBefore)}`);
    if (stateBefore === 'CompletingRebalance') world.problems.push('commit acknowledged while CompletingRebalance');
    world.committed.set(partition, offset);
  } else if (member.phase === 'stable') rejoinOn(member, error === 'REBALANCE_IN_PROGRESS' ? 'NONE' : error ?? 'UNKNOWN_SERVER_ERROR');
}

type Step =
  | { readonly kind: 'act'; readonly member: number }
  | { readonly kind: 'crash'; readonly member: number }
  | { readonly kind: 'restart'; readonly member: number }
  | { readonly kind: 'leave'; readonly member: number }
  | { readonly kind: 'commit'; readonly member: number; readonly partition: number; readonly offset: number; readonly joined: boolean }
  | { readonly kind: 'advance'; readonly ms: number }
  /** Every live member acts, then one simulated second passes. */
  | { readonly kind: 'round' };

const memberIndex = fc.integer({ min: 0, max: MEMBERS - 1 });
const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: memberIndex.map((member) => ({ kind: 'act' as const, member })) },
  { weight: 1, arbitrary: memberIndex.map((member) => ({ kind: 'crash' as const, member })) },
  { weight: 2, arbitrary: memberIndex.map((member) => ({ kind: 'restart' as const, member })) },
  { weight: 1, arbitrary: memberIndex.map((member) => ({ kind: 'leave' as const, member })) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('commit' as const), member: memberIndex, partition: fc.integer({ min: 0, max: PARTITIONS - 1 }), offset: fc.nat(1000), joined: fc.boolean() }) },
  { weight: 3, arbitrary: fc.constantFrom(100, 1000, 4000, 11_000).map((ms) => ({ kind: 'advance' as const, ms })) },
  { weight: 4, arbitrary: fc.constant({ kind: 'round' as const }) },
);

async function round(world: World): Promise<void> {
  for (const member of world.members) act(world, member);
  await settle();
  await world.clock.advance(1000);
}

async function runStep(world: World, step: Step): Promise<void> {
  if (step.kind === 'advance') {
    await world.clock.advance(step.ms);
    return;
  }
  if (step.kind === 'round') {
    await round(world);
    return;
  }
  const member = world.members[step.member] as SimMember;
  switch (step.kind) {
    case 'act': act(world, member); break;
    case 'crash':
      member.epoch++;
      member.phase = 'down';
      member.busy = false;
      break;
    case 'restart':
      if (member.phase === 'down') {
        member.phase = 'join';
        member.memberId = '';
      }
      break;
    case 'leave':
      if (member.phase !== 'down' && member.memberId !== '') {
        world.coordinator.leave(GROUP, [{ memberId: member.memberId, groupInstanceId: null }]);
        member.epoch++;
        member.phase = 'down';
        member.busy = false;
      }
      break;
    case 'commit': await commit(world, member, step.partition, step.offset, step.joined); break;
  }
  await settle();
}

function checkSafety(world: World): void {
  for (const [generation, byMember] of world.handedOut) {
    const owner = new Map<number, string>();
    for (const [memberId, parts] of byMember) {
      for (const p of parts) {
        const other = owner.get(p);
        if (other !== undefined && other !== memberId) world.problems.push(`gen ${generation}: partition ${p} handed to ${other} and ${memberId}`);
        owner.set(p, memberId);
      }
    }
  }
}

async function scenario(steps: readonly Step[], initialDelayMs: number): Promise<World> {
  const clock = new SimClock();
  const coordinator = new GroupCoordinator(new MemoryPersistence(), clock, { initialRebalanceDelayMs: initialDelayMs });
  coordinator.load([]);
  const members: SimMember[] = Array.from({ length: MEMBERS }, (_, index) => ({
    index, phase: index < 2 ? 'join' : 'down', memberId: '', generation: -1, stableGeneration: -1, assignment: [], busy: false, epoch: 0, pendingJoin: null,
  }));
  const world: World = { clock, coordinator, members, handedOut: new Map(), leaderPlan: new Map(), committed: new Map(), problems: [] };
  for (const step of steps) await runStep(world, step);
  // Steady phase: every live member acts each simulated second, and commits (both generations) as it goes.
  for (let n = 0; n < STEADY_ROUNDS; n++) {
    for (const member of members) await commit(world, member, (n + member.index) % PARTITIONS, 1000 + n, n % 2 === 0);
    await round(world);
  }
  checkSafety(world);
  return world;
}

function checkSteady(world: World): void {
  const group = world.coordinator.groups.get(GROUP);
  const live = world.members.filter((m) => m.phase !== 'down');
  if (live.length === 0) {
    expect(group === undefined || group.members.size === 0).toBe(true);
    return;
  }
  expect(group?.state).toBe('Stable');
  if (group === undefined) return;
  expect([...group.members.keys()].sort()).toEqual(live.map((m) => m.memberId).sort());
  for (const member of live) {
    expect(member.phase).toBe('stable');
    expect(member.generation).toBe(group.generationId);
  }
  const all = live.flatMap((m) => m.assignment).sort((a, b) => a - b);
  expect(all).toEqual(Array.from({ length: PARTITIONS }, (_, p) => p));
  const fetched = fetchOffsets(world.coordinator, GROUP, null);
  expect(new Map(fetched.offsets.map((o) => [o.partition, o.offset]))).toEqual(world.committed);
}

describe('group coordinator model (simulated members and clock)', () => {
  it('keeps assignments disjoint, fences stale generations, and settles to one Stable generation', async () => {
    await fc.assert(fc.asyncProperty(fc.array(stepArbitrary, { minLength: 20, maxLength: 120 }), fc.constantFrom(0, 3000), async (steps, delay) => {
      const world = await scenario(steps, delay);
      expect(world.problems).toEqual([]);
      checkSteady(world);
    }), { numRuns: 150 });
  });

  it('the safety check can fail: two members handed one partition in a generation are reported', () => {
    const world = { handedOut: new Map([[3, new Map([['a', [0, 1]], ['b', [1]]])]]), problems: [] as string[] } as unknown as World;
    checkSafety(world);
    expect(world.problems).toEqual(['gen 3: partition 1 handed to a and b']);
  });

  it('a member that stops heartbeating is removed after its session timeout and the other takes its partitions', async () => {
    const rounds: Step[] = Array.from({ length: 8 }, () => [
      { kind: 'act', member: 0 }, { kind: 'act', member: 1 }, { kind: 'advance', ms: 1000 },
    ] as const).flat();
    const world = await scenario([...rounds, { kind: 'commit', member: 1, partition: 5, offset: 42, joined: false }, { kind: 'crash', member: 1 }], 0);
    expect(world.problems).toEqual([]);
    checkSteady(world);
    // Both were in one generation before the crash, each with half of the partitions.
    expect([...world.handedOut.values()].some((byMember) => byMember.size === 2)).toBe(true);
    expect(world.members[0]?.assignment).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('answers COORDINATOR_LOAD_IN_PROGRESS until loaded, then serves the loaded offsets and a Stable group', async () => {
    const clock = new SimClock();
    const coordinator = new GroupCoordinator(new MemoryPersistence(), clock);
    const join = await coordinator.join({
      groupId: GROUP, memberId: '', groupInstanceId: null, clientId: 'c', clientHost: '/h', sessionTimeoutMs: SESSION_MS,
      rebalanceTimeoutMs: REBALANCE_MS, protocolType: 'consumer', protocols: protocols(), requireKnownMemberId: true,
    });
    expect(join.error).toBe('COORDINATOR_LOAD_IN_PROGRESS');
    expect(coordinator.heartbeat({ groupId: GROUP, memberId: 'm', generationId: 1, groupInstanceId: null })).toBe('COORDINATOR_LOAD_IN_PROGRESS');
    expect(fetchOffsets(coordinator, GROUP, null).error).toBe('COORDINATOR_LOAD_IN_PROGRESS');
    coordinator.load([
      { kind: 'offset', groupId: GROUP, topic: TOPIC, partition: 0, value: { offset: 1, leaderEpoch: -1, metadata: '', commitTimestamp: 0 } },
      { kind: 'offset', groupId: GROUP, topic: TOPIC, partition: 0, value: { offset: 9, leaderEpoch: -1, metadata: '', commitTimestamp: 0 } },
      { kind: 'offset', groupId: GROUP, topic: TOPIC, partition: 1, value: { offset: 4, leaderEpoch: -1, metadata: '', commitTimestamp: 0 } },
      { kind: 'offset', groupId: GROUP, topic: TOPIC, partition: 1, value: null },
      { kind: 'group', groupId: GROUP, value: {
        protocolType: 'consumer', generation: 7, protocol: 'range', leader: 'm', currentStateTimestamp: 0,
        members: [{ memberId: 'm', groupInstanceId: null, clientId: 'c', clientHost: '/h', rebalanceTimeout: REBALANCE_MS, sessionTimeout: SESSION_MS, subscription: Buffer.from(TOPIC), assignment: Buffer.from('[0]') }],
      } },
    ]);
    expect(fetchOffsets(coordinator, GROUP, null).offsets.map((o) => [o.partition, o.offset])).toEqual([[0, 9]]);
    expect(coordinator.groups.get(GROUP)?.state).toBe('Stable');
    expect(coordinator.heartbeat({ groupId: GROUP, memberId: 'm', generationId: 7, groupInstanceId: null })).toBe('NONE');
    // The loaded member's session runs from the load: silent, it is removed and the group empties.
    await clock.advance(SESSION_MS + 1);
    expect(coordinator.groups.get(GROUP)?.members.size).toBe(0);
  });
});
