// ClassicGroup: the state of one consumer group under the classic protocol
// (Kafka's GroupMetadata): its state machine, members, generation, chosen
// protocol and committed offsets. Pure state: the GroupCoordinator drives
// the transitions and the timers.
//
// States and the transitions Kafka allows (GroupMetadata.validPreviousStates):
//   Empty               ← PreparingRebalance (nobody rejoined)
//   PreparingRebalance  ← Empty, Stable, CompletingRebalance
//   CompletingRebalance ← PreparingRebalance
//   Stable              ← CompletingRebalance
//   Dead                ← any (deleted)
// Invariants: leaderId is a member's id or null (null iff no members); a
// static member's instance id maps to exactly its current member id; the
// generation only grows.

import { assert } from '@seglog/common';
import type { GroupMember, MemberProtocol } from './group-member.js';

export type GroupState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead';

const VALID_PREVIOUS: Readonly<Record<GroupState, readonly GroupState[]>> = {
  Empty: ['PreparingRebalance'],
  PreparingRebalance: ['Empty', 'Stable', 'CompletingRebalance'],
  CompletingRebalance: ['PreparingRebalance'],
  Stable: ['CompletingRebalance'],
  Dead: ['Empty', 'PreparingRebalance', 'CompletingRebalance', 'Stable', 'Dead'],
};

export interface CommittedOffset {
  readonly offset: number;
  readonly leaderEpoch: number;
  readonly metadata: string;
  readonly commitTimestamp: number;
}

export class ClassicGroup {
  readonly groupId: string;
  state: GroupState;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leaderId: string | null;
  currentStateTimestamp: number;
  readonly members: Map<string, GroupMember>;
  /** Member ids handed out with MEMBER_ID_REQUIRED, not yet joined with them (timer per id). */
  readonly pendingMembers: Map<string, { cancel(): void }>;
  /** group.instance.id → member id. */
  readonly staticMembers: Map<string, string>;
  /** `${topic}\u0000${partition}` → committed offset. */
  readonly offsets: Map<string, CommittedOffset>;
  /** Set while a rebalance's join phase waits (its timer). */
  joinTimer: { cancel(): void } | null;
  /** The initial delay may still be extended (group was Empty when the rebalance began). */
  initialDelayRemainingMs: number;
  newMemberAdded: boolean;

  constructor(groupId: string, now: number) {
    this.groupId = groupId;
    this.state = 'Empty';
    this.generationId = 0;
    this.protocolType = null;
    this.protocolName = null;
    this.leaderId = null;
    this.currentStateTimestamp = now;
    this.members = new Map();
    this.pendingMembers = new Map();
    this.staticMembers = new Map();
    this.offsets = new Map();
    this.joinTimer = null;
    this.initialDelayRemainingMs = 0;
    this.newMemberAdded = false;
  }

  transitionTo(state: GroupState, now: number): void {
    assert(VALID_PREVIOUS[state].includes(this.state), 'ClassicGroup.transitionTo: transition Kafka does not allow');
    this.state = state;
    this.currentStateTimestamp = now;
  }

  add(member: GroupMember): void {
    assert(!this.members.has(member.memberId), 'ClassicGroup.add: member id already in the group');
    if (this.members.size === 0) this.protocolType = member.protocolType;
    this.members.set(member.memberId, member);
    if (member.groupInstanceId !== null) this.staticMembers.set(member.groupInstanceId, member.memberId);
    this.leaderId ??= member.memberId;
  }

  remove(memberId: string): void {
    const member = this.members.get(memberId);
    assert(member !== undefined, 'ClassicGroup.remove: not a member');
    member.timer?.cancel();
    member.timer = null;
    this.members.delete(memberId);
    if (member.groupInstanceId !== null && this.staticMembers.get(member.groupInstanceId) === memberId) {
      this.staticMembers.delete(member.groupInstanceId);
    }
    if (this.leaderId === memberId) this.leaderId = this.members.keys().next().value ?? null;
  }

