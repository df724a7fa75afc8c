// GroupMember: one member of a classic group (Kafka's MemberMetadata). The
// coordinator mutates it in place; a member is awaiting a JoinGroup answer
// (awaitingJoin set), a SyncGroup answer (awaitingSync set), or neither.

import type { GroupTimer } from './group-clock.js';

export interface MemberProtocol {
  readonly name: string;
  readonly metadata: Buffer;
}

export type GroupErrorName =
  | 'NONE' | 'COORDINATOR_LOAD_IN_PROGRESS' | 'COORDINATOR_NOT_AVAILABLE' | 'INVALID_GROUP_ID' | 'INVALID_SESSION_TIMEOUT'
  | 'UNKNOWN_MEMBER_ID' | 'ILLEGAL_GENERATION' | 'REBALANCE_IN_PROGRESS' | 'INCONSISTENT_GROUP_PROTOCOL'
  | 'MEMBER_ID_REQUIRED' | 'FENCED_INSTANCE_ID' | 'GROUP_MAX_SIZE_REACHED' | 'GROUP_ID_NOT_FOUND' | 'NON_EMPTY_GROUP'
  | 'OFFSET_METADATA_TOO_LARGE' | 'GROUP_SUBSCRIBED_TO_TOPIC' | 'UNKNOWN_TOPIC_OR_PARTITION' | 'UNKNOWN_SERVER_ERROR'
  | 'INVALID_REQUEST' | 'KAFKA_STORAGE_ERROR' | 'INVALID_COMMIT_OFFSET_SIZE' | 'PRODUCER_FENCED';

export interface JoinResult {
  readonly error: GroupErrorName;
  readonly generationId: number;
  readonly protocolType: string | null;
  readonly protocolName: string | null;
  readonly leaderId: string;
  readonly memberId: string;
  /** The leader's list (every member's metadata for the chosen protocol); empty for followers. */
  readonly members: readonly { readonly memberId: string; readonly groupInstanceId: string | null; readonly metadata: Buffer }[];
}

export interface SyncResult {
  readonly error: GroupErrorName;
  readonly protocolType: string | null;
  readonly protocolName: string | null;
  readonly assignment: Buffer;
}

export const EMPTY_BYTES = Buffer.alloc(0);

export class GroupMember {
  memberId: string;
  readonly groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  sessionTimeoutMs: number;
  protocolType: string;
  protocols: readonly MemberProtocol[];
  assignment: Buffer;
  awaitingJoin: ((result: JoinResult) => void) | null;
  awaitingSync: ((result: SyncResult) => void) | null;
  /** Joined in the current rebalance without a member id it had before (Kafka's isNew). */
  isNew: boolean;
  /** The session (or new-member join) expiry timer. */
  timer: GroupTimer | null;

  constructor(init: {
    memberId: string; groupInstanceId: string | null; clientId: string; clientHost: string; rebalanceTimeoutMs: number;
    sessionTimeoutMs: number; protocolType: string; protocols: readonly MemberProtocol[];
  }) {
    this.memberId = init.memberId;
    this.groupInstanceId = init.groupInstanceId;
    this.clientId = init.clientId;
    this.clientHost = init.clientHost;
    this.rebalanceTimeoutMs = init.rebalanceTimeoutMs;
    this.sessionTimeoutMs = init.sessionTimeoutMs;
    this.protocolType = init.protocolType;
    this.protocols = init.protocols;
    this.assignment = EMPTY_BYTES;
    this.awaitingJoin = null;
    this.awaitingSync = null;
    this.isNew = false;
    this.timer = null;
  }

  /** The member's metadata for `protocol` (it supports it: the group only selects such). */
  metadata(protocol: string): Buffer {
    return this.protocols.find((p) => p.name === protocol)?.metadata ?? EMPTY_BYTES;
  }

  /** Same protocols, in the same order, with the same metadata (Kafka's MemberMetadata.matches). */
  matches(protocols: readonly MemberProtocol[]): boolean {
    if (protocols.length !== this.protocols.length) return false;
    return protocols.every((p, i) => p.name === this.protocols[i]?.name && p.metadata.equals(this.protocols[i].metadata));
  }

  isStatic(): boolean {
    return this.groupInstanceId !== null;
  }
}
