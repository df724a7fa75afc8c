// SIGKILL the broker (a child process, --sync-on-ack) while a group commits
// offsets: after every restart, each partition's committed offset is at
// least the last one the broker acknowledged (an acknowledged commit is
// never lost) and at most the last one sent (nothing invented). Commits are
// pipelined (up to 16 in flight) so the kill lands among unanswered ones.
// Three kill rounds, each after a fixed count of acknowledgements: bounded by
// counts, not by time.

import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KAFKA_ERROR_CODES } from '@seglog/broker';
import { RawClient } from '../packages/broker/test/raw-client.js';
import { startBrokerChild } from './lib/broker-process.js';
import type { BrokerChild } from './lib/broker-process.js';

const TOPIC = 'k9t';
const GROUP = 'k9g';
const PARTITIONS = 4;
const ROUNDS = 3;
const ACKS_PER_ROUND = 200;
const IN_FLIGHT = 16;

function commitBody(partition: number, offset: number) {
  return {
    groupId: GROUP, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1,
    topics: [{ name: TOPIC, partitions: [{ partitionIndex: partition, committedOffset: offset, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: `m${offset}` }] }],
  };
}

/** OffsetFetch until the coordinator has loaded (COORDINATOR_LOAD_IN_PROGRESS before), bounded by a count. */
async function committedOffsets(client: RawClient): Promise<number[]> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const answer = await client.request('OFFSET_FETCH', 7, {
      groupId: GROUP, topics: [{ name: TOPIC, partitionIndexes: [0, 1, 2, 3] }], groups: [], requireStable: false,
    });
    if (answer.body.errorCode === KAFKA_ERROR_CODES.NONE) return answer.body.topics[0]?.partitions.map((p) => p.committedOffset) ?? [];
    expect(answer.body.errorCode).toBe(KAFKA_ERROR_CODES.COORDINATOR_LOAD_IN_PROGRESS);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the coordinator never finished loading');
}

describe('group offsets under SIGKILL (--sync-on-ack)', () => {
  let dir: string;
  let child: BrokerChild | null = null;

  afterEach(() => {
    child?.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('every acknowledged commit survives each kill', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-groups-kill9-'));
    const args = ['--data-dir', dir, '--sync-on-ack', '--offsets-topic-partitions', '4', '--auto-create-partitions', String(PARTITIONS)];
    const acked = Array.from({ length: PARTITIONS }, () => -1);
    const sent = Array.from({ length: PARTITIONS }, () => -1);
    let next = 0;
    for (let round = 0; round < ROUNDS; round++) {
      child = await startBrokerChild(args);
      const client = await RawClient.connect(child.port);
      if (round === 0) {
        await client.request('CREATE_TOPICS', 4, { topics: [{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false });
      }
      const found = await committedOffsets(client);
      for (let p = 0; p < PARTITIONS; p++) {
        expect(found[p], `partition ${p} after kill ${round}`).toBeGreaterThanOrEqual(acked[p] as number);
        expect(found[p], `partition ${p} after kill ${round}`).toBeLessThanOrEqual(sent[p] as number);
      }
      // Commit offsets that grow per partition, IN_FLIGHT at a time, until ACKS_PER_ROUND are acknowledged; then SIGKILL.
      let acknowledged = 0;
      const victim = child;
      await new Promise<void>((resolve) => {
        const issue = (): void => {
          const offset = next++;
          const partition = offset % PARTITIONS;
          sent[partition] = Math.max(sent[partition] as number, offset);
          client.request('OFFSET_COMMIT', 7, commitBody(partition, offset)).then((answer) => {
            if (answer.body.topics[0]?.partitions[0]?.errorCode !== 0) throw new Error(`commit refused: ${JSON.stringify(answer.body)}`);
            acked[partition] = Math.max(acked[partition] as number, offset);
            acknowledged++;
            if (acknowledged === ACKS_PER_ROUND) {
              victim.child.kill('SIGKILL');
              resolve();
            } else if (acknowledged < ACKS_PER_ROUND) issue();
          }, () => undefined);
        };
        for (let i = 0; i < IN_FLIGHT; i++) issue();
      });
      await victim.exited;
      client.close();
      child = null;
    }
    child = await startBrokerChild(args);
    const client = await RawClient.connect(child.port);
    const final = await committedOffsets(client);
    for (let p = 0; p < PARTITIONS; p++) {
      expect(final[p]).toBeGreaterThanOrEqual(acked[p] as number);
      expect(final[p]).toBeLessThanOrEqual(sent[p] as number);
    }
    client.close();
  });
});
