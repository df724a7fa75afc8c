// The coordinator's offset and administrative operations (Kafka's
// GroupCoordinator handleCommitOffsets / handleFetchOffsets / handleListGroups
// / handleDescribeGroup / handleDeleteGroups / handleDeleteOffsets) over the
// GroupCoordinator's groups. Committed offsets become visible (OffsetFetch)
// only once their records are stored: an answered commit is a stored one.

import { ClassicGroup, offsetKey, splitOffsetKey, type CommittedOffset, type GroupState } from './classic-group.js';
import type { GroupCoordinator } from './group-coordinator.js';
import { storeErrorOf } from './group-coordinator.js';
import type { GroupErrorName } from './group-member.js';
import type { GroupRecord } from './group-persistence.js';

export interface OffsetCommitEntry {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly leaderEpoch: number;
  readonly metadata: string | null;
}

export interface CommitRequest {
  readonly groupId: string;
  readonly memberId: string;
  /** -1: a commit from outside group management (allowed only for an Empty or unknown group). */
  readonly generationId: number;
  readonly groupInstanceId: string | null;
  readonly offsets: readonly OffsetCommitEntry[];
}

/** One error per entry of the request, in its order. */
export async function commitOffsets(coordinator: GroupCoordinator, request: CommitRequest): Promise<GroupErrorName[]> {
  const all = (error: GroupErrorName): GroupErrorName[] => request.offsets.map(() => error);
  if (coordinator.loading) return all('COORDINATOR_LOAD_IN_PROGRESS');
  let group = coordinator.groups.get(request.groupId);
  if (group === undefined) {
    // Kafka: an unknown group takes commits from outside group management only (a stale generation otherwise).
    if (request.generationId >= 0) return all('ILLEGAL_GENERATION');
    group = coordinator.groupOrCreate(request.groupId);
  }
  const refusal = commitRefusal(coordinator, group, request);
  if (refusal !== null) return all(refusal);
  const errors: GroupErrorName[] = request.offsets.map((entry) => (
    entry.metadata !== null && Buffer.byteLength(entry.metadata) > coordinator.options.offsetMetadataMaxBytes ? 'OFFSET_METADATA_TOO_LARGE' : 'NONE'
  ));
  const now = coordinator.clock.now();
  const records: GroupRecord[] = [];
  const values: [string, CommittedOffset][] = [];
  request.offsets.forEach((entry, i) => {
    if (errors[i] !== 'NONE') return;
    const value: CommittedOffset = { offset: entry.offset, leaderEpoch: entry.leaderEpoch, metadata: entry.metadata ?? '', commitTimestamp: now };
    records.push({ kind: 'offset', groupId: request.groupId, topic: entry.topic, partition: entry.partition, value });
    values.push([offsetKey(entry.topic, entry.partition), value]);
  });
  if (records.length === 0) return errors;
  try {
    await coordinator.persistence.append(request.groupId, records);
  } catch (error) {
    const failed = storeErrorOf(error, 'INVALID_COMMIT_OFFSET_SIZE');
    return errors.map((e) => (e === 'NONE' ? failed : e));
  }
  // The group may have been deleted meanwhile (DeleteGroups waits for nothing): then the offsets live in a new one.
  const target = coordinator.groups.get(request.groupId) ?? coordinator.groupOrCreate(request.groupId);
  for (const [key, value] of values) target.offsets.set(key, value);
  return errors;
}

export function commitRefusal(coordinator: GroupCoordinator, group: ClassicGroup, request: CommitRequest): GroupErrorName | null {
  if (group.state === 'Dead') return 'COORDINATOR_NOT_AVAILABLE';
  if (request.generationId < 0 && group.state === 'Empty') return null;
  if (group.isStaticMemberFenced(request.groupInstanceId, request.memberId)) return 'FENCED_INSTANCE_ID';
  const member = group.members.get(request.memberId);
  if (member === undefined) return 'UNKNOWN_MEMBER_ID';
  if (request.generationId !== group.generationId) return 'ILLEGAL_GENERATION';
  // Kafka still takes commits while PreparingRebalance (the heartbeat tells the member to rejoin).
  if (group.state === 'CompletingRebalance') return 'REBALANCE_IN_PROGRESS';
  coordinator.scheduleSession(group, member);
  return null;
}

export interface FetchedOffset {
  readonly topic: string;
  readonly partition: number;
  /** -1 when nothing is committed. */
  readonly offset: number;
  readonly leaderEpoch: number;
  readonly metadata: string;
}

/** The committed offsets of `partitions` (null: every committed one), or a group-level error. */
export function fetchOffsets(
  coordinator: GroupCoordinator, groupId: string, partitions: readonly { topic: string; partition: number }[] | null,
): { error: GroupErrorName; offsets: FetchedOffset[] } {
  if (coordinator.loading) return { error: 'COORDINATOR_LOAD_IN_PROGRESS', offsets: [] };
  const group = coordinator.groups.get(groupId);
  const offsets = group?.offsets ?? new Map<string, CommittedOffset>();
  const wanted = partitions ?? [...offsets.keys()].map(splitOffsetKey);
  return {
    error: 'NONE',
    offsets: wanted.map(({ topic, partition }) => {
      const committed = offsets.get(offsetKey(topic, partition));
      return committed === undefined
        ? { topic, partition, offset: -1, leaderEpoch: -1, metadata: '' }
        : { topic, partition, offset: committed.offset, leaderEpoch: committed.leaderEpoch, metadata: committed.metadata };
    }),
  };
}

