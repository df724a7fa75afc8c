// One member of the load client's consumer group (classic protocol, eager
// rebalancing, as Kafka's consumer with the range or roundrobin assignor):
//   join     JoinGroup (v4+: the first answer is MEMBER_ID_REQUIRED with our
//            id, then the real join); the leader decodes every member's
//            subscription and assigns the run's partitions (group-assignor.ts)
//            in SyncGroup; every member decodes its assignment and reads its
//            partitions' committed offsets (OffsetFetch) as its positions;
//   fetch    its assigned partitions from its positions (Fetch, maxWait 0),
//            every whole batch to the checker (LoadChecker.checkGroupBatch);
//   heartbeat every heartbeatIntervalMs; REBALANCE_IN_PROGRESS: commit,
//            revoke every partition, rejoin (ILLEGAL_GENERATION and
//            UNKNOWN_MEMBER_ID: revoke and rejoin, no commit possible);
//   commit   its positions (OffsetCommit with its generation), every
//            autoCommitIntervalMs and at the end;
//   leave    LeaveGroup.
// The subscription and assignment bytes go through @seglog/protocol's
// consumer-protocol descriptions. Group requests use the coordinator
// connection (a JoinGroup may wait up to the rebalance timeout), fetches a
// connection of their own. One promise per request, none per record.

import { KAFKA_ERROR_CODES, decodeConsumerAssignment, decodeConsumerSubscription, encodeConsumerAssignment, encodeConsumerSubscription } from '@seglog/protocol';
import type { FetchPartition, JoinGroupResponse } from '@seglog/protocol';
import { assert } from '@seglog/common';
import { assignPartitions } from './group-assignor.js';
import type { GroupAssignor } from './group-assignor.js';
import type { GroupVersions } from './group-setup.js';
import type { KafkaConnection } from './kafka-connection.js';
import type { LoadChecker } from './load-checker.js';
import { forEachBatch, kafkaErrorName } from './load-consumer.js';
import { LoadErrorCode, loadError } from './load-error.js';

/** The consumer protocol versions written (Kafka's current ones); any version is read. */
const SUBSCRIPTION_VERSION = 3;
const ASSIGNMENT_VERSION = 3;
const JOIN_ATTEMPTS_MAX = 50;
const RETRY_BACKOFF_MS = 100;
const E = KAFKA_ERROR_CODES;

