// GroupCoordinator: Kafka's classic group protocol (GroupCoordinator.scala)
// for every group of the broker: JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
// the session and rebalance timers, and loading the stored state. Offset and
// administrative operations are in group-admin.ts over the same state.
//
// A rebalance: the group enters PreparingRebalance; every known member must
// send JoinGroup within the rebalance timeout (the largest member's); an
// Empty group first waits group.initial.rebalance.delay.ms, extended while
// new members keep joining, up to the rebalance timeout. When every member
// (and no MEMBER_ID_REQUIRED id) is in, or the timer runs out (dynamic
// members that did not rejoin are removed), the generation grows, a protocol
// every member supports is chosen, each member is answered (the leader with
// every member's metadata) and the group waits in CompletingRebalance for
// the leader's SyncGroup, whose assignment is stored and then handed to every
// member (Stable). A member whose session timeout passes without a heartbeat
// (while not waiting for a JoinGroup or SyncGroup answer) is removed.
//
// Time comes only from the injected GroupClock. Until load() completes every
// call answers COORDINATOR_LOAD_IN_PROGRESS.

import { randomUUID } from 'node:crypto';
import { assert, isSeglogError } from '@seglog/common';
import { ClassicGroup, offsetKey } from './classic-group.js';
import type { GroupClock } from './group-clock.js';
import { EMPTY_BYTES, GroupMember } from './group-member.js';
import type { GroupErrorName, JoinResult, MemberProtocol, SyncResult } from './group-member.js';
import type { GroupPersistence, GroupRecord, PendingTxnOffset, StoredGroup } from './group-persistence.js';
import { groupRecordOf, restoreGroup } from './group-snapshot.js';

export interface GroupCoordinatorOptions {
  /** group.min.session.timeout.ms (Kafka 6000). */
  readonly minSessionTimeoutMs: number;
  /** group.max.session.timeout.ms (Kafka 1800000). */
  readonly maxSessionTimeoutMs: number;
  /** group.initial.rebalance.delay.ms (Kafka 3000). */
  readonly initialRebalanceDelayMs: number;
  /** group.max.size (Kafka Int.MaxValue). */
  readonly maxGroupSize: number;
  /** offset.metadata.max.bytes (Kafka 4096). */
  readonly offsetMetadataMaxBytes: number;
  /** How long a member that joined without an id may take to complete its first join (Kafka 5 min). */
  readonly newMemberJoinTimeoutMs: number;
}

export const GROUP_DEFAULTS: GroupCoordinatorOptions = Object.freeze({
  minSessionTimeoutMs: 6000,
  maxSessionTimeoutMs: 1_800_000,
  initialRebalanceDelayMs: 3000,
  maxGroupSize: 2_147_483_647,
  offsetMetadataMaxBytes: 4096,
  newMemberJoinTimeoutMs: 300_000,
});

export interface JoinRequest {
  readonly groupId: string;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly protocolType: string;
  readonly protocols: readonly MemberProtocol[];
  /** JoinGroup v4+: a first join without a member id is answered MEMBER_ID_REQUIRED. */
  readonly requireKnownMemberId: boolean;
}

export interface SyncRequest {
  readonly groupId: string;
  readonly memberId: string;
  readonly generationId: number;
  readonly groupInstanceId: string | null;
  readonly protocolType: string | null;
  readonly protocolName: string | null;
  readonly assignments: readonly { readonly memberId: string; readonly assignment: Buffer }[];
}

export interface LeaveResult {
  readonly error: GroupErrorName;
  readonly members: readonly { readonly memberId: string; readonly groupInstanceId: string | null; readonly error: GroupErrorName }[];
}

export class GroupCoordinator {
  readonly options: GroupCoordinatorOptions;
  readonly clock: GroupClock;
  readonly persistence: GroupPersistence;
  readonly groups: Map<string, ClassicGroup>;
  /** Transactional offsets waiting for their transaction's marker, by producer id (txn-offsets.ts). */
  readonly pendingTxnOffsets: Map<number, Map<string, PendingTxnOffset>>;
  loading: boolean;

  constructor(persistence: GroupPersistence, clock: GroupClock, options: Partial<GroupCoordinatorOptions> = {}) {
    this.options = { ...GROUP_DEFAULTS, ...options };
    this.clock = clock;
    this.persistence = persistence;
    this.groups = new Map();
    this.pendingTxnOffsets = new Map();
    this.loading = true;
  }