  /** A static member rejoining without its member id gets a new one (the old one is fenced). */
  replaceStaticMember(member: GroupMember, newMemberId: string): void {
    assert(member.groupInstanceId !== null, 'ClassicGroup.replaceStaticMember: not a static member');
    this.members.delete(member.memberId);
    if (this.leaderId === member.memberId) this.leaderId = newMemberId;
    member.memberId = newMemberId;
    this.members.set(newMemberId, member);
    this.staticMembers.set(member.groupInstanceId, newMemberId);
  }

  /** True when the instance id belongs to a static member whose member id is another (Kafka's isStaticMemberFenced). */
  isStaticMemberFenced(groupInstanceId: string | null, memberId: string): boolean {
    if (groupInstanceId === null) return false;
    const current = this.staticMembers.get(groupInstanceId);
    return current !== undefined && current !== memberId;
  }

  canRebalance(): boolean {
    return this.state === 'Stable' || this.state === 'CompletingRebalance' || this.state === 'Empty';
  }

  /** Every known member has sent its JoinGroup and no MEMBER_ID_REQUIRED answer is outstanding. */
  hasAllMembersJoined(): boolean {
    for (const member of this.members.values()) if (member.awaitingJoin === null) return false;
    return this.pendingMembers.size === 0;
  }

  rebalanceTimeoutMs(): number {
    let max = 0;
    for (const member of this.members.values()) max = Math.max(max, member.rebalanceTimeoutMs);
    return max;
  }

  /**
   * Kafka's supportsProtocols: an empty group takes any non-empty protocol
   * type and list; otherwise the type must match and one of the protocols
   * must be supported by every member.
   */
  supportsProtocols(protocolType: string, protocols: readonly MemberProtocol[]): boolean {
    if (this.members.size === 0 && this.state === 'Empty') return protocolType.length > 0 && protocols.length > 0;
    if (this.members.size === 0) return protocolType.length > 0 && protocols.length > 0 && (this.protocolType === null || this.protocolType === protocolType);
    if (this.protocolType !== protocolType) return false;
    return protocols.some((p) => this.candidateProtocols().has(p.name));
  }

  /** The protocols every member supports. */
  candidateProtocols(): Set<string> {
    let candidates: Set<string> | null = null;
    for (const member of this.members.values()) {
      const names = new Set<string>(member.protocols.map((p) => p.name));
      const previous: Set<string> | null = candidates;
      candidates = previous === null ? names : new Set<string>([...previous].filter((name: string) => names.has(name)));
    }
    return candidates ?? new Set<string>();
  }

  /**
   * Kafka's selectProtocol: among the protocols every member supports, the
   * one with the most votes, each member voting for the first candidate in
   * its own preference order. Kafka breaks ties by its map's iteration order;
   * here the smaller name wins, so the choice is deterministic.
   */
  selectProtocol(): string {
    const candidates = this.candidateProtocols();
    assert(candidates.size > 0, 'ClassicGroup.selectProtocol: no protocol every member supports');
    const votes = new Map<string, number>();
    for (const member of this.members.values()) {
      const vote = member.protocols.find((p) => candidates.has(p.name));
      assert(vote !== undefined, 'ClassicGroup.selectProtocol: a member without a candidate');
      votes.set(vote.name, (votes.get(vote.name) ?? 0) + 1);
    }
    let best: string | null = null;
    let bestVotes = -1;
    for (const [name, count] of [...votes].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
      if (count > bestVotes) {
        best = name;
        bestVotes = count;
      }
    }
    assert(best !== null, 'ClassicGroup.selectProtocol: no vote');
    return best;
  }

  /** The topics the members subscribe to (consumer protocol), or null when some subscription cannot be read. */
  subscribedTopics(readTopics: (metadata: Buffer) => readonly string[] | null): Set<string> | null {
    if (this.protocolName === null) return null;
    const topics = new Set<string>();
    for (const member of this.members.values()) {
      const read = readTopics(member.metadata(this.protocolName));
      if (read === null) return null;
      for (const topic of read) topics.add(topic);
    }
    return topics;
  }
}

export function offsetKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

export function splitOffsetKey(key: string): { topic: string; partition: number } {
  const at = key.lastIndexOf('\u0000');
  return { topic: key.slice(0, at), partition: Number(key.slice(at + 1)) };
}
