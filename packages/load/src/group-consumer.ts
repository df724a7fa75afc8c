// The consume phase in consumer-group mode (`--group G --consumers N`): N
// GroupMembers (group-member.ts), each with a coordinator connection and a
// fetch connection, join group G; fetching starts once a generation holds
// all N members (the leader saw N in its JoinGroup answer), so that the
// measured rate is the group's. Each member runs one loop: (re)join when
// told to, fetch its assigned partitions, heartbeat and commit on their
// intervals, rest for IDLE_SLICE_MS when it has nothing to fetch. The
// phase ends when the checker has every partition up to its end offset (or
// a bound stops it); then every member commits and leaves.
//
// Integrity: one shared LoadChecker sees every batch once in offset order
// per partition; a member that resumes a partition from a committed offset
// below what was checked fetches those records again, and the checker
// counts them as duplicates (reported, not a violation). A record missed
// across a rebalance is a violation like any other.
//
// Test hooks (LoadOptions): groupLeave makes a member leave mid-run;
// groupJoinLate keeps a member out until the group has fetched some records,
// and from its JoinGroup until it is in, the others fetch nothing (they
// heartbeat, see the rebalance, commit and rejoin), so that the join lands
// mid-run whatever the machine's speed.
//
// Bounds (by counts, never by the machine's speed): maxFetchRequests over
// all members; STALL_ROUNDS_MAX fetches in a row without a record by one
// member; JOINS_MAX rebalances per member; IDLE_ROUNDS_MAX idle slices per
// member in a row without progress of any partition.

import type { FetchPartition } from '@seglog/protocol';
import { GroupMember } from './group-member.js';
import type { GroupAssignor } from './group-assignor.js';
import { findCoordinator, negotiateGroupVersions } from './group-setup.js';
import { KafkaConnection } from './kafka-connection.js';
import type { LoadChecker } from './load-checker.js';
import type { ConsumeResult } from './load-consumer.js';
import type { LoadGroupJoinLate, LoadGroupLeave } from './load-options.js';

const IDLE_SLICE_MS = 10;
const IDLE_ROUNDS_MAX = 6000;
const STALL_ROUNDS_MAX = 20;
const JOINS_MAX = 100;
/** Added to the rebalance timeout for the coordinator connection's deadline: a JoinGroup may wait that long. */
const JOIN_DEADLINE_SLACK_MS = 5000;

export interface GroupConsumeSetup {
  readonly host: string;
  readonly port: number;
  readonly clientId: string;
  readonly requestTimeoutMs: number;
  readonly group: string;
  readonly consumers: number;
  readonly assignor: GroupAssignor;
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly autoCommitIntervalMs: number;
  readonly topic: string;
  readonly partitions: number;
  readonly fetchVersion: number;
  readonly partitionMaxBytes: number;
  readonly maxFetchRequests: number;
  readonly startOffsets: readonly number[];
  readonly endOffsets: readonly number[];
  readonly groupLeave: LoadGroupLeave | null;
  readonly groupJoinLate: LoadGroupJoinLate | null;
}

export interface GroupMemberSummary {
  readonly memberId: string;
  /** Generation ids this member synced. */
  readonly generations: readonly number[];
  /** Partitions assigned in its last generation. */
  readonly partitions: readonly number[];
  readonly recordsFetched: number;
  readonly fetchRequests: number;
  readonly commits: number;
  readonly commitFailures: number;
  readonly heartbeats: number;
  /** Partitions it resumed from a committed offset when assigned. */
  readonly resumedFromCommit: number;
  /** 'end': left after the phase; 'mid-run': left early (the groupLeave test hook). */
  readonly left: 'end' | 'mid-run';
  /** 'start': joined to form the group; 'mid-run': joined late (the groupJoinLate test hook). */
  readonly joined: 'start' | 'mid-run';
}

export interface GroupSummary {
  readonly group: string;
  readonly assignor: GroupAssignor;
  readonly coordinator: { readonly nodeId: number; readonly host: string; readonly port: number };
  readonly members: readonly GroupMemberSummary[];
  /** The highest generation id synced. */
  readonly generation: number;
  /** Distinct generations synced by any member (the first formation included). */
  readonly rebalances: number;
  readonly commits: number;
  readonly commitFailures: number;
  /** Records fetched by all members, duplicates included. */
  readonly recordsFetched: number;
  readonly duplicateRecords: number;
  readonly bytesFetched: number;
  /** From connecting the members to the generation that held every member (includes the broker's group.initial.rebalance.delay.ms). */
  readonly formationMs: number;
  /** From the generation that first held every member to the last partition reaching its end. */
  readonly durationMs: number;
  /** recordsFetched per second of durationMs. */
  readonly recordsPerSecond: number;
  /** Record batch bytes fetched per second, MB (10^6). */
  readonly MBps: number;
}