  /** Applies stored records in log order (last write wins, null values delete), then starts answering. */
  load(records: Iterable<GroupRecord>): void {
    assert(this.loading, 'GroupCoordinator.load: already loaded');
    const stored = new Map<string, StoredGroup>();
    for (const record of records) {
      if (record.kind === 'group') {
        if (record.value === null) stored.delete(record.groupId);
        else stored.set(record.groupId, record.value);
        continue;
      }
      const group = this.groupOrCreate(record.groupId);
      if (record.value === null) group.offsets.delete(offsetKey(record.topic, record.partition));
      else group.offsets.set(offsetKey(record.topic, record.partition), record.value);
    }
    for (const [groupId, value] of stored) {
      const group = this.groupOrCreate(groupId);
      restoreGroup(group, value);
      // Kafka loads a group with members as Stable and lets their sessions run from now.
      for (const member of group.members.values()) this.scheduleSession(group, member);
    }
    this.loading = false;
  }

  groupOrCreate(groupId: string): ClassicGroup {
    let group = this.groups.get(groupId);
    if (group === undefined) {
      group = new ClassicGroup(groupId, this.clock.now());
      this.groups.set(groupId, group);
    }
    return group;
  }

  join(request: JoinRequest): Promise<JoinResult> {
    if (this.loading) return Promise.resolve(joinError(request.memberId, 'COORDINATOR_LOAD_IN_PROGRESS'));
    if (request.groupId.length === 0) return Promise.resolve(joinError(request.memberId, 'INVALID_GROUP_ID'));
    if (request.sessionTimeoutMs < this.options.minSessionTimeoutMs || request.sessionTimeoutMs > this.options.maxSessionTimeoutMs) {
      return Promise.resolve(joinError(request.memberId, 'INVALID_SESSION_TIMEOUT'));
    }
    const existing = this.groups.get(request.groupId);
    if (existing === undefined && request.memberId.length > 0) return Promise.resolve(joinError(request.memberId, 'UNKNOWN_MEMBER_ID'));
    const group = existing ?? this.groupOrCreate(request.groupId);
    return new Promise<JoinResult>((resolve) => {
      if (request.memberId.length === 0) this.newMemberJoin(group, request, resolve);
      else this.currentMemberJoin(group, request, resolve);
    });
  }

  private newMemberJoin(group: ClassicGroup, request: JoinRequest, resolve: (result: JoinResult) => void): void {
    if (group.state === 'Dead') return resolve(joinError('', 'COORDINATOR_NOT_AVAILABLE'));
    if (!group.supportsProtocols(request.protocolType, request.protocols)) return resolve(joinError('', 'INCONSISTENT_GROUP_PROTOCOL'));
    const memberId = `${request.clientId}-${randomUUID()}`;
    if (request.groupInstanceId !== null) {
      const knownId = group.staticMembers.get(request.groupInstanceId);
      const known = knownId === undefined ? undefined : group.members.get(knownId);
      if (known !== undefined) return this.staticMemberRejoin(group, known, memberId, request, resolve);
    } else if (request.requireKnownMemberId) {
      if (group.members.size + group.pendingMembers.size >= this.options.maxGroupSize) return resolve(joinError('', 'GROUP_MAX_SIZE_REACHED'));
      // KIP-394: the id is handed out first; the member joins with it (or its session timeout removes the id).
      group.pendingMembers.set(memberId, this.clock.schedule(request.sessionTimeoutMs, () => this.expirePending(group, memberId)));
      return resolve(joinError(memberId, 'MEMBER_ID_REQUIRED'));
    }
    if (group.members.size >= this.options.maxGroupSize) return resolve(joinError('', 'GROUP_MAX_SIZE_REACHED'));
    this.addMemberAndRebalance(group, memberId, request, resolve);
  }

