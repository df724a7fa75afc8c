// The broker's start-up refusals and the operator's way out (issue 23
// items 5, 6, 9), with real processes on real temp directories:
// - every refusal — damaged data below the recovery point
//   (SEGLOG_ERR_LOG_CORRUPTION), an open-file limit below the descriptor
//   budget (a low `ulimit -n` in the child's shell), a garbage broker-producer-id — is
//   exactly one stderr line naming the file, the reason and the seglog
//   command to run, with no stack trace, and a non-zero exit (2);
//   SEGLOG_DEBUG=1 adds the stack;
// - a damaged broker-producer-id: `seglog verify` reports it, `seglog
//   recover` rewrites it above every producer id in the logs, and the broker
//   then starts and hands out ids from there; a valid file below the logs'
//   producer ids is refused too, and with no file the ids start above them;
// - a broker killed with SIGKILL on preallocated segments: `seglog verify`
//   says "needs recovery", not damage (exit 0), and the restart has every
//   acknowledged record.

import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PRODUCER_ID_FILE, PRODUCER_ID_REPAIR_MARGIN, formatProducerIdFile, parseProducerIdFile } from '@seglog/broker';
import { NodeIo } from '@seglog/io';
import { LogConfig, LogManager } from '@seglog/log';
import { buildBatch } from '@seglog/records';
import { consumeAll, kafkaClient } from './lib/broker-kafkajs.js';
import { BrokerResources, ROOT, startBrokerChild } from './lib/broker-process.js';

const resources = new BrokerResources('seglog-startup-');
afterEach(() => resources.cleanup());

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs node with tsx on `args` to its exit (killed after 30 s), through bash when `shell` is given. */
function run(args: readonly string[], options: { shell?: string; env?: Record<string, string> } = {}): Promise<Run> {
  const node = [process.execPath, '--conditions=source', '--import', 'tsx', ...args];
  const [file, argv] = options.shell === undefined
    ? [node[0] as string, node.slice(1)]
    : ['bash', ['-c', `${options.shell}; exec "$@"`, 'bash', ...node]];
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk; });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
    // A broker that starts although it should refuse would run forever: stop it so the assertions report it.
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const broker = (dataDir: string, options: { shell?: string; env?: Record<string, string> } = {}): Promise<Run> =>
  run(['packages/broker/src/main.ts', '--data-dir', dataDir, '--port', '0'], options);
const seglog = (...args: string[]): Promise<Run> => run(['packages/cli/src/main.ts', ...args]);

/** Asserts the one-line refusal contract and returns the line. */
function refusalLine(r: Run): string {
  expect(r.stdout).toBe(''); // refused before the banner
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.code).toBe(2);
  return lines[0] as string;
}

/** A data directory written by LogManager and closed cleanly: `partitions` partitions of topic `t`, batches of producer id `producerId`. */
async function writeData(dataDir: string, options: { partitions: number; batches: number; producerId: number }): Promise<void> {
  const manager = await LogManager.open(new NodeIo(), dataDir, { defaultConfig: new LogConfig(), minFreeBytes: 0 });
  const now = Date.now(); // recent: producer state expires producers whose last batch is older than 7 days
  for (let p = 0; p < options.partitions; p++) {
    const log = await manager.getOrCreateLog('t', p);
    for (let i = 0; i < options.batches; i++) {
      await log.appendAsLeader(buildBatch({
        records: [{ key: `k${i}`, value: `value ${p}/${i} `.repeat(4), timestamp: now }],
        producerId: options.producerId, producerEpoch: 0, baseSequence: i,
      }), { leaderEpoch: 0 });
    }
  }
  await manager.close();
}

