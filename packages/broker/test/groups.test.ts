// The group APIs over the wire against a real Broker (loopback, raw
// protocol): the happy path of two members, and each API's error paths:
// unknown member, stale generation, rebalance in progress, unknown group,
// inconsistent protocol, oversized metadata, a non-empty group, and the
// batched forms (FindCoordinator v4, OffsetFetch v8). One RawClient per
// member: a JoinGroup answer waits for the rebalance, and a connection
// answers in order.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JoinGroupRequest } from '@seglog/protocol';
import { Broker, KAFKA_ERROR_CODES as E } from '../src/index.js';
import { RawClient } from './raw-client.js';

const SESSION_MS = 30_000;

function joinBody(groupId: string, memberId: string, metadata = Buffer.from('m'), protocol = 'range'): JoinGroupRequest {
  return {
    groupId, sessionTimeoutMs: SESSION_MS, rebalanceTimeoutMs: SESSION_MS, memberId, groupInstanceId: null, protocolType: 'consumer',
    protocols: [{ name: protocol, metadata }], reason: null,
  };
}

/** A first join (v5: MEMBER_ID_REQUIRED, then again with the id). */
async function joinNew(client: RawClient, groupId: string, protocol = 'range'): Promise<{ memberId: string; generationId: number; leader: string; members: number; errorCode: number }> {
  const first = await client.request('JOIN_GROUP', 5, joinBody(groupId, '', Buffer.from('m'), protocol));
  expect(first.body.errorCode).toBe(E.MEMBER_ID_REQUIRED);
  const second = await client.request('JOIN_GROUP', 5, joinBody(groupId, first.body.memberId, Buffer.from('m'), protocol));
  return { ...second.body, members: second.body.members.length };
}

async function sync(client: RawClient, groupId: string, memberId: string, generationId: number, assignments: { memberId: string; assignment: Buffer }[] = []): Promise<{ errorCode: number; assignment: Buffer }> {
  const answer = await client.request('SYNC_GROUP', 3, { groupId, generationId, memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments });
  return answer.body;
}

function commitBody(groupId: string, memberId: string, generation: number, offset: number, metadata: string | null = null, topic = 'gt') {
  return {
    groupId, generationIdOrMemberEpoch: generation, memberId, groupInstanceId: null, retentionTimeMs: -1,
    topics: [{ name: topic, partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: metadata }] }],
  };
}