export interface GroupMemberSetup {
  readonly index: number;
  readonly group: string;
  readonly topic: string;
  readonly partitions: number;
  readonly assignor: GroupAssignor;
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly autoCommitIntervalMs: number;
  readonly coordinator: KafkaConnection;
  readonly fetch: KafkaConnection;
  readonly versions: GroupVersions;
  readonly fetchVersion: number;
  readonly partitionMaxBytes: number;
  readonly startOffsets: readonly number[];
  readonly endOffsets: readonly number[];
  readonly checker: LoadChecker;
  /** Partitions whose fetch failed (shared by the members): reported once, not fetched again. */
  readonly failed: Set<number>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class GroupMember {
  readonly setup: GroupMemberSetup;
  memberId: string;
  generationId: number;
  isLeader: boolean;
  /** Members of the last generation this member led (0 when it did not lead). */
  ledMembers: number;
  needsJoin: boolean;
  left: boolean;
  assigned: number[];
  /** The partitions of the last generation synced (kept after a revoke or leave, for the report). */
  lastAssigned: readonly number[];
  /** Per partition: the next offset to fetch, −1 when not assigned. */
  readonly positions: number[];
  /** Generation ids this member synced, in order. */
  readonly generations: number[];
  joinRequests: number;
  heartbeats: number;
  rebalancesSeen: number;
  commits: number;
  commitFailures: number;
  /** Partitions whose position came from a committed offset at an assignment. */
  resumedFromCommit: number;
  fetchRequests: number;
  recordsFetched: number;
  bytesFetched: number;
  nextHeartbeatAt: number;
  nextCommitAt: number;
  private readonly subscription: Buffer;

  constructor(setup: GroupMemberSetup) {
    assert(setup.startOffsets.length === setup.partitions && setup.endOffsets.length === setup.partitions, 'GroupMember: one offset per partition');
    assert(setup.heartbeatIntervalMs < setup.sessionTimeoutMs, 'GroupMember: heartbeat interval below session timeout');
    this.setup = setup;
    this.memberId = '';
    this.generationId = -1;
    this.isLeader = false;
    this.ledMembers = 0;
    this.needsJoin = true;
    this.left = false;
    this.assigned = [];
    this.lastAssigned = [];
    this.positions = new Array<number>(setup.partitions).fill(-1);
    this.generations = [];
    this.joinRequests = 0;
    this.heartbeats = 0;
    this.rebalancesSeen = 0;
    this.commits = 0;
    this.commitFailures = 0;
    this.resumedFromCommit = 0;
    this.fetchRequests = 0;
    this.recordsFetched = 0;
    this.bytesFetched = 0;
    this.nextHeartbeatAt = 0;
    this.nextCommitAt = 0;
    this.subscription = encodeConsumerSubscription(SUBSCRIPTION_VERSION, {
      topics: [setup.topic], userData: null, ownedPartitions: [], generationId: -1, rackId: null,
    });
  }

  /** Joins (or rejoins) until a generation is synced and its positions read; bounded attempts. */
  async join(): Promise<void> {
    const s = this.setup;
    for (let attempt = 1; attempt <= JOIN_ATTEMPTS_MAX; attempt++) {
      this.joinRequests++;
      const r = await s.coordinator.request('JOIN_GROUP', s.versions.joinGroup, {
        groupId: s.group, sessionTimeoutMs: s.sessionTimeoutMs, rebalanceTimeoutMs: s.rebalanceTimeoutMs, memberId: this.memberId,
        groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: s.assignor, metadata: this.subscription }],
        reason: this.generations.length === 0 ? null : 'seglog-load: rebalance',
      });
      if (r.errorCode === E.MEMBER_ID_REQUIRED) {
        this.memberId = r.memberId;
        continue;
      }
      if (!(await this.joinAnswered(r.errorCode, 'JoinGroup'))) continue;
      this.memberId = r.memberId;
      this.generationId = r.generationId;
      this.isLeader = r.leader === r.memberId;
      this.ledMembers = this.isLeader ? r.members.length : 0;
      const sync = await s.coordinator.request('SYNC_GROUP', s.versions.syncGroup, {
        groupId: s.group, generationId: r.generationId, memberId: r.memberId, groupInstanceId: null,
        protocolType: 'consumer', protocolName: r.protocolName, assignments: this.isLeader ? this.assign(r) : [],
      });
      if (!(await this.joinAnswered(sync.errorCode, 'SyncGroup'))) continue;
      this.assigned = this.ownPartitions(sync.assignment);
      this.lastAssigned = this.assigned;
      await this.readPositions();
      this.generations.push(this.generationId);
      this.needsJoin = false;
      const now = Date.now();
      this.nextHeartbeatAt = now + s.heartbeatIntervalMs;
      this.nextCommitAt = now + s.autoCommitIntervalMs;
      return;
    }
    throw loadError(LoadErrorCode.GROUP, `member ${s.index} did not join group ${s.group} in ${JOIN_ATTEMPTS_MAX} attempts`, { group: s.group });
  }

  /** True on success; false (after a backoff where Kafka's consumer backs off) to rejoin; throws on a non-retriable code. */
  private async joinAnswered(code: number, api: string): Promise<boolean> {
    if (code === 0) return true;
    if (code === E.UNKNOWN_MEMBER_ID) {
      this.memberId = '';
      return false;
    }
    if (code === E.REBALANCE_IN_PROGRESS || code === E.ILLEGAL_GENERATION) return false;
    if (code === E.COORDINATOR_LOAD_IN_PROGRESS || code === E.COORDINATOR_NOT_AVAILABLE || code === E.NOT_COORDINATOR) {
      await sleep(RETRY_BACKOFF_MS);
      return false;
    }
    throw loadError(LoadErrorCode.GROUP, `${api} for group ${this.setup.group} failed: ${kafkaErrorName(code)}`, { group: this.setup.group, errorCode: code });
  }

  /** The leader's SyncGroup assignments: the run's partitions over the members subscribed to the topic. */
  private assign(r: JoinGroupResponse): { memberId: string; assignment: Buffer }[] {
    const s = this.setup;
    if (r.protocolName !== s.assignor) {
      throw loadError(LoadErrorCode.GROUP, `group ${s.group} chose protocol ${String(r.protocolName)}, this member leads with ${s.assignor}`, { group: s.group });
    }
    const subscribed = r.members.filter((m) => decodeConsumerSubscription(m.metadata).value.topics.includes(s.topic)).map((m) => m.memberId);
    const plan = subscribed.length === 0 ? new Map<string, number[]>() : assignPartitions(s.assignor, subscribed, s.partitions);
    return r.members.map((m) => {
      const partitions = plan.get(m.memberId) ?? [];
      return {
        memberId: m.memberId,
        assignment: encodeConsumerAssignment(ASSIGNMENT_VERSION, { assignedPartitions: partitions.length === 0 ? [] : [{ topic: s.topic, partitions }], userData: null }),
      };
    });
  }

  private ownPartitions(bytes: Buffer): number[] {
    const s = this.setup;
    if (bytes.length === 0) return [];
    const out: number[] = [];
    for (const tp of decodeConsumerAssignment(bytes).value.assignedPartitions) {
      const ok = tp.topic === s.topic && tp.partitions.every((p) => Number.isInteger(p) && p >= 0 && p < s.partitions);
      if (!ok) throw loadError(LoadErrorCode.GROUP, `member ${s.index} was assigned ${tp.topic} ${tp.partitions.join(',')}, not partitions of ${s.topic} in 0..${s.partitions - 1}`);
      out.push(...tp.partitions);
    }
    return out.sort((a, b) => a - b);
  }

  /** OffsetFetch of the assigned partitions: a committed offset is the position; none (−1) or one below the run's start offset is the start offset. */
  private async readPositions(): Promise<void> {
    const s = this.setup;
    this.positions.fill(-1);
    if (this.assigned.length === 0) return;
    const topics = [{ name: s.topic, partitionIndexes: this.assigned }];
    const r = await s.coordinator.request('OFFSET_FETCH', s.versions.offsetFetch, {
      groupId: s.group, topics, groups: [{ groupId: s.group, topics }], requireStable: false,
    });
    const group = s.versions.offsetFetch >= 8 ? r.groups[0] : { errorCode: r.errorCode, topics: r.topics };
    const code = group?.errorCode ?? -1;
    if (code !== 0) throw loadError(LoadErrorCode.GROUP, `OffsetFetch for group ${s.group} failed: ${kafkaErrorName(code)}`, { group: s.group, errorCode: code });
    for (const part of group?.topics.find((t) => t.name === s.topic)?.partitions ?? []) {
      if (part.errorCode !== 0) throw loadError(LoadErrorCode.GROUP, `OffsetFetch ${s.topic}-${part.partitionIndex} failed: ${kafkaErrorName(part.errorCode)}`);
      const start = s.startOffsets[part.partitionIndex];
      if (start === undefined || !this.assigned.includes(part.partitionIndex)) continue;
      if (part.committedOffset >= start) this.resumedFromCommit++;
      this.positions[part.partitionIndex] = Math.max(start, part.committedOffset);
    }
    for (const p of this.assigned) {
      if (this.positions[p] === -1) throw loadError(LoadErrorCode.GROUP, `OffsetFetch answered no offset for ${s.topic}-${p}`);
    }
  }

  private revoke(): void {
    this.assigned = [];
    this.positions.fill(-1);
    this.needsJoin = true;
  }

  async heartbeat(): Promise<void> {
    const s = this.setup;
    const r = await s.coordinator.request('HEARTBEAT', s.versions.heartbeat, {
      groupId: s.group, generationId: this.generationId, memberId: this.memberId, groupInstanceId: null,
    });
    this.heartbeats++;
    this.nextHeartbeatAt = Date.now() + s.heartbeatIntervalMs;
    switch (r.errorCode) {
      case 0: return;
      case E.REBALANCE_IN_PROGRESS:
        this.rebalancesSeen++;
        await this.commit(); // eager protocol: commit what was consumed before giving the partitions up
        this.revoke();
        return;
      case E.UNKNOWN_MEMBER_ID:
        this.memberId = '';
        this.revoke();
        return;
      case E.ILLEGAL_GENERATION:
        this.revoke();
        return;
      case E.COORDINATOR_LOAD_IN_PROGRESS: case E.COORDINATOR_NOT_AVAILABLE: case E.NOT_COORDINATOR:
        return; // tried again at the next interval
      default:
        throw loadError(LoadErrorCode.GROUP, `Heartbeat for group ${s.group} failed: ${kafkaErrorName(r.errorCode)}`, { group: s.group, errorCode: r.errorCode });
    }
  }

  /** Commits the positions of every assigned partition with this generation; false (and a rejoin) when the coordinator fenced it. */
  async commit(): Promise<boolean> {
    const s = this.setup;
    this.nextCommitAt = Date.now() + s.autoCommitIntervalMs;
    if (this.assigned.length === 0 || this.generationId < 0) return true;
    const partitions = this.assigned.map((p) => ({
      partitionIndex: p, committedOffset: this.positions[p] as number, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: '',
    }));
    const r = await s.coordinator.request('OFFSET_COMMIT', s.versions.offsetCommit, {
      groupId: s.group, generationIdOrMemberEpoch: this.generationId, memberId: this.memberId, groupInstanceId: null, retentionTimeMs: -1,
      topics: [{ name: s.topic, partitions }],
    });
    const codes = r.topics.flatMap((t) => t.partitions.map((p) => p.errorCode));
    const bad = codes.find((c) => c !== 0);
    if (bad === undefined && codes.length === partitions.length) {
      this.commits++;
      return true;
    }
    this.commitFailures++;
    if (bad === E.UNKNOWN_MEMBER_ID) this.memberId = '';
    if (bad === E.REBALANCE_IN_PROGRESS || bad === E.ILLEGAL_GENERATION || bad === E.UNKNOWN_MEMBER_ID) {
      this.revoke();
      return false;
    }
    throw loadError(LoadErrorCode.GROUP, `OffsetCommit for group ${s.group} failed: ${kafkaErrorName(bad ?? -1)}`, { group: s.group, errorCode: bad });
  }

  /** Assigned partitions with records left to fetch. */
  fetchable(): FetchPartition[] {
    const s = this.setup;
    const out: FetchPartition[] = [];
    for (const p of this.assigned) {
      const position = this.positions[p] as number;
      if (position >= (s.endOffsets[p] as number) || s.failed.has(p)) continue;
      out.push({ partition: p, currentLeaderEpoch: -1, fetchOffset: position, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: s.partitionMaxBytes });
    }
    return out;
  }

  /** One Fetch of `partitions` (from fetchable()); every whole batch to the checker. Returns the records fetched. */
  async fetchOnce(partitions: readonly FetchPartition[]): Promise<number> {
    const s = this.setup;
    assert(partitions.length > 0, 'GroupMember.fetchOnce: nothing to fetch');
    this.fetchRequests++;
    const response = await s.fetch.request('FETCH', s.fetchVersion, {
      clusterId: null, replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 64 * 1024 * 1024, isolationLevel: 0,
      sessionId: 0, sessionEpoch: -1, topics: [{ topic: s.topic, partitions }], forgottenTopicsData: [], rackId: '',
    });
    if (response.errorCode !== 0) {
      s.checker.violation(`group member ${s.index}: fetch failed with ${kafkaErrorName(response.errorCode)} (${response.errorCode})`);
      for (const p of partitions) s.failed.add(p.partition);
      return 0;
    }
    let records = 0;
    for (const topic of response.responses) {
      for (const part of topic.partitions) {
        const p = part.partitionIndex;
        if (part.errorCode !== 0) {
          s.failed.add(p);
          s.checker.violation(`partition ${p}: group member ${s.index} fetch at offset ${this.positions[p]} failed with ${kafkaErrorName(part.errorCode)} (${part.errorCode})`);
          continue;
        }
        if (!Buffer.isBuffer(part.records) || this.positions[p] === -1) continue;
        this.bytesFetched += forEachBatch(part.records, (batch) => {
          s.checker.checkGroupBatch(p, batch);
          records += batch.readInt32BE(57);
          this.positions[p] = Math.max(this.positions[p] as number, Number(batch.readBigInt64BE(0)) + batch.readInt32BE(23) + 1);
        });
      }
    }
    this.recordsFetched += records;
    return records;
  }

  async leave(): Promise<void> {
    const s = this.setup;
    if (this.left || this.memberId === '') return;
    this.left = true;
    const r = await s.coordinator.request('LEAVE_GROUP', s.versions.leaveGroup, {
      groupId: s.group, memberId: this.memberId, members: [{ memberId: this.memberId, groupInstanceId: null, reason: 'seglog-load: done' }],
    });
    const code = r.errorCode !== 0 ? r.errorCode : (r.members[0]?.errorCode ?? 0);
    this.revoke();
    this.needsJoin = false;
    if (code !== 0 && code !== E.UNKNOWN_MEMBER_ID) {
      throw loadError(LoadErrorCode.GROUP, `LeaveGroup for group ${s.group} failed: ${kafkaErrorName(code)}`, { group: s.group, errorCode: code });
    }
  }
}