export function listGroups(coordinator: GroupCoordinator, states: readonly string[]): {
  error: GroupErrorName; groups: { groupId: string; protocolType: string; state: GroupState }[];
} {
  if (coordinator.loading) return { error: 'COORDINATOR_LOAD_IN_PROGRESS', groups: [] };
  const filter = new Set(states.map((s) => s.toLowerCase()));
  const groups = [...coordinator.groups.values()]
    .filter((g) => g.state !== 'Dead' && (filter.size === 0 || filter.has(g.state.toLowerCase())))
    .map((g) => ({ groupId: g.groupId, protocolType: g.protocolType ?? '', state: g.state }));
  return { error: 'NONE', groups };
}

export interface GroupSummary {
  readonly error: GroupErrorName;
  readonly groupId: string;
  readonly state: GroupState;
  readonly protocolType: string;
  /** The chosen protocol when Stable, else '' (Kafka's summary). */
  readonly protocolData: string;
  readonly members: readonly {
    readonly memberId: string; readonly groupInstanceId: string | null; readonly clientId: string; readonly clientHost: string;
    readonly metadata: Buffer; readonly assignment: Buffer;
  }[];
}

/** Kafka's GroupMetadata.summary; an unknown group reads as Dead with no error (DescribeGroups before v6). */
export function describeGroup(coordinator: GroupCoordinator, groupId: string): GroupSummary {
  const empty = Buffer.alloc(0);
  if (coordinator.loading) return { error: 'COORDINATOR_LOAD_IN_PROGRESS', groupId, state: 'Dead', protocolType: '', protocolData: '', members: [] };
  const group = coordinator.groups.get(groupId);
  if (group === undefined) return { error: 'NONE', groupId, state: 'Dead', protocolType: '', protocolData: '', members: [] };
  const stable = group.state === 'Stable' && group.protocolName !== null;
  const protocol = group.protocolName ?? '';
  return {
    error: 'NONE', groupId, state: group.state, protocolType: group.protocolType ?? '', protocolData: stable ? protocol : '',
    members: [...group.members.values()].map((m) => ({
      memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
      metadata: stable ? m.metadata(protocol) : empty, assignment: stable ? m.assignment : empty,
    })),
  };
}

/** Deletes an Empty group and its offsets (tombstones for the group record and every offset). */
export async function deleteGroup(coordinator: GroupCoordinator, groupId: string): Promise<GroupErrorName> {
  if (coordinator.loading) return 'COORDINATOR_LOAD_IN_PROGRESS';
  const group = coordinator.groups.get(groupId);
  if (group === undefined || group.state === 'Dead') return 'GROUP_ID_NOT_FOUND';
  if (group.state !== 'Empty') return 'NON_EMPTY_GROUP';
  const records: GroupRecord[] = [{ kind: 'group', groupId, value: null }];
  for (const key of group.offsets.keys()) records.push({ kind: 'offset', groupId, ...splitOffsetKey(key), value: null });
  try {
    await coordinator.persistence.append(groupId, records);
  } catch (error) {
    return storeErrorOf(error, 'UNKNOWN_SERVER_ERROR');
  }
  if (coordinator.groups.get(groupId) !== group || group.state !== 'Empty') return 'NON_EMPTY_GROUP';
  group.transitionTo('Dead', coordinator.clock.now());
  coordinator.groups.delete(groupId);
  return 'NONE';
}

/**
 * OffsetDelete: removes committed offsets of partitions the group does not
 * consume. An active consumer group's subscribed topics answer
 * GROUP_SUBSCRIBED_TO_TOPIC; an active group of another protocol type
 * NON_EMPTY_GROUP (group-level).
 */
export async function deleteOffsets(
  coordinator: GroupCoordinator, groupId: string, partitions: readonly { topic: string; partition: number }[],
  readTopics: (metadata: Buffer) => readonly string[] | null,
): Promise<{ error: GroupErrorName; errors: GroupErrorName[] }> {
  if (coordinator.loading) return { error: 'COORDINATOR_LOAD_IN_PROGRESS', errors: [] };
  const group = coordinator.groups.get(groupId);
  if (group === undefined || group.state === 'Dead') return { error: 'GROUP_ID_NOT_FOUND', errors: [] };
  let subscribed: Set<string> | null = new Set();
  if (group.state !== 'Empty') {
    if (group.protocolType !== 'consumer') return { error: 'NON_EMPTY_GROUP', errors: [] };
    subscribed = group.subscribedTopics(readTopics);
  }
  // Unreadable subscriptions protect every topic (Kafka: unknown subscription = subscribed).
  const errors: GroupErrorName[] = partitions.map((p) => (subscribed === null || subscribed.has(p.topic) ? 'GROUP_SUBSCRIBED_TO_TOPIC' : 'NONE'));
  const records: GroupRecord[] = [];
  partitions.forEach((p, i) => {
    if (errors[i] === 'NONE' && group.offsets.has(offsetKey(p.topic, p.partition))) records.push({ kind: 'offset', groupId, ...p, value: null });
  });
  if (records.length > 0) {
    try {
      await coordinator.persistence.append(groupId, records);
    } catch (error) {
      return { error: storeErrorOf(error, 'UNKNOWN_SERVER_ERROR'), errors: [] };
    }
    for (const record of records) if (record.kind === 'offset') group.offsets.delete(offsetKey(record.topic, record.partition));
  }
  return { error: 'NONE', errors };
}