  private currentMemberJoin(group: ClassicGroup, request: JoinRequest, resolve: (result: JoinResult) => void): void {
    const { memberId } = request;
    if (group.state === 'Dead') return resolve(joinError(memberId, 'COORDINATOR_NOT_AVAILABLE'));
    if (!group.supportsProtocols(request.protocolType, request.protocols)) return resolve(joinError(memberId, 'INCONSISTENT_GROUP_PROTOCOL'));
    const pending = group.pendingMembers.get(memberId);
    if (pending !== undefined) {
      pending.cancel();
      group.pendingMembers.delete(memberId);
      return this.addMemberAndRebalance(group, memberId, request, resolve);
    }
    if (group.isStaticMemberFenced(request.groupInstanceId, memberId)) return resolve(joinError(memberId, 'FENCED_INSTANCE_ID'));
    const member = group.members.get(memberId);
    if (member === undefined) return resolve(joinError(memberId, 'UNKNOWN_MEMBER_ID'));
    const matches = member.matches(request.protocols);
    switch (group.state) {
      case 'PreparingRebalance': return this.updateMemberAndRebalance(group, member, request, resolve);
      case 'CompletingRebalance':
        if (matches) return resolve(this.currentJoinResult(group, member));
        return this.updateMemberAndRebalance(group, member, request, resolve);
      case 'Stable':
        if (group.leaderId === memberId || !matches) return this.updateMemberAndRebalance(group, member, request, resolve);
        return resolve(this.currentJoinResult(group, member));
      default:
        assert(false, 'GroupCoordinator.currentMemberJoin: a member in an Empty or Dead group');
    }
  }

  /** A static member back without its member id: the old id is fenced, the new one takes its place (KIP-345). */
  private staticMemberRejoin(
    group: ClassicGroup, member: GroupMember, newMemberId: string, request: JoinRequest, resolve: (result: JoinResult) => void,
  ): void {
    const oldMemberId = member.memberId;
    const matches = member.matches(request.protocols);
    member.awaitingJoin?.(joinError(oldMemberId, 'FENCED_INSTANCE_ID'));
    member.awaitingJoin = null;
    member.awaitingSync?.(syncError('FENCED_INSTANCE_ID'));
    member.awaitingSync = null;
    group.replaceStaticMember(member, newMemberId);
    if (group.state === 'Stable' && matches && group.leaderId !== newMemberId) {
      // Nothing changes for the group but the member id: persist it, answer the current generation.
      this.scheduleSession(group, member);
      this.persistence.append(group.groupId, [groupRecordOf(group)]).then(
        () => resolve(this.currentJoinResult(group, member)),
        () => resolve(joinError(newMemberId, 'COORDINATOR_NOT_AVAILABLE')),
      );
      return;
    }
    this.updateMemberAndRebalance(group, member, request, resolve);
  }

  private addMemberAndRebalance(group: ClassicGroup, memberId: string, request: JoinRequest, resolve: (result: JoinResult) => void): void {
    const member = new GroupMember({
      memberId, groupInstanceId: request.groupInstanceId, clientId: request.clientId, clientHost: request.clientHost,
      rebalanceTimeoutMs: request.rebalanceTimeoutMs, sessionTimeoutMs: request.sessionTimeoutMs,
      protocolType: request.protocolType, protocols: request.protocols,
    });
    member.isNew = true;
    if (group.state === 'PreparingRebalance' && group.generationId === 0) group.newMemberAdded = true;
    group.add(member);
    member.awaitingJoin = resolve;
    // A new member cannot heartbeat before its first answer: it has the new-member join timeout instead.
    member.timer = this.clock.schedule(this.options.newMemberJoinTimeoutMs, () => this.expireMember(group, member));
    this.maybePrepareRebalance(group);
    this.tryCompleteJoin(group);
  }

  private updateMemberAndRebalance(group: ClassicGroup, member: GroupMember, request: JoinRequest, resolve: (result: JoinResult) => void): void {
    member.protocols = request.protocols;
    member.protocolType = request.protocolType;
    member.rebalanceTimeoutMs = request.rebalanceTimeoutMs;
    member.sessionTimeoutMs = request.sessionTimeoutMs;
    member.clientId = request.clientId;
    member.clientHost = request.clientHost;
    // A second JoinGroup while the first waits: the first is told to rejoin.
    member.awaitingJoin?.(joinError(member.memberId, 'REBALANCE_IN_PROGRESS'));
    member.awaitingJoin = resolve;
    this.maybePrepareRebalance(group);
    this.tryCompleteJoin(group);
  }

