// The descriptor budget (issue 24), with real brokers under a real low
// `ulimit -n` in the child's shell (never below 128: Node and tsx use ~40
// descriptors themselves):
// - admission: CreateTopics, CreatePartitions and Metadata auto-creation
//   whose new partitions (4 descriptors each) do not fit beside the open
//   partitions, --max-open-segment-files and the 128-descriptor margin are
//   refused with POLICY_VIOLATION (44) and the reason, before any directory
//   is made; the broker keeps serving, and the next start works;
// - the start-up refusal names the handle-cache budget to lower when
//   lowering it is enough, and the broker starts with it lowered;
// - the status line shows open descriptors/limit, the handle cache's use and the index memory against --index-cache-bytes.

import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { NodeIo } from '@seglog/io';
import { LogConfig, LogManager } from '@seglog/log';
import { buildBatch } from '@seglog/records';
import { RawClient } from '../packages/broker/test/raw-client.js';
import { consumeAll, kafkaClient } from './lib/broker-kafkajs.js';
import { BrokerResources, ROOT, startBrokerChild } from './lib/broker-process.js';
import type { BrokerChild } from './lib/broker-process.js';

const resources = new BrokerResources('seglog-fdbudget-');
afterEach(() => resources.cleanup());

const LIMIT = 400;
const CACHE = 10;
// One partition each for the coordinators' internal topics (reserved from the start, 8 descriptors);
// free for new partitions: 400 - 8 - 10 - 128 = 254 descriptors, 63 partitions.
const INTERNAL = ['--offsets-topic-partitions', '1', '--transaction-state-topic-partitions', '1'];

async function start(dataDir: string, extra: readonly string[] = []): Promise<BrokerChild> {
  const child = await startBrokerChild(['--data-dir', dataDir, '--max-open-segment-files', String(CACHE), ...INTERNAL, ...extra], 30_000, { shell: `ulimit -n ${LIMIT}` });
  resources.track(child);
  return child;
}

async function stop(child: BrokerChild): Promise<void> {
  child.child.kill('SIGTERM');
  expect((await child.exited).code).toBe(0);
}

/** The partition directories of `topic` in `dataDir`. */
function partitionDirs(dataDir: string, topic: string): string[] {
  return readdirSync(dataDir).filter((name) => name.startsWith(`${topic}-`));
}

/** The per-topic errors of a kafkajs admin call that rejected. */
async function topicErrors(promise: Promise<unknown>): Promise<{ type: string; code: number; message: string }[]> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).not.toBeNull();
  const e = error as { errors?: unknown[]; type?: string; code?: number; message: string };
  const list = (e.errors ?? [e]) as { type: string; code: number; message: string }[];
  return list.map((x) => ({ type: x.type, code: x.code, message: x.message }));
}