interface Shared {
  readonly setup: GroupConsumeSetup;
  readonly checker: LoadChecker;
  readonly failed: Set<number>;
  /** Closes every connection: a member that failed ends the others' pending requests (a JoinGroup may wait minutes). */
  readonly abort: () => void;
  readonly startedAt: number;
  formedAt: number | null;
  finishedAt: number | null;
  stopped: boolean;
  fetchRequests: number;
  /** Records fetched by all members (duplicates included). */
  recordsFetched: number;
  /** groupJoinLate: the late member is joining; the others hold their fetches until it is in. */
  lateJoinPending: boolean;
  idleRounds: number;
  lastProgress: number;
}

function progressOf(shared: Shared): number {
  let sum = 0;
  for (const x of shared.checker.nextOffsets) sum += x;
  return sum;
}

function isDone(shared: Shared): boolean {
  const next = shared.checker.nextOffsets;
  for (let p = 0; p < shared.setup.partitions; p++) {
    if ((next[p] as number) < (shared.setup.endOffsets[p] as number) && !shared.failed.has(p)) return false;
  }
  return true;
}

function stop(shared: Shared, why: string | null): void {
  if (!shared.stopped && why !== null) shared.checker.violation(`group ${shared.setup.group}: ${why}`);
  shared.stopped = true;
  if (shared.finishedAt === null) shared.finishedAt = performance.now();
}

export async function consumeAsGroup(s: GroupConsumeSetup, checker: LoadChecker): Promise<{ consume: ConsumeResult; group: GroupSummary }> {
  const connections: KafkaConnection[] = [];
  const connect = async (host: string, port: number, name: string, requestTimeoutMs: number): Promise<KafkaConnection> => {
    const c = await KafkaConnection.connect({ host, port, clientId: `${s.clientId}-${name}`, requestTimeoutMs, maxResponseBytes: 256 * 1024 * 1024 });
    connections.push(c);
    return c;
  };
  try {
    const bootstrap = await connect(s.host, s.port, 'group', s.requestTimeoutMs);
    const versions = await negotiateGroupVersions(bootstrap);
    const coordinator = await findCoordinator(bootstrap, versions, s.group);
    const shared: Shared = {
      setup: s, checker, failed: new Set(), abort: () => connections.forEach((c) => c.close()), startedAt: performance.now(), formedAt: null, finishedAt: null, stopped: false,
      fetchRequests: 0, recordsFetched: 0, lateJoinPending: false, idleRounds: 0, lastProgress: checker.nextOffsets.reduce((a, b) => a + b, 0),
    };
    const members: GroupMember[] = [];
    const joinDeadlineMs = Math.max(s.requestTimeoutMs, s.rebalanceTimeoutMs + JOIN_DEADLINE_SLACK_MS);
    for (let i = 0; i < s.consumers; i++) {
      const coordinatorConnection = await connect(coordinator.host, coordinator.port, `member-${i}-coordinator`, joinDeadlineMs);
      const fetchConnection = await connect(s.host, s.port, `member-${i}-fetch`, s.requestTimeoutMs);
      members.push(new GroupMember({
        index: i, group: s.group, topic: s.topic, partitions: s.partitions, assignor: s.assignor, sessionTimeoutMs: s.sessionTimeoutMs,
        rebalanceTimeoutMs: s.rebalanceTimeoutMs, heartbeatIntervalMs: s.heartbeatIntervalMs, autoCommitIntervalMs: s.autoCommitIntervalMs,
        coordinator: coordinatorConnection, fetch: fetchConnection, versions, fetchVersion: s.fetchVersion, partitionMaxBytes: s.partitionMaxBytes,
        startOffsets: s.startOffsets, endOffsets: s.endOffsets, checker, failed: shared.failed,
      }));
    }
    const outcomes = await Promise.allSettled(members.map((m) => runMember(m, shared)));
    const failure = outcomes.find((o) => o.status === 'rejected');
    if (failure !== undefined) throw (failure as PromiseRejectedResult).reason;
    if (shared.fetchRequests >= s.maxFetchRequests) checker.violation(`consume: stopped at the bound of ${s.maxFetchRequests} fetch requests`);
    const leftEarly = outcomes.map((o) => (o as PromiseFulfilledResult<'end' | 'mid-run'>).value);
    return summarise(s, shared, members, leftEarly, coordinator);
  } finally {
    for (const c of connections) c.close();
  }
}