describe('start-up refusals are one line: file, reason, command', () => {
  it('a garbage broker-producer-id: one line; seglog verify reports it; seglog recover rewrites it safely; the broker then starts above it', async () => {
    const dataDir = resources.tempDir();
    await writeData(dataDir, { partitions: 1, batches: 20, producerId: 4321 });
    const file = path.join(dataDir, PRODUCER_ID_FILE);
    writeFileSync(file, '\u0000\u0000garbage 12\n');

    const refused = await broker(dataDir);
    expect(refusalLine(refused)).toMatch(new RegExp(`^seglog broker: cannot start: ${file}: not "seglog-producer-id v1 next=<id> crc32c=<hex>" .*` +
      `\\(SEGLOG_ERR_BROKER_PRODUCER_ID_CORRUPT\\)\\. Inspect: pnpm seglog verify ${dataDir}; repair: pnpm seglog recover ${dataDir} `));
    const debug = await broker(dataDir, { env: { SEGLOG_DEBUG: '1' } });
    expect(debug.stderr).toMatch(/^\s+at .*producer-id-allocator\.ts/m); // the stack, on request
    expect(debug.code).toBe(2);

    const verify = await seglog('verify', dataDir);
    expect(verify.stdout).toContain(`problem: ${file}: damaged: not "seglog-producer-id v1`);
    expect(verify.code).toBe(1);
    const recover = await seglog('recover', dataDir);
    expect(recover.stdout).toContain(`${PRODUCER_ID_FILE}: rewrote (damaged: `);
    expect(recover.code).toBe(0);
    const repaired = parseProducerIdFile(readFileSync(file));
    expect(repaired).toEqual({ kind: 'ok', next: 5000 + PRODUCER_ID_REPAIR_MARGIN, legacy: false }); // above 4321, block-aligned, plus the margin

    const started = await startBrokerChild(['--data-dir', dataDir]);
    resources.track(started);
    const producer = kafkaClient(started.port).producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({ topic: 't', acks: -1, messages: [{ value: 'after the repair' }] });
    await producer.disconnect();
    started.child.kill('SIGTERM');
    expect((await started.exited).code).toBe(0);
    // The broker handed out its first id from the repaired value: it reserved the block after it.
    expect(parseProducerIdFile(readFileSync(file))).toMatchObject({ kind: 'ok', next: 5000 + PRODUCER_ID_REPAIR_MARGIN + 1000 });
  });

  it('a valid broker-producer-id below the producer ids in the logs is refused in one line; with no file the ids start above them', async () => {
    const dataDir = resources.tempDir();
    await writeData(dataDir, { partitions: 1, batches: 5, producerId: 4321 });
    const file = path.join(dataDir, PRODUCER_ID_FILE);
    writeFileSync(file, formatProducerIdFile(1000));
    expect(refusalLine(await broker(dataDir))).toBe(`seglog broker: cannot start: ${file}: next producer id 1000 is not above producer id 4321 in the producer state of t-0; ` +
      `starting could hand out a producer id twice (SEGLOG_ERR_BROKER_PRODUCER_ID_CORRUPT). Inspect: pnpm seglog verify ${dataDir}; repair: pnpm seglog recover ${dataDir} (rewrites it above every producer id in the logs)`);

    unlinkSync(file); // lost, or never written: the broker must still not start at 0
    const started = await startBrokerChild(['--data-dir', dataDir]);
    resources.track(started);
    const producer = kafkaClient(started.port).producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({ topic: 't', acks: -1, messages: [{ value: 'new producer' }] });
    await producer.disconnect();
    started.child.kill('SIGTERM');
    expect((await started.exited).code).toBe(0);
    expect(parseProducerIdFile(readFileSync(file))).toEqual({ kind: 'ok', next: 5000 + PRODUCER_ID_REPAIR_MARGIN + 1000, legacy: false });
  });

  it('damage below the recovery point (SEGLOG_ERR_LOG_CORRUPTION): one line naming the segment and position', async () => {
    const dataDir = resources.tempDir();
    await writeData(dataDir, { partitions: 1, batches: 40, producerId: 7 });
    unlinkSync(path.join(dataDir, '.kafka_cleanshutdown')); // as after a crash: recovery rescans the segment holding the recovery point
    const segment = path.join(dataDir, 't-0', '00000000000000000000.log');
    const bytes = readFileSync(segment);
    const position = bytes.readInt32BE(8) + 12; // the second batch
    bytes[position + 70] = (bytes[position + 70] as number) ^ 0x5a;
    writeFileSync(segment, bytes);

    const line = refusalLine(await broker(dataDir));
    expect(line).toMatch(new RegExp(`^seglog broker: cannot start: ${segment}: invalid batch \\(corrupt\\) below the recovery point \\(position ${position}, offset 1, recovery point 40\\): ` +
      `durable data is damaged \\(SEGLOG_ERR_LOG_CORRUPTION\\)\\. Inspect: pnpm seglog verify ${dataDir}; repair: pnpm seglog recover --truncate-corrupt --dry-run ${dataDir} `));
  });

  it('an open-file limit below the descriptor budget (ulimit -n 128, 200 partitions): one line saying what to raise, before any log opens', async () => {
    const dataDir = resources.tempDir();
    await writeData(dataDir, { partitions: 200, batches: 1, producerId: 7 });
    // Node and tsx use about 40 descriptors before main runs (more on a busy machine: a limit of 72 was
    // seen to run out inside the module loader, before main); the partitions need 4 each, 800 in all (400 more
    // for the internal topics' 100), and the handle cache at least 16 (sized to the limit when not set):
    // the start-up check refuses before an EMFILE could happen.
    const line = refusalLine(await broker(dataDir, { shell: 'ulimit -n 128' }));
    expect(line).toBe(`seglog broker: cannot start: ${dataDir}: the open-file limit 128 is below the descriptor budget 1344 ` +
      '(300 partitions, 100 of them internal topics to create, × 4 for active segments + 16 max-open-segment-files + 128 for sockets and the runtime). ' +
      'Raise the open-file limit to at least 1344 (ulimit -n 1344; LimitNOFILE=1344 under systemd) (SEGLOG_ERR_BROKER_FD_LIMIT)');
  });
});

