// LogManager on NodeIo in a temporary directory: the `.lock` refuses a second
// manager in this process and in a child process (real flock), and a clean
// close leaves the marker and checkpoints Kafka writes.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NodeIo } from '@seglog/io';
import { afterEach, describe, expect, it } from 'vitest';
import { LogManager } from '../src/log-manager.js';
import { rejected } from './helpers.js';
import { config, producerBatch } from './log-helpers.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const LOG_INDEX_URL = pathToFileURL(path.join(REPO_ROOT, 'packages/log/src/index.ts')).href;
const IO_INDEX_URL = pathToFileURL(path.join(REPO_ROOT, 'packages/io/src/index.ts')).href;

/** Runs `script` (an ES module) in a child node with the sources; resolves with its trimmed stdout, rejects on a non-zero exit. */
function runChild(script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => (status === 0 ? resolve(out.trim()) : reject(new Error(`child exited ${status}: ${err}`))));
  });
}

/** A child process opens a LogManager on `dir` and prints 'opened' or the error code. */
function openInChild(dir: string): Promise<string> {
  return runChild(`const { LogManager, LogConfig } = await import(${JSON.stringify(LOG_INDEX_URL)});
const { NodeIo } = await import(${JSON.stringify(IO_INDEX_URL)});
try {
  const m = await LogManager.open(new NodeIo(), ${JSON.stringify(dir)}, { defaultConfig: new LogConfig(), minFreeBytes: 0, checkpointIntervalMs: 0 });
  await m.close();
  console.log('opened');
} catch (error) { console.log(error.code ?? String(error)); }`);
}

describe('LogManager on NodeIo', () => {
  let root = '';
  afterEach(() => {
    if (root !== '') rmSync(root, { recursive: true, force: true });
    root = '';
  });

  it('a second manager, in this process or a child process, gets SEGLOG_ERR_LOG_LOCKED', async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'seglog-manager-'));
    const dir = path.join(root, 'data');
    const io = new NodeIo();
    const options = { defaultConfig: config({ segmentIndexBytes: 4096 }), minFreeBytes: 0, checkpointIntervalMs: 0 };
    const manager = await LogManager.open(io, dir, options);
    const log = await manager.getOrCreateLog('orders', 0);
    await log.appendAsLeader(producerBatch(3), { leaderEpoch: 0 });
    expect((await rejected(LogManager.open(io, dir, options))).code).toBe('SEGLOG_ERR_LOG_LOCKED');
    expect((await rejected(LogManager.open(new NodeIo(), `${root}/../${path.basename(root)}/data`, options))).code).toBe('SEGLOG_ERR_LOG_LOCKED');
    expect(await openInChild(dir)).toBe('SEGLOG_ERR_LOG_LOCKED');
    await manager.close();
    expect(io.openHandles()).toEqual([]);
    expect(readFileSync(path.join(dir, '.kafka_cleanshutdown'), 'utf8')).toBe('{"version":0,"brokerEpoch":-1}');
    expect(readFileSync(path.join(dir, 'recovery-point-offset-checkpoint'), 'utf8')).toBe('0\n1\norders 0 3\n');
    expect(readFileSync(path.join(dir, 'log-start-offset-checkpoint'), 'utf8')).toBe('0\n0\n');
    expect(await openInChild(dir)).toBe('opened');
  });

  it('deletes a partition of a 249-character topic (its -delete name is cut to 255 bytes, as Kafka) and stays open', async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'seglog-manager-'));
    const dir = path.join(root, 'data');
    const options = { defaultConfig: config({ segmentIndexBytes: 4096 }), minFreeBytes: 0, checkpointIntervalMs: 0 };
    const manager = await LogManager.open(new NodeIo(), dir, options);
    const topic = `.${'x'.repeat(248)}`;
    const log = await manager.getOrCreateLog(topic, 7);
    await log.appendAsLeader(producerBatch(3), { leaderEpoch: 0 });
    await manager.deleteLog(topic, 7);
    expect(manager.state).toBe('open');
    expect(readdirSync(dir).filter((n) => n.includes('xxx'))).toEqual([]);
    await manager.getOrCreateLog('after', 0);
    await manager.close();
  });

  it.each([
    ['throttled: the throttle sleeps hold the event loop', 4 * 1024 * 1024],
    ['unthrottled: the compute worker holds it while it starts and while a request is out', null],
  ])('an awaited clean() finishes in a process with nothing else alive, %s', async (_name, bytesPerSecond) => {
    root = mkdtempSync(path.join(os.tmpdir(), 'seglog-manager-'));
    const dir = path.join(root, 'data');
    // 2 MiB of keyed records to clean (at 4 MiB/s: the throttle sleeps several times during the pass), and
    // the child has no other timer or socket. An unref'd sleep, or a worker unref'd while it started, let
    // Node end the process mid-pass (exit 13).
    const limit = bytesPerSecond === null ? '' : `, bytesPerSecond: ${bytesPerSecond}`;
    const script = `const { LogManager, LogConfig } = await import(${JSON.stringify(LOG_INDEX_URL)});
const { computeCounters } = await import(${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'packages/log/src/cleaner/cleaner-compute.ts')).href)});
const { NodeIo } = await import(${JSON.stringify(IO_INDEX_URL)});
const { buildBatch } = await import(${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'packages/records/src/index.ts')).href)});
const m = await LogManager.open(new NodeIo(), ${JSON.stringify(dir)}, {
  defaultConfig: new LogConfig({ cleanupPolicy: 'compact', segmentBytes: 256 * 1024, minCleanableDirtyRatio: 0.01 }),
  minFreeBytes: 0, checkpointIntervalMs: 0, cleaner: { enabled: false${limit} },
});
const log = await m.getOrCreateLog('table', 0);
const value = Buffer.alloc(1000, 0x61);
for (let i = 0; i < 2048; i++) await log.appendAsLeader(buildBatch({ records: [{ key: 'k' + (i % 64), value, timestamp: 1 }] }));
await log.forceRoll();
await log.flush();
log.updateHighWatermark(log.logEndOffset);
const stats = await m.cleaner.clean(log);
await m.close();
console.log('worker passes ' + computeCounters.workerPasses + ' cleaned ' + stats.outcome + ' removed ' + stats.removedRecords);`;
    const out = await runChild(script);
    expect(out).toMatch(/^worker passes 1 cleaned cleaned removed \d+$/);
    expect(Number(out.split(' ').at(-1))).toBeGreaterThan(1000);
  });
});