/** One member's loop; resolves with how it left. Any request error stops every member and is rethrown. */
async function runMember(member: GroupMember, shared: Shared): Promise<'end' | 'mid-run'> {
  const s = shared.setup;
  try {
    const late = s.groupJoinLate;
    if (late !== null && late.member === member.setup.index) {
      while (!shared.stopped && shared.recordsFetched < late.afterRecords && !isDone(shared)) await rest(shared);
      if (shared.stopped || isDone(shared)) return 'end';
      shared.lateJoinPending = true;
      await member.join();
      shared.lateJoinPending = false;
    }
    let stalled = 0;
    while (!shared.stopped) {
      if (member.needsJoin) {
        if (member.generations.length >= JOINS_MAX) {
          stop(shared, `member ${member.setup.index} rebalanced ${JOINS_MAX} times`);
          break;
        }
        await member.join();
        const forming = s.consumers - (s.groupJoinLate === null ? 0 : 1);
        if (member.isLeader && member.ledMembers >= forming && shared.formedAt === null) shared.formedAt = performance.now();
        continue;
      }
      const leave = s.groupLeave;
      if (leave !== null && leave.member === member.setup.index && member.recordsFetched >= leave.afterRecords && shared.formedAt !== null) {
        if (leave.commit) await member.commit();
        await member.leave();
        return 'mid-run';
      }
      const partitions: FetchPartition[] = shared.formedAt === null || shared.lateJoinPending ? [] : member.fetchable();
      let fetched = 0;
      if (partitions.length > 0 && shared.fetchRequests < s.maxFetchRequests) {
        shared.fetchRequests++;
        fetched = await member.fetchOnce(partitions);
        shared.recordsFetched += fetched;
        stalled = fetched === 0 ? stalled + 1 : 0;
        if (stalled >= STALL_ROUNDS_MAX) {
          stop(shared, `member ${member.setup.index}: no record in ${STALL_ROUNDS_MAX} fetches of partitions ${partitions.map((p) => p.partition).join(',')}`);
        }
      } else if (partitions.length > 0) {
        stop(shared, null);
      }
      if (isDone(shared)) {
        stop(shared, null);
        break;
      }
      const now = Date.now();
      if (!member.needsJoin && now >= member.nextHeartbeatAt) await member.heartbeat();
      if (!member.needsJoin && now >= member.nextCommitAt) await member.commit();
      if (fetched === 0) await rest(shared);
    }
    if (!member.needsJoin) await member.commit();
    await member.leave();
    return 'end';
  } catch (error) {
    shared.stopped = true;
    shared.abort();
    throw error;
  }
}

/** An idle slice; the whole group's idle rounds without progress are bounded. */
async function rest(shared: Shared): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, IDLE_SLICE_MS));
  const progress = progressOf(shared);
  if (progress !== shared.lastProgress) {
    shared.lastProgress = progress;
    shared.idleRounds = 0;
    return;
  }
  shared.idleRounds++;
  if (shared.idleRounds >= IDLE_ROUNDS_MAX * shared.setup.consumers) {
    const where = `formed: ${shared.formedAt !== null}, offsets ${shared.checker.nextOffsets.join(',')}, end ${shared.setup.endOffsets.join(',')}`;
    stop(shared, `no partition progressed in ${IDLE_ROUNDS_MAX} idle rounds per member (${where})`);
  }
}

function summarise(
  s: GroupConsumeSetup, shared: Shared, members: readonly GroupMember[], left: readonly ('end' | 'mid-run')[],
  coordinator: { readonly nodeId: number; readonly host: string; readonly port: number },
): { consume: ConsumeResult; group: GroupSummary } {
  const result = shared.checker.finish();
  const formedAt = shared.formedAt ?? performance.now();
  const durationMs = Math.max(0, (shared.finishedAt ?? performance.now()) - formedAt);
  const summaries: GroupMemberSummary[] = members.map((m, i) => ({
    memberId: m.memberId, generations: [...m.generations], partitions: [...m.lastAssigned], recordsFetched: m.recordsFetched,
    fetchRequests: m.fetchRequests, commits: m.commits, commitFailures: m.commitFailures, heartbeats: m.heartbeats,
    resumedFromCommit: m.resumedFromCommit, left: left[i] ?? 'end', joined: s.groupJoinLate?.member === i ? 'mid-run' : 'start',
  }));
  const sum = (f: (m: GroupMember) => number): number => members.reduce((a, m) => a + f(m), 0);
  const recordsFetched = sum((m) => m.recordsFetched);
  const bytesFetched = sum((m) => m.bytesFetched);
  const seconds = durationMs / 1000;
  const generations = new Set(members.flatMap((m) => m.generations));
  const group: GroupSummary = {
    group: s.group, assignor: s.assignor, coordinator, members: summaries,
    generation: Math.max(-1, ...generations), rebalances: generations.size,
    commits: sum((m) => m.commits), commitFailures: sum((m) => m.commitFailures), recordsFetched, duplicateRecords: result.duplicateRecords, bytesFetched,
    formationMs: Math.max(0, formedAt - shared.startedAt), durationMs,
    recordsPerSecond: seconds > 0 ? recordsFetched / seconds : 0, MBps: seconds > 0 ? bytesFetched / 1e6 / seconds : 0,
  };
  const consume: ConsumeResult = { kind: 'verified', fetchRequests: sum((m) => m.fetchRequests), bytesConsumed: bytesFetched, durationMs, ...result };
  return { consume, group };
}
