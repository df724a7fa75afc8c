// kcat -G (librdkafka's consumer group) against the broker, in-process on a
// random loopback port: two kcat processes share a topic of 8 partitions
// (4 each, disjoint), one leaves (SIGTERM: LeaveGroup) and the other takes
// all 8, every record is consumed, the group's offsets are committed on
// close; after a broker restart `kcat -G -e` reads exactly the records
// produced since (consumption resumes exactly after the committed offsets).
// Skipped only when kcat is not installed (.ci/run installs it). Waits are
// bounded by generous hang guards; no verdict depends on elapsed time.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Broker } from '@seglog/broker';

const run = promisify(execFile);
const hasKcat = spawnSync('kcat', ['-V'], { encoding: 'utf8' }).status === 0;
const TOPIC = 'kg8';
const GROUP = 'kcat-group';
const HANG_GUARD_MS = 120_000;

interface KcatMember {
  readonly child: ChildProcess;
  stdout: string;
  stderr: string;
  readonly exited: Promise<number | null>;
}

function startMember(bootstrap: string, extra: readonly string[] = []): KcatMember {
  const child = spawn('kcat', ['-b', bootstrap, '-u', '-G', GROUP, '-f', '%t %p %o %s\\n', '-X', 'auto.offset.reset=earliest',
    '-X', 'session.timeout.ms=6000', '-X', 'heartbeat.interval.ms=300', ...extra, TOPIC], { stdio: ['ignore', 'pipe', 'pipe'] });
  const member: KcatMember = {
    child, stdout: '', stderr: '',
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
  };
  child.stdout?.on('data', (chunk: Buffer) => { member.stdout += chunk.toString('utf8'); });
  child.stderr?.on('data', (chunk: Buffer) => { member.stderr += chunk.toString('utf8'); });
  return member;
}

/** Polls `condition` (every 100 ms) until it holds; the deadline is a hang guard only. */
async function until(what: string, condition: () => boolean, output: () => string): Promise<void> {
  const deadline = Date.now() + HANG_GUARD_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`hang guard: ${what}\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The partitions of the member's latest "assigned:" line. */
function assigned(member: KcatMember): number[] | null {
  const lines = member.stderr.split('\n').filter((l) => l.includes('rebalanced') && l.includes('assigned:'));
  const last = lines.at(-1);
  if (last === undefined) return null;
  return [...last.matchAll(new RegExp(`${TOPIC} \\[(\\d+)\\]`, 'g'))].map((m) => Number(m[1])).sort((a, b) => a - b);
}

function consumed(member: KcatMember): string[] {
  return member.stdout.split('\n').filter((l) => l.startsWith(`${TOPIC} `)).map((l) => l.split(' ').slice(3).join(' '));
}

async function produce(bootstrap: string, dir: string, values: readonly string[]): Promise<void> {
  const file = path.join(dir, `in-${values[0] ?? 'none'}.txt`);
  writeFileSync(file, `${values.map((v) => `${v}\t${v}`).join('\n')}\n`);
  await run('kcat', ['-b', bootstrap, '-P', '-t', TOPIC, '-K', '\t', '-l', file], { timeout: HANG_GUARD_MS });
}

describe.skipIf(!hasKcat)('kcat -G consumer group', () => {
  let dir: string;
  let broker: Broker;
  let bootstrap: string;

  const startBroker = async (): Promise<void> => {
    broker = await Broker.start({
      dataDir: path.join(dir, 'data'), port: 0, autoCreatePartitions: 8, offsetsTopicPartitions: 4, groupInitialRebalanceDelayMs: 300, log: () => undefined,
    });
    bootstrap = `127.0.0.1:${broker.port}`;
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-kcat-groups-'));
    await startBroker();
  });

  afterAll(async () => {
    const seen = [...broker.stats.versionsSeen].map(([api, v]) => `${api} v${[...v].sort((a, b) => a - b).join(',')}`).join('; ');
    process.stdout.write(`librdkafka (kcat -G) request versions seen (last broker run): ${seen}\n`);
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('two members split 8 partitions, one leaves and the other takes them, offsets survive a restart', async () => {
    const first = Array.from({ length: 800 }, (_, i) => `a${i}`);
    await produce(bootstrap, dir, first);
    expect(broker.store.partitionCount(TOPIC)).toBe(8);

    const a = startMember(bootstrap);
    await until('member a assigned all 8', () => assigned(a)?.length === 8, () => a.stderr);
    const b = startMember(bootstrap);
    const both = (): string => `a:\n${a.stderr}\nb:\n${b.stderr}`;
    await until('a and b assigned 4 each', () => assigned(a)?.length === 4 && assigned(b)?.length === 4, both);
    const split = [...(assigned(a) ?? []), ...(assigned(b) ?? [])].sort((x, y) => x - y);
    expect(split).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);

    // b leaves (SIGTERM: kcat closes the consumer, committing and sending LeaveGroup); a takes every partition.
    b.child.kill('SIGTERM');
    await b.exited;
    await until('a assigned all 8 again', () => assigned(a)?.length === 8, both);
    const second = Array.from({ length: 80 }, (_, i) => `b${i}`);
    await produce(bootstrap, dir, second);
    const all = [...first, ...second];
    await until('every record consumed by a or b', () => new Set([...consumed(a), ...consumed(b)]).size === all.length,
      () => `${new Set([...consumed(a), ...consumed(b)]).size} of ${all.length}\n${both()}`);
    expect([...new Set([...consumed(a), ...consumed(b)])].sort()).toEqual([...all].sort());
    a.child.kill('SIGTERM');
    await a.exited;

    // Restart the broker; records produced since the members left are all a new run reads.
    const third = Array.from({ length: 40 }, (_, i) => `c${i}`);
    await produce(bootstrap, dir, third);
    await broker.stop();
    await startBroker();
    const { stdout } = await run('kcat', ['-b', bootstrap, '-G', GROUP, '-e', '-q', '-f', '%t %p %o %s\\n', '-X', 'auto.offset.reset=earliest', TOPIC], { timeout: HANG_GUARD_MS });
    const resumed = stdout.split('\n').filter((l) => l.length > 0).map((l) => l.split(' ').slice(3).join(' '));
    expect(resumed.sort()).toEqual([...third].sort());
  });
});