describe('group APIs over the wire', () => {
  let dir: string;
  let broker: Broker;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-groups-'));
    broker = await Broker.start({ dataDir: dir, port: 0, offsetsTopicPartitions: 3, groupInitialRebalanceDelayMs: 0, log: () => undefined });
    await broker.groupsReady();
    const c = await RawClient.connect(broker.port);
    await c.request('CREATE_TOPICS', 4, { topics: [{ name: 'gt', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false });
    c.close();
  });

  afterAll(async () => {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('FindCoordinator names node 0: one key (v2) and batched keys (v4), for groups and transactional ids; other key types are refused', async () => {
    const c = await RawClient.connect(broker.port);
    const one = await c.request('FIND_COORDINATOR', 2, { key: 'g', keyType: 0, coordinatorKeys: [] });
    expect(one.body).toMatchObject({ errorCode: 0, nodeId: 0, host: '127.0.0.1', port: broker.port });
    const many = await c.request('FIND_COORDINATOR', 4, { key: '', keyType: 0, coordinatorKeys: ['a', 'b'] });
    expect(many.body.coordinators.map((k) => [k.key, k.nodeId, k.port, k.errorCode])).toEqual([['a', 0, broker.port, 0], ['b', 0, broker.port, 0]]);
    const txn = await c.request('FIND_COORDINATOR', 2, { key: 't', keyType: 1, coordinatorKeys: [] });
    expect(txn.body).toMatchObject({ errorCode: 0, nodeId: 0, port: broker.port });
    const other = await c.request('FIND_COORDINATOR', 4, { key: '', keyType: 2, coordinatorKeys: ['x'] });
    expect(other.body.coordinators.map((k) => [k.key, k.nodeId, k.errorCode])).toEqual([['x', -1, E.INVALID_REQUEST]]);
    c.close();
  });

  it('two members: join, sync, commit, fetch; a stale generation, unknown members and a rebalance are refused', async () => {
    const a = await RawClient.connect(broker.port);
    const b = await RawClient.connect(broker.port);
    const first = await joinNew(a, 'g1');
    expect(first).toMatchObject({ errorCode: 0, generationId: 1, leader: first.memberId, members: 1 });
    expect((await sync(a, 'g1', first.memberId, 1, [{ memberId: first.memberId, assignment: Buffer.from('all') }])).assignment.toString()).toBe('all');
    expect((await a.request('OFFSET_COMMIT', 7, commitBody('g1', first.memberId, 1, 5))).body.topics[0]?.partitions[0]?.errorCode).toBe(0);

    // b joins: the group rebalances; a's heartbeat says so, a's old generation can still commit (PreparingRebalance).
    const bFirst = await b.request('JOIN_GROUP', 5, joinBody('g1', ''));
    const bJoin = b.request('JOIN_GROUP', 5, joinBody('g1', bFirst.body.memberId));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await a.request('HEARTBEAT', 3, { groupId: 'g1', generationId: 1, memberId: first.memberId, groupInstanceId: null })).body.errorCode).toBe(E.REBALANCE_IN_PROGRESS);
    const aJoin = await a.request('JOIN_GROUP', 5, joinBody('g1', first.memberId));
    const bJoined = await bJoin;
    expect(aJoin.body.generationId).toBe(2);
    expect(bJoined.body.generationId).toBe(2);
    expect(aJoin.body.members.length).toBe(2);
    // Generation 2 is CompletingRebalance until the leader syncs: commits are refused, stale heartbeats fenced.
    expect((await a.request('OFFSET_COMMIT', 7, commitBody('g1', first.memberId, 2, 6))).body.topics[0]?.partitions[0]?.errorCode).toBe(E.REBALANCE_IN_PROGRESS);
    expect((await a.request('HEARTBEAT', 3, { groupId: 'g1', generationId: 1, memberId: first.memberId, groupInstanceId: null })).body.errorCode).toBe(E.ILLEGAL_GENERATION);
    const bSync = sync(b, 'g1', bFirst.body.memberId, 2);
    await sync(a, 'g1', first.memberId, 2, [{ memberId: first.memberId, assignment: Buffer.from('p0') }, { memberId: bFirst.body.memberId, assignment: Buffer.from('p1') }]);
    expect((await bSync).assignment.toString()).toBe('p1');
    expect((await a.request('OFFSET_COMMIT', 7, commitBody('g1', first.memberId, 1, 7))).body.topics[0]?.partitions[0]?.errorCode).toBe(E.ILLEGAL_GENERATION);
    expect((await a.request('OFFSET_COMMIT', 7, commitBody('g1', 'nobody', 2, 7))).body.topics[0]?.partitions[0]?.errorCode).toBe(E.UNKNOWN_MEMBER_ID);
    expect((await a.request('HEARTBEAT', 3, { groupId: 'g1', generationId: 2, memberId: 'nobody', groupInstanceId: null })).body.errorCode).toBe(E.UNKNOWN_MEMBER_ID);
    expect((await a.request('SYNC_GROUP', 3, { groupId: 'g1', generationId: 1, memberId: first.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] })).body.errorCode).toBe(E.ILLEGAL_GENERATION);
    expect((await a.request('OFFSET_COMMIT', 7, commitBody('g1', first.memberId, 2, 8))).body.topics[0]?.partitions[0]?.errorCode).toBe(0);

    // A non-empty group is not deleted; the committed offset reads back (v5 and the multi-group v8).
    expect((await a.request('DELETE_GROUPS', 1, { groupsNames: ['g1'] })).body.results[0]?.errorCode).toBe(E.NON_EMPTY_GROUP);
    const fetched = await a.request('OFFSET_FETCH', 5, { groupId: 'g1', topics: [{ name: 'gt', partitionIndexes: [0, 1] }], groups: [], requireStable: false });
    expect(fetched.body.topics[0]?.partitions.map((p) => p.committedOffset)).toEqual([8, -1]);
    const multi = await a.request('OFFSET_FETCH', 8, { groupId: '', topics: null, groups: [{ groupId: 'g1', topics: null }, { groupId: 'none', topics: [{ name: 'gt', partitionIndexes: [0] }] }], requireStable: false });
    expect(multi.body.groups.map((g) => [g.groupId, g.errorCode, g.topics.flatMap((t) => t.partitions.map((p) => p.committedOffset))])).toEqual([['g1', 0, [8]], ['none', 0, [-1]]]);
    const described = await a.request('DESCRIBE_GROUPS', 4, { groups: ['g1', 'none'], includeAuthorizedOperations: false });
    expect(described.body.groups.map((g) => [g.groupId, g.groupState, g.protocolData, g.members.length])).toEqual([['g1', 'Stable', 'range', 2], ['none', 'Dead', '', 0]]);
    const listed = await a.request('LIST_GROUPS', 4, { statesFilter: ['stable'] });
    expect(listed.body.groups.map((g) => g.groupId)).toContain('g1');

    // Both leave: the group is Empty and can be deleted (its offsets with it).
    const left = await a.request('LEAVE_GROUP', 4, { groupId: 'g1', memberId: '', members: [{ memberId: first.memberId, groupInstanceId: null, reason: null }, { memberId: bFirst.body.memberId, groupInstanceId: null, reason: null }, { memberId: 'x', groupInstanceId: null, reason: null }] });
    expect(left.body.members.map((m) => m.errorCode)).toEqual([0, 0, E.UNKNOWN_MEMBER_ID]);
    expect((await a.request('DELETE_GROUPS', 1, { groupsNames: ['g1', 'g1-never'] })).body.results.map((r) => r.errorCode)).toEqual([0, E.GROUP_ID_NOT_FOUND]);
    const after = await a.request('OFFSET_FETCH', 5, { groupId: 'g1', topics: [{ name: 'gt', partitionIndexes: [0] }], groups: [], requireStable: false });
    expect(after.body.topics[0]?.partitions[0]?.committedOffset).toBe(-1);
    a.close();
    b.close();
  });

  it('unknown groups: join with a member id, sync and heartbeat are UNKNOWN_MEMBER_ID, OffsetDelete GROUP_ID_NOT_FOUND', async () => {
    const c = await RawClient.connect(broker.port);
    expect((await c.request('JOIN_GROUP', 5, joinBody('ghost', 'someone'))).body.errorCode).toBe(E.UNKNOWN_MEMBER_ID);
    expect((await sync(c, 'ghost', 'someone', 1)).errorCode).toBe(E.UNKNOWN_MEMBER_ID);
    expect((await c.request('HEARTBEAT', 3, { groupId: 'ghost', generationId: 1, memberId: 'someone', groupInstanceId: null })).body.errorCode).toBe(E.UNKNOWN_MEMBER_ID);
    expect((await c.request('OFFSET_DELETE', 0, { groupId: 'ghost', topics: [{ name: 'gt', partitions: [{ partitionIndex: 0 }] }] })).body.errorCode).toBe(E.GROUP_ID_NOT_FOUND);
    expect((await c.request('OFFSET_COMMIT', 7, commitBody('ghost', 'someone', 3, 1))).body.topics[0]?.partitions[0]?.errorCode).toBe(E.ILLEGAL_GENERATION);
    expect((await c.request('JOIN_GROUP', 5, { ...joinBody('', ''), groupId: '' })).body.errorCode).toBe(E.INVALID_GROUP_ID);
    expect((await c.request('JOIN_GROUP', 5, { ...joinBody('g-s', ''), sessionTimeoutMs: 10 })).body.errorCode).toBe(E.INVALID_SESSION_TIMEOUT);
    c.close();
  });

  it('static membership: no MEMBER_ID_REQUIRED, a rejoin by instance id fences the old member id', async () => {
    const c = await RawClient.connect(broker.port);
    const first = await c.request('JOIN_GROUP', 5, { ...joinBody('gs', ''), groupInstanceId: 'instance-1' });
    expect(first.body.errorCode).toBe(0);
    const oldId = first.body.memberId;
    await sync(c, 'gs', oldId, first.body.generationId, [{ memberId: oldId, assignment: Buffer.from('p') }]);
    // A second static member makes the first a follower; then the first "restarts" (no member id, same instance id).
    const d = await RawClient.connect(broker.port);
    const secondJoin = d.request('JOIN_GROUP', 5, { ...joinBody('gs', ''), groupInstanceId: 'instance-2' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const rejoin = await c.request('JOIN_GROUP', 5, { ...joinBody('gs', oldId), groupInstanceId: 'instance-1' });
    const second = await secondJoin;
    expect([rejoin.body.errorCode, second.body.errorCode]).toEqual([0, 0]);
    const leaderIsFirst = rejoin.body.leader === oldId;
    const leaderClient = leaderIsFirst ? c : d;
    const leaderId = leaderIsFirst ? oldId : second.body.memberId;
    const followerSync = leaderIsFirst ? sync(d, 'gs', second.body.memberId, second.body.generationId) : sync(c, 'gs', oldId, rejoin.body.generationId);
    await sync(leaderClient, 'gs', leaderId, rejoin.body.generationId, [{ memberId: oldId, assignment: Buffer.from('a') }, { memberId: second.body.memberId, assignment: Buffer.from('b') }]);
    await followerSync;
    // The restarted leader rebalances the group (Kafka before JoinGroup v9's skipAssignment): instance-2 rejoins too.
    const restartedJoin = c.request('JOIN_GROUP', 5, { ...joinBody('gs', ''), groupInstanceId: 'instance-1' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const otherRejoin = d.request('JOIN_GROUP', 5, { ...joinBody('gs', second.body.memberId), groupInstanceId: 'instance-2' });
    const restarted = await restartedJoin;
    expect((await otherRejoin).body.errorCode).toBe(0);
    expect(restarted.body.errorCode).toBe(0);
    expect(restarted.body.memberId).not.toBe(oldId);
    expect((await c.request('HEARTBEAT', 3, { groupId: 'gs', generationId: restarted.body.generationId, memberId: oldId, groupInstanceId: 'instance-1' })).body.errorCode).toBe(E.FENCED_INSTANCE_ID);
    c.close();
    d.close();
  });

  it('a member with no protocol in common is INCONSISTENT_GROUP_PROTOCOL', async () => {
    const a = await RawClient.connect(broker.port);
    const b = await RawClient.connect(broker.port);
    const first = await joinNew(a, 'g2', 'range');
    await sync(a, 'g2', first.memberId, first.generationId, [{ memberId: first.memberId, assignment: Buffer.from('x') }]);
    expect((await b.request('JOIN_GROUP', 5, joinBody('g2', '', Buffer.from('m'), 'roundrobin'))).body.errorCode).toBe(E.INCONSISTENT_GROUP_PROTOCOL);
    a.close();
    b.close();
  });

  it('oversized metadata: a commit over offset.metadata.max.bytes, and a group record over the log\'s max.message.bytes', async () => {
    const c = await RawClient.connect(broker.port);
    const simple = await c.request('OFFSET_COMMIT', 7, commitBody('g3', '', -1, 4, 'x'.repeat(4097)));
    expect(simple.body.topics[0]?.partitions[0]?.errorCode).toBe(E.OFFSET_METADATA_TOO_LARGE);
    const unknownTopic = await c.request('OFFSET_COMMIT', 7, commitBody('g3', '', -1, 4, null, 'no-such-topic'));
    expect(unknownTopic.body.topics[0]?.partitions[0]?.errorCode).toBe(E.UNKNOWN_TOPIC_OR_PARTITION);
    // Subscription metadata of 2 MiB: the join works, the leader's SyncGroup cannot store the group record.
    const big = Buffer.alloc(2 << 20, 1);
    const first = await c.request('JOIN_GROUP', 5, joinBody('g4', '', big));
    const joined = await c.request('JOIN_GROUP', 5, joinBody('g4', first.body.memberId, big));
    expect(joined.body.errorCode).toBe(0);
    const synced = await sync(c, 'g4', joined.body.memberId, joined.body.generationId, [{ memberId: joined.body.memberId, assignment: Buffer.from('a') }]);
    expect(synced.errorCode).toBe(E.UNKNOWN_SERVER_ERROR);
    c.close();
  });
});
