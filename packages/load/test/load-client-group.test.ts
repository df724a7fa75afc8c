// The load client's consumer-group mode (`--group`) against an in-process
// broker on a loopback port, through its group coordinator: members join
// (JoinGroup, the leader assigns in SyncGroup), heartbeat, fetch their
// partitions, commit and leave; the shared checker still proves every
// acknowledged record was consumed exactly once per partition. A member
// that leaves mid-run hands its partitions over: with a commit first the
// other resumes exactly at its positions (no duplicate); without one the
// other resumes from the last committed offsets and the records fetched
// again are counted as duplicates, equal to what the leaver had fetched.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Broker } from '@seglog/broker';
import { formatReport, parseLoadArgs } from '../src/index.js';
import { KafkaConnection } from '../src/kafka-connection.js';
import { runLoad } from '../src/run-load.js';
import type { LoadOptions } from '../src/load-options.js';

const BASE: Partial<LoadOptions> = {
  partitions: 8, recordBytes: 100, acks: -1, idempotent: true, createTopic: true, requestTimeoutMs: 20_000, maxProduceMs: 20_000,
  records: 16_000, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 20_000, heartbeatIntervalMs: 50, autoCommitIntervalMs: 100,
  // About one 16 KiB batch per partition per fetch: the consume phase takes many rounds, so a leave falls mid-run.
  partitionMaxBytes: 16_384,
};