  private currentJoinResult(group: ClassicGroup, member: GroupMember): JoinResult {
    const isLeader = group.leaderId === member.memberId;
    return {
      error: 'NONE', generationId: group.generationId, protocolType: group.protocolType, protocolName: group.protocolName,
      leaderId: group.leaderId ?? '', memberId: member.memberId, members: isLeader ? this.memberList(group) : [],
    };
  }

  private memberList(group: ClassicGroup): JoinResult['members'] {
    const protocol = group.protocolName ?? '';
    return [...group.members.values()].map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: m.metadata(protocol) }));
  }

  maybePrepareRebalance(group: ClassicGroup): void {
    if (group.canRebalance()) this.prepareRebalance(group);
  }

  private prepareRebalance(group: ClassicGroup): void {
    if (group.state === 'CompletingRebalance') this.resetAndPropagateAssignmentError(group, 'REBALANCE_IN_PROGRESS');
    const rebalanceTimeoutMs = group.rebalanceTimeoutMs();
    const initial = group.state === 'Empty';
    group.transitionTo('PreparingRebalance', this.clock.now());
    group.joinTimer?.cancel();
    if (initial) {
      const delay = this.options.initialRebalanceDelayMs;
      group.initialDelayRemainingMs = Math.max(rebalanceTimeoutMs - delay, 0);
      group.newMemberAdded = false;
      group.joinTimer = this.clock.schedule(delay, () => this.onInitialDelay(group));
    } else {
      group.initialDelayRemainingMs = -1;
      group.joinTimer = this.clock.schedule(rebalanceTimeoutMs, () => this.completeJoin(group));
    }
  }

  /** Kafka's InitialDelayedJoin: waits again while new members keep arriving, within the rebalance timeout. */
  private onInitialDelay(group: ClassicGroup): void {
    group.joinTimer = null;
    if (group.newMemberAdded && group.initialDelayRemainingMs > 0) {
      const delay = Math.min(this.options.initialRebalanceDelayMs, group.initialDelayRemainingMs);
      group.initialDelayRemainingMs -= delay;
      group.newMemberAdded = false;
      group.joinTimer = this.clock.schedule(delay, () => this.onInitialDelay(group));
      return;
    }
    group.initialDelayRemainingMs = -1;
    this.completeJoin(group);
  }

  /** Completes the join phase early once everyone is in (not during the initial delay). */
  tryCompleteJoin(group: ClassicGroup): void {
    if (group.state !== 'PreparingRebalance' || group.initialDelayRemainingMs >= 0) return;
    if (group.hasAllMembersJoined()) this.completeJoin(group);
  }

  private completeJoin(group: ClassicGroup): void {
    group.joinTimer?.cancel();
    group.joinTimer = null;
    if (group.state !== 'PreparingRebalance') return;
    for (const member of [...group.members.values()]) {
      if (member.awaitingJoin === null && !member.isStatic()) group.remove(member.memberId);
    }
    const now = this.clock.now();
    group.generationId++;
    if (group.members.size === 0) {
      group.protocolName = null;
      group.transitionTo('Empty', now);
      // Kafka stores the empty group (its new generation); a failure only means the next load sees the previous one.
      this.persistence.append(group.groupId, [groupRecordOf(group)]).catch(() => undefined);
      return;
    }
    group.protocolName = group.selectProtocol();
    group.transitionTo('CompletingRebalance', now);
    for (const member of group.members.values()) {
      const answer = member.awaitingJoin;
      if (answer === null) continue;
      member.awaitingJoin = null;
      member.isNew = false;
      this.scheduleSession(group, member);
      answer(this.currentJoinResult(group, member));
    }
  }

  sync(request: SyncRequest): Promise<SyncResult> {
    if (this.loading) return Promise.resolve(syncError('COORDINATOR_LOAD_IN_PROGRESS'));
    const group = this.groups.get(request.groupId);
    if (group === undefined) return Promise.resolve(syncError('UNKNOWN_MEMBER_ID'));
    if (group.state === 'Dead') return Promise.resolve(syncError('COORDINATOR_NOT_AVAILABLE'));
    if (group.isStaticMemberFenced(request.groupInstanceId, request.memberId)) return Promise.resolve(syncError('FENCED_INSTANCE_ID'));
    const member = group.members.get(request.memberId);
    if (member === undefined) return Promise.resolve(syncError('UNKNOWN_MEMBER_ID'));
    if (request.generationId !== group.generationId) return Promise.resolve(syncError('ILLEGAL_GENERATION'));
    if ((request.protocolType !== null && request.protocolType !== group.protocolType)
      || (request.protocolName !== null && request.protocolName !== group.protocolName)) {
      return Promise.resolve(syncError('INCONSISTENT_GROUP_PROTOCOL'));
    }
    switch (group.state) {
      case 'Empty': return Promise.resolve(syncError('UNKNOWN_MEMBER_ID'));
      case 'PreparingRebalance': return Promise.resolve(syncError('REBALANCE_IN_PROGRESS'));
      case 'Stable':
        this.scheduleSession(group, member);
        return Promise.resolve(this.syncResult(group, member.assignment));
      default: break;
    }
    return new Promise<SyncResult>((resolve) => {
      member.awaitingSync?.(syncError('REBALANCE_IN_PROGRESS'));
      member.awaitingSync = resolve;
      this.scheduleSession(group, member);
      if (group.leaderId === member.memberId) this.storeAssignment(group, request.assignments);
    });
  }

  private storeAssignment(group: ClassicGroup, assignments: SyncRequest['assignments']): void {
    const generation = group.generationId;
    const byMember = new Map(assignments.map((a) => [a.memberId, a.assignment]));
    for (const member of group.members.values()) member.assignment = byMember.get(member.memberId) ?? EMPTY_BYTES;
    this.persistence.append(group.groupId, [groupRecordOf(group)]).then(() => {
      if (group.state !== 'CompletingRebalance' || group.generationId !== generation) return;
      group.transitionTo('Stable', this.clock.now());
      for (const member of group.members.values()) {
        const answer = member.awaitingSync;
        member.awaitingSync = null;
        answer?.(this.syncResult(group, member.assignment));
      }
    }, (error: unknown) => {
      if (group.state !== 'CompletingRebalance' || group.generationId !== generation) return;
      this.resetAndPropagateAssignmentError(group, storeErrorOf(error, 'UNKNOWN_SERVER_ERROR'));
      this.maybePrepareRebalance(group);
    });
  }

  private syncResult(group: ClassicGroup, assignment: Buffer): SyncResult {
    return { error: 'NONE', protocolType: group.protocolType, protocolName: group.protocolName, assignment };
  }

  private resetAndPropagateAssignmentError(group: ClassicGroup, error: GroupErrorName): void {
    for (const member of group.members.values()) {
      member.assignment = EMPTY_BYTES;
      const answer = member.awaitingSync;
      member.awaitingSync = null;
      answer?.(syncError(error));
    }
  }

  heartbeat(request: { groupId: string; memberId: string; generationId: number; groupInstanceId: string | null }): GroupErrorName {
    if (this.loading) return 'COORDINATOR_LOAD_IN_PROGRESS';
    const group = this.groups.get(request.groupId);
    if (group === undefined) return 'UNKNOWN_MEMBER_ID';
    if (group.state === 'Dead') return 'COORDINATOR_NOT_AVAILABLE';
    if (group.isStaticMemberFenced(request.groupInstanceId, request.memberId)) return 'FENCED_INSTANCE_ID';
    const member = group.members.get(request.memberId);
    if (member === undefined) return 'UNKNOWN_MEMBER_ID';
    if (request.generationId !== group.generationId) return 'ILLEGAL_GENERATION';
    this.scheduleSession(group, member);
    return group.state === 'PreparingRebalance' ? 'REBALANCE_IN_PROGRESS' : 'NONE';
  }

  leave(groupId: string, leaving: readonly { memberId: string; groupInstanceId: string | null }[]): LeaveResult {
    if (this.loading) return { error: 'COORDINATOR_LOAD_IN_PROGRESS', members: [] };
    const group = this.groups.get(groupId);
    if (group === undefined) return { error: 'NONE', members: leaving.map((m) => ({ ...m, error: 'UNKNOWN_MEMBER_ID' })) };
    if (group.state === 'Dead') return { error: 'COORDINATOR_NOT_AVAILABLE', members: [] };
    return { error: 'NONE', members: leaving.map((m) => ({ ...m, error: this.leaveOne(group, m.memberId, m.groupInstanceId) })) };
  }

  private leaveOne(group: ClassicGroup, memberId: string, groupInstanceId: string | null): GroupErrorName {
    if (memberId.length === 0) {
      const staticId = groupInstanceId === null ? undefined : group.staticMembers.get(groupInstanceId);
      const member = staticId === undefined ? undefined : group.members.get(staticId);
      if (member === undefined) return 'UNKNOWN_MEMBER_ID';
      this.removeMemberAndUpdateGroup(group, member);
      return 'NONE';
    }
    if (group.isStaticMemberFenced(groupInstanceId, memberId)) return 'FENCED_INSTANCE_ID';
    const pending = group.pendingMembers.get(memberId);
    if (pending !== undefined) {
      this.expirePending(group, memberId);
      return 'NONE';
    }
    const member = group.members.get(memberId);
    if (member === undefined) return 'UNKNOWN_MEMBER_ID';
    this.removeMemberAndUpdateGroup(group, member);
    return 'NONE';
  }

  private removeMemberAndUpdateGroup(group: ClassicGroup, member: GroupMember): void {
    member.awaitingJoin?.(joinError(member.memberId, 'UNKNOWN_MEMBER_ID'));
    member.awaitingJoin = null;
    member.awaitingSync?.(syncError('UNKNOWN_MEMBER_ID'));
    member.awaitingSync = null;
    group.remove(member.memberId);
    if (group.state === 'Stable' || group.state === 'CompletingRebalance') this.maybePrepareRebalance(group);
    else if (group.state === 'PreparingRebalance') this.tryCompleteJoin(group);
  }

  private expirePending(group: ClassicGroup, memberId: string): void {
    const timer = group.pendingMembers.get(memberId);
    if (timer === undefined) return;
    timer.cancel();
    group.pendingMembers.delete(memberId);
    this.tryCompleteJoin(group);
  }

  /** (Re)starts a member's session timer: a heartbeat, join answer or sync counts as liveness. */
  scheduleSession(group: ClassicGroup, member: GroupMember): void {
    member.timer?.cancel();
    member.timer = this.clock.schedule(member.sessionTimeoutMs, () => this.expireMember(group, member));
  }

  private expireMember(group: ClassicGroup, member: GroupMember): void {
    member.timer = null;
    if (group.members.get(member.memberId) !== member) return;
    // Kafka's shouldKeepAlive: a member waiting for its JoinGroup or SyncGroup answer is alive (the rebalance bounds it).
    if (!member.isNew && (member.awaitingJoin !== null || member.awaitingSync !== null)) {
      this.scheduleSession(group, member);
      return;
    }
    this.removeMemberAndUpdateGroup(group, member);
  }

  /** Cancels every timer (broker stop); waiting calls are answered COORDINATOR_NOT_AVAILABLE. */
  shutdown(): void {
    for (const group of this.groups.values()) {
      group.joinTimer?.cancel();
      group.joinTimer = null;
      for (const timer of group.pendingMembers.values()) timer.cancel();
      for (const member of group.members.values()) {
        member.timer?.cancel();
        member.timer = null;
        member.awaitingJoin?.(joinError(member.memberId, 'COORDINATOR_NOT_AVAILABLE'));
        member.awaitingJoin = null;
        member.awaitingSync?.(syncError('COORDINATOR_NOT_AVAILABLE'));
        member.awaitingSync = null;
      }
    }
    this.loading = true;
  }
}

export function joinError(memberId: string, error: GroupErrorName): JoinResult {
  return { error, generationId: -1, protocolType: null, protocolName: null, leaderId: '', memberId, members: [] };
}

export function syncError(error: GroupErrorName): SyncResult {
  return { error, protocolType: null, protocolName: null, assignment: EMPTY_BYTES };
}

/**
 * Kafka's mapping of a failed __consumer_offsets append: a record too large
 * becomes `tooLarge` (UNKNOWN_SERVER_ERROR for a group, INVALID_COMMIT_OFFSET_SIZE
 * for offsets), anything else COORDINATOR_NOT_AVAILABLE (the client retries).
 */
export function storeErrorOf(error: unknown, tooLarge: GroupErrorName): GroupErrorName {
  if (isSeglogError(error) && (error.kafka === 'MESSAGE_TOO_LARGE' || error.kafka === 'RECORD_LIST_TOO_LARGE')) return tooLarge;
  return 'COORDINATOR_NOT_AVAILABLE';
}
