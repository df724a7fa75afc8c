// A group's GroupMetadataValue: taken from a ClassicGroup (what the
// coordinator stores after a SyncGroup, an empty rebalance or a static
// member's new id) and put back into one at load. Each stored member keeps
// only the chosen protocol's metadata (its subscription) and its assignment,
// as in Kafka; a loaded group with members is Stable in its stored generation.

import type { ClassicGroup } from './classic-group.js';
import { EMPTY_BYTES, GroupMember } from './group-member.js';
import type { GroupRecord, StoredGroup } from './group-persistence.js';

export function groupRecordOf(group: ClassicGroup): GroupRecord {
  const protocol = group.protocolName;
  const value: StoredGroup = {
    protocolType: group.protocolType ?? '', generation: group.generationId, protocol, leader: group.leaderId,
    currentStateTimestamp: group.currentStateTimestamp,
    members: [...group.members.values()].map((m) => ({
      memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
      rebalanceTimeout: m.rebalanceTimeoutMs, sessionTimeout: m.sessionTimeoutMs,
      subscription: protocol === null ? EMPTY_BYTES : m.metadata(protocol), assignment: m.assignment,
    })),
  };
  return { kind: 'group', groupId: group.groupId, value };
}

/** Puts a stored value into a freshly created (Empty, memberless) group; the caller starts the members' sessions. */
export function restoreGroup(group: ClassicGroup, value: StoredGroup): void {
  group.generationId = value.generation;
  group.protocolType = value.protocolType.length > 0 ? value.protocolType : null;
  group.protocolName = value.protocol;
  group.currentStateTimestamp = value.currentStateTimestamp;
  for (const stored of value.members) {
    const member = new GroupMember({
      memberId: stored.memberId, groupInstanceId: stored.groupInstanceId, clientId: stored.clientId, clientHost: stored.clientHost,
      rebalanceTimeoutMs: stored.rebalanceTimeout, sessionTimeoutMs: stored.sessionTimeout, protocolType: value.protocolType,
      protocols: [{ name: value.protocol ?? '', metadata: stored.subscription }],
    });
    member.assignment = stored.assignment;
    group.add(member);
  }
  if (value.leader !== null && group.members.has(value.leader)) group.leaderId = value.leader;
  if (group.members.size > 0) group.state = 'Stable';
}