describe('a broker killed with SIGKILL on preallocated segments', () => {
  it('seglog verify: no damage, needs recovery (exit 0); the restart has every acknowledged record', async () => {
    const dataDir = resources.tempDir();
    const first = await startBrokerChild(['--data-dir', dataDir, '--preallocate']);
    resources.track(first);
    const producer = kafkaClient(first.port).producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const values: string[] = [];
    for (let round = 0; round < 20; round++) {
      const messages = Array.from({ length: 20 }, (_, i) => ({ value: `r${round}-m${i} ${'x'.repeat(100)}` }));
      await producer.send({ topic: 'k9', acks: -1, messages });
      values.push(...messages.map((m) => m.value));
    }
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    await producer.disconnect().catch(() => undefined);
    expect(existsSync(path.join(dataDir, '.kafka_cleanshutdown'))).toBe(false);

    const verify = await seglog('verify', dataDir);
    expect(verify.stdout.split('\n').filter((l) => l.startsWith('problem:'))).toEqual([]);
    expect(verify.stdout).toMatch(/^recovery: .*00000000000000000000\.log position \d+: .*recovery will cut \d+ bytes/m);
    expect(verify.stdout).toMatch(/^recovery: .*00000000000000000000\.index: \d+ zero-filled slots .*recovery will rebuild this index/m);
    expect(verify.stdout).toMatch(/: no damage; needs recovery after an unclean stop \(expected, \d+ recovery findings\)/);
    expect(verify.code).toBe(0);

    const second = await startBrokerChild(['--data-dir', dataDir, '--preallocate']);
    resources.track(second);
    const got = await consumeAll(kafkaClient(second.port), 'k9');
    expect(got.map((m) => m.value?.toString())).toEqual(values);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  });
});