describe('load client in consumer-group mode', () => {
  let dir: string;
  let broker: Broker;
  let runs = 0;
  const next = (): { topic: string; group: string } => ({ topic: `group-load-${++runs}`, group: `load-group-${runs}` });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-load-group-'));
    broker = await Broker.start({ dataDir: dir, port: 0, log: () => undefined, groupInitialRebalanceDelayMs: 300 });
  });

  afterAll(async () => {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(['range', 'roundrobin'] as const)('3 members (%s) over 8 partitions: every record once, the group\'s rate reported', async (assignor) => {
    const report = await runLoad({ ...BASE, port: broker.port, ...next(), consumers: 3, assignor, broker });
    expect(report.consume.kind).toBe('verified');
    if (report.consume.kind !== 'verified') return;
    expect(report.consume.violations).toEqual([]);
    expect(report.consume.recordsConsumed).toBe(16_000);
    expect(report.consume.duplicateRecords).toBe(0);
    expect(report.ok).toBe(true);
    const g = report.group;
    expect(g).not.toBeNull();
    if (g === null) return;
    expect(g.members).toHaveLength(3);
    expect(new Set(g.members.map((m) => m.memberId)).size).toBe(3);
    // The last generation's assignment covers the 8 partitions once; each member had some and fetched records.
    const assigned = g.members.flatMap((m) => m.partitions).sort((a, b) => a - b);
    expect(assigned).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(g.members.every((m) => m.partitions.length >= 2 && m.recordsFetched > 0 && m.left === 'end')).toBe(true);
    if (assignor === 'roundrobin') expect(g.members.every((m) => m.partitions.every((p, i) => i === 0 || p - (m.partitions[i - 1] as number) === 3))).toBe(true);
    expect(g.recordsFetched).toBe(16_000);
    expect(g.generation).toBeGreaterThanOrEqual(1);
    expect(g.rebalances).toBeGreaterThanOrEqual(1);
    expect(g.commits).toBeGreaterThanOrEqual(3); // at least every member's final commit
    expect(g.recordsPerSecond).toBeGreaterThan(0);
    expect(g.MBps).toBeGreaterThan(0);
    const text = formatReport(report);
    expect(text).toMatch(/group     load-group-\d+ \(\w+\), 3 members, generation \d+, \d+ rebalances?, \d+ commits/);
    expect(text).toMatch(/group     consume rate [\d,]+ records\/s, [\d.]+ MB\/s record batches .*; the group formed in [\d.]+ s\)/);
    expect(text).toContain('duplicates 0');
  });

  it('the committed offsets are the end offsets after the run (OffsetFetch through a later run of the same group resumes there)', async () => {
    const names = next();
    const first = await runLoad({ ...BASE, port: broker.port, ...names, consumers: 2 });
    expect(first.ok).toBe(true);
    // A second run on the same topic and group: the committed offsets (first run's ends) are its start offsets, so it resumes exactly there.
    const second = await runLoad({ ...BASE, port: broker.port, ...names, consumers: 2, records: 4000 });
    expect(second.ok).toBe(true);
    expect(second.startOffsets).toEqual(first.endOffsets);
    expect(second.group?.members.reduce((a, m) => a + m.resumedFromCommit, 0)).toBeGreaterThanOrEqual(8);
    if (second.consume.kind !== 'verified') throw new Error(second.consume.kind);
    expect(second.consume.recordsConsumed).toBe(4000);
    expect(second.consume.duplicateRecords).toBe(0);
  });

  it('a member that commits and leaves mid-run: the other takes its partitions over at its positions, nothing missed, nothing twice', async () => {
    const report = await runLoad({ ...BASE, port: broker.port, ...next(), consumers: 2, groupLeave: { member: 1, afterRecords: 2000, commit: true } });
    if (report.consume.kind !== 'verified' || report.group === null) throw new Error(report.consume.kind);
    expect(report.consume.violations).toEqual([]);
    expect(report.consume.recordsConsumed).toBe(16_000);
    expect(report.consume.duplicateRecords).toBe(0);
    const [stays, leaves] = report.group.members as [NonNullable<typeof report.group>['members'][0], NonNullable<typeof report.group>['members'][0]];
    expect(leaves.left).toBe('mid-run');
    expect(leaves.recordsFetched).toBeGreaterThanOrEqual(2000);
    expect(leaves.recordsFetched).toBeLessThan(8000); // it left before its half was done
    expect(stays.partitions).toEqual([0, 1, 2, 3, 4, 5, 6, 7]); // its last generation holds every partition
    expect(stays.generations.length).toBeGreaterThanOrEqual(2); // it rebalanced after the leave
    expect(stays.resumedFromCommit).toBeGreaterThanOrEqual(4); // the leaver's 4 partitions from its commit
    expect(stays.recordsFetched + leaves.recordsFetched).toBe(16_000);
    expect(report.ok).toBe(true);
  });

  it('a member that leaves without committing: the other refetches from the last commit, the redelivered records are counted, none missed', async () => {
    const report = await runLoad({
      ...BASE, port: broker.port, ...next(), consumers: 2, autoCommitIntervalMs: 600_000, groupLeave: { member: 1, afterRecords: 2000, commit: false },
    });
    if (report.consume.kind !== 'verified' || report.group === null) throw new Error(report.consume.kind);
    expect(report.consume.violations).toEqual([]);
    expect(report.consume.recordsConsumed).toBe(16_000);
    const leaves = report.group.members[1];
    expect(leaves?.left).toBe('mid-run');
    // Nothing the leaver fetched was committed (a commit before the group formed holds the start offsets):
    // every record it fetched is fetched again by the other member.
    expect(report.consume.duplicateRecords).toBe(leaves?.recordsFetched);
    expect(report.consume.duplicateRecords).toBeGreaterThanOrEqual(2000);
    expect(report.group.duplicateRecords).toBe(report.consume.duplicateRecords);
    expect(report.group.recordsFetched).toBe(16_000 + report.consume.duplicateRecords);
    expect(formatReport(report)).toMatch(new RegExp(`duplicates ${report.consume.duplicateRecords.toLocaleString('en-US')} \\(fetched again after a rebalance\\)`));
    expect(report.ok).toBe(true);
  });

  it('the checker can fail in group mode: a record missed is a violation', async () => {
    const report = await runLoad({ ...BASE, port: broker.port, ...next(), consumers: 2, corruption: { partition: 5, offset: 9, kind: 'skip-offset' } });
    expect(report.integrityOk).toBe(false);
    if (report.consume.kind !== 'verified') throw new Error(report.consume.kind);
    expect(report.consume.violations.some((v) => /partition 5: acknowledged record at offset 9 .* was not consumed/.test(v))).toBe(true);
  });

  it('a group another client holds with another assignor: a typed SEGLOG_ERR_LOAD_GROUP, every member stopped', async () => {
    const names = next();
    const other = await KafkaConnection.connect({ host: '127.0.0.1', port: broker.port, clientId: 'other', requestTimeoutMs: 20_000, maxResponseBytes: 1 << 20 });
    try {
      const join = (memberId: string) => other.request('JOIN_GROUP', 5, {
        groupId: names.group, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId, groupInstanceId: null,
        protocolType: 'consumer', protocols: [{ name: 'sticky', metadata: Buffer.alloc(0) }], reason: null,
      });
      const first = await join('');
      const joined = first.errorCode === 79 ? await join(first.memberId) : first; // MEMBER_ID_REQUIRED
      expect(joined.errorCode).toBe(0);
      await expect(runLoad({ ...BASE, port: broker.port, ...names, consumers: 2 }))
        .rejects.toMatchObject({ code: 'SEGLOG_ERR_LOAD_GROUP', message: expect.stringMatching(/JoinGroup .* INCONSISTENT_GROUP_PROTOCOL/) as string });
    } finally {
      other.close();
    }
  });

  it('options: --group, --consumers, --assignor and the group timeouts parse; bad combinations are usage errors', async () => {
    const parsed = parseLoadArgs(['--topic', 'T', '--records', '10', '--group', 'g', '--consumers', '3', '--assignor', 'roundrobin',
      '--session-timeout-ms', '10000', '--rebalance-timeout-ms', '20000', '--heartbeat-interval-ms', '500', '--auto-commit-interval-ms', '1000']);
    expect(parsed).not.toBe('help');
    if (parsed === 'help') return;
    expect(parsed.options).toMatchObject({
      group: 'g', consumers: 3, assignor: 'roundrobin', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 20_000, heartbeatIntervalMs: 500, autoCommitIntervalMs: 1000,
    });
    expect(() => parseLoadArgs(['--records', '1', '--group', 'g', '--assignor', 'sticky'])).toThrow(/assignor/);
    await expect(runLoad({ ...BASE, port: broker.port, consumers: 2 })).rejects.toMatchObject({ code: 'SEGLOG_ERR_LOAD_USAGE' });
    await expect(runLoad({ ...BASE, port: broker.port, group: 'g', heartbeatIntervalMs: 10_000 })).rejects.toMatchObject({ code: 'SEGLOG_ERR_LOAD_USAGE' });
    await expect(runLoad({ ...BASE, port: broker.port, group: 'g', verify: false })).rejects.toMatchObject({ code: 'SEGLOG_ERR_LOAD_USAGE' });
    await expect(runLoad({ ...BASE, port: broker.port, group: 'g', groupLeave: { member: 0, afterRecords: 1, commit: true } })).rejects.toMatchObject({ code: 'SEGLOG_ERR_LOAD_USAGE' });
  });
});