describe('admission against the descriptor budget', () => {
  it('CreateTopics beyond the budget: POLICY_VIOLATION with the reason, nothing on disk, the broker keeps serving; the next start works', async () => {
    const dataDir = resources.tempDir();
    const first = await start(dataDir);
    const kafka = kafkaClient(first.port);
    const admin = kafka.admin();
    await admin.connect();

    // 64 partitions need 256 descriptors; 254 are free.
    const refused = await topicErrors(admin.createTopics({ topics: [{ topic: 'big', numPartitions: 64 }], waitForLeaders: false }));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ type: 'POLICY_VIOLATION', code: 44 });
    expect(partitionDirs(dataDir, 'big')).toEqual([]);
    // kafkajs shows its own text for code 44; the reason is in the response's error message.
    const raw = await RawClient.connect(first.port);
    const response = await raw.request('CREATE_TOPICS', 5, {
      topics: [{ name: 'big', numPartitions: 64, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false,
    });
    expect(response.body.topics[0]?.errorCode).toBe(44);
    expect(response.body.topics[0]?.errorMessage).toBe('SEGLOG_ERR_BROKER_FD_BUDGET: 64 new partitions of topic big need 256 file descriptors (4 each) ' +
      'but 254 of the open-file limit 400 are free (2 partitions use 8, max-open-segment-files 10, 128 kept for sockets); at most 63 more fit. ' +
      "Raise the broker's open-file limit (ulimit -n; LimitNOFILE=) or lower --max-open-segment-files");
    raw.close();
    expect(partitionDirs(dataDir, 'big')).toEqual([]);

    // What fits is admitted, and counts against the next creation.
    expect(await admin.createTopics({ topics: [{ topic: 'small', numPartitions: 10 }], waitForLeaders: false })).toBe(true);
    const second = await topicErrors(admin.createTopics({ topics: [{ topic: 'big', numPartitions: 54 }], waitForLeaders: false }));
    expect(second[0]).toMatchObject({ type: 'POLICY_VIOLATION', code: 44 });
    expect(partitionDirs(dataDir, 'big')).toEqual([]);
    expect(await admin.createTopics({ topics: [{ topic: 'medium', numPartitions: 53 }], waitForLeaders: false })).toBe(true);
    expect(partitionDirs(dataDir, 'medium')).toHaveLength(53);

    // CreatePartitions is admitted the same way: nothing is free now.
    const grow = await topicErrors(admin.createPartitions({ topicPartitions: [{ topic: 'small', count: 11 }] }));
    expect(grow[0]).toMatchObject({ type: 'POLICY_VIOLATION', code: 44 });
    expect(partitionDirs(dataDir, 'small')).toHaveLength(10);

    // Still serving: produce to and consume from an admitted topic.
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'small', acks: -1, messages: [{ partition: 3, value: 'still serving' }] });
    await producer.disconnect();
    const got = await consumeAll(kafka, 'small', 3);
    expect(got.map((m) => m.value?.toString())).toEqual(['still serving']);
    expect((await admin.listTopics()).filter((t) => !t.startsWith('__')).sort()).toEqual(['medium', 'small']);
    await admin.disconnect();
    await stop(first);

    // The next start, under the same limit, opens all 65 partitions and serves them.
    const restarted = await start(dataDir);
    const again = kafkaClient(restarted.port).admin();
    await again.connect();
    expect((await again.listTopics()).filter((t) => !t.startsWith('__')).sort()).toEqual(['medium', 'small']);
    await again.disconnect();
    await stop(restarted);
  });

  it('Metadata auto-creation beyond the budget: POLICY_VIOLATION, no directory; the status line shows descriptors and the handle cache', async () => {
    const dataDir = resources.tempDir();
    const broker = await start(dataDir, ['--auto-create-partitions', '64', '--status-interval-ms', '100', '--index-cache-bytes', '2097152']);
    const raw = await RawClient.connect(broker.port);
    const response = await raw.request('METADATA', 12, {
      topics: [{ topicId: '00000000000000000000000000000000', name: 'auto' }], allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false,
    });
    expect(response.body.topics.map((t) => [t.name, t.errorCode])).toEqual([['auto', 44]]);
    raw.close();
    expect(partitionDirs(dataDir, 'auto')).toEqual([]);
    // kafkajs's producer (auto-creation allowed) gets the same refusal, not an endless retry.
    const producer = kafkaClient(broker.port).producer();
    await producer.connect();
    const sent = await topicErrors(producer.send({ topic: 'auto', messages: [{ value: 'x' }] }));
    expect(sent[0]?.message).toBe('Request parameters do not satisfy the configured policy'); // kafkajs's text for code 44
    await producer.disconnect();
    expect(partitionDirs(dataDir, 'auto')).toEqual([]);
    // Waits for a status line (bounded by the suite's guard, not a timeout): fds <open>/<limit> (cache <open>/<max>).
    const statusLines = (): string[] => broker.output().split('\n').filter((l) => l.startsWith('status: '));
    while (statusLines().length < 3) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(statusLines()[2]).toMatch(/^status: .*, \d+ connections, 2 partitions, fds \d+\/400 \(cache \d+\/10\), index \d+\.\d\/2\.0 MiB$/);
    await stop(broker);
  });
});

describe('the start-up check', () => {
  it('an explicit handle-cache budget too big for the limit: the refusal names the value to lower it to; unset, the cache is sized to the limit and the broker starts', async () => {
    const dataDir = resources.tempDir();
    const manager = await LogManager.open(new NodeIo(), dataDir, { defaultConfig: new LogConfig(), minFreeBytes: 0 });
    for (let p = 0; p < 20; p++) {
      const log = await manager.getOrCreateLog('t', p);
      await log.appendAsLeader(buildBatch({ records: [{ value: `v${p}`, timestamp: Date.now() }] }), { leaderEpoch: 0 });
    }
    await manager.close();

    const refused = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn('bash', ['-c', 'ulimit -n 256; exec "$@"', 'bash', process.execPath, '--conditions=source', '--import', 'tsx',
        'packages/broker/src/main.ts', '--data-dir', dataDir, '--port', '0', '--max-open-segment-files', '1000', ...INTERNAL], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => { stdout += c; });
      child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr += c; });
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(refused.stdout).toBe('');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(`seglog broker: cannot start: ${dataDir}: the open-file limit 256 is below the descriptor budget 1216 ` +
      '(22 partitions, 2 of them internal topics to create, × 4 for active segments + 1000 max-open-segment-files + 128 for sockets and the runtime). ' +
      'Raise the open-file limit to at least 1216 (ulimit -n 1216; LimitNOFILE=1216 under systemd), or lower --max-open-segment-files to at most 40 (SEGLOG_ERR_BROKER_FD_LIMIT)\n');

    // No --max-open-segment-files: 256 − 22 × 4 − 128 = 40 idle sealed-segment descriptors.
    const started = await startBrokerChild(['--data-dir', dataDir, ...INTERNAL], 30_000, { shell: 'ulimit -n 256' });
    resources.track(started);
    const kafka = kafkaClient(started.port);
    for (let p = 0; p < 20; p++) expect((await consumeAll(kafka, 't', p)).map((m) => m.value?.toString())).toEqual([`v${p}`]);
    await stop(started);
  });
});