describe('load client in consumer-group mode: a member joining mid-run', () => {
  let dir: string;
  let broker: Broker;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-load-group-join-'));
    broker = await Broker.start({ dataDir: dir, port: 0, log: () => undefined, groupInitialRebalanceDelayMs: 300 });
  });

  afterAll(async () => {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the consuming member commits, rejoins and hands half its partitions over; nothing missed, nothing twice', async () => {
    const report = await runLoad({ ...BASE, port: broker.port, topic: 'join-late', group: 'join-late', consumers: 2, groupJoinLate: { member: 1, afterRecords: 3000 } });
    if (report.consume.kind !== 'verified' || report.group === null) throw new Error(report.consume.kind);
    expect(report.consume.violations).toEqual([]);
    expect(report.consume.recordsConsumed).toBe(16_000);
    expect(report.consume.duplicateRecords).toBe(0);
    const [first, late] = report.group.members as [NonNullable<typeof report.group>['members'][0], NonNullable<typeof report.group>['members'][0]];
    expect(late.joined).toBe('mid-run');
    expect(first.generations.length).toBeGreaterThanOrEqual(2); // formed alone, then rebalanced for the late member
    expect(first.generations.at(-1)).toBe(late.generations.at(-1));
    expect([...first.partitions, ...late.partitions].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(late.partitions).toHaveLength(4);
    expect(late.resumedFromCommit).toBe(4); // the first member committed its positions before giving them up
    expect(late.recordsFetched).toBeGreaterThan(0);
    expect(first.recordsFetched).toBeGreaterThanOrEqual(3000);
    expect(first.recordsFetched + late.recordsFetched).toBe(16_000);
    expect(formatReport(report)).toMatch(/member 1 .*joined mid-run/);
    expect(report.ok).toBe(true);
  });
});
