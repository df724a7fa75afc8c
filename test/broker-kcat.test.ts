// kcat (librdkafka) against the broker, in-process on a random loopback
// port: `kcat -P -l FILE -z CODEC -X enable.idempotence=...` for every codec,
// then `kcat -C -e` reads the topic back; offsets, keys and values must match
// the file line for line. Skipped only when kcat is not installed (.ci/run
// installs it).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Broker } from '@seglog/broker';

const run = promisify(execFile);
const kcatVersion = spawnSync('kcat', ['-V'], { encoding: 'utf8' });
const hasKcat = kcatVersion.status === 0;
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;

function lines(tag: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${tag}-key-${i}\t${tag} value ${i} ${'abcdefghij'.repeat((i * 7) % 50)}|${i * 31}`);
}

async function kcat(args: string[]): Promise<string> {
  const { stdout } = await run('kcat', args, { timeout: 300_000, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

describe.skipIf(!hasKcat)(`broker with kcat (${hasKcat ? kcatVersion.stdout.split('\n').find((l) => l.includes('librdkafka')) ?? 'librdkafka' : 'kcat not installed: apt-get install kcat'})`, () => {
  let dir: string;
  let broker: Broker;
  let bootstrap: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-broker-kcat-'));
    broker = await Broker.start({ dataDir: dir, port: 0, autoCreatePartitions: 1, log: () => undefined });
    bootstrap = `127.0.0.1:${broker.port}`;
  });

  afterAll(async () => {
    const seen = [...broker.stats.versionsSeen].map(([api, v]) => `${api} v${[...v].sort((a, b) => a - b).join(',')}`).join('; ');
    process.stdout.write(`librdkafka (kcat) request versions seen: ${seen}\n`);
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const codec of CODECS) {
    for (const idempotent of [false, true]) {
      it(`kcat -P -z ${codec} -X enable.idempotence=${idempotent} then kcat -C -e reads every line back in order`, async () => {
        const topic = `kcat-${codec}-${idempotent ? 'idem' : 'plain'}`;
        const sent = lines(topic, 2000);
        const file = path.join(dir, `${topic}.txt`);
        writeFileSync(file, `${sent.join('\n')}\n`);
        await kcat(['-b', bootstrap, '-P', '-t', topic, '-z', codec, '-K', '\t', '-X', `enable.idempotence=${idempotent}`, '-X', 'linger.ms=5', '-l', file]);
        const out = await kcat(['-b', bootstrap, '-C', '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%o\t%k\t%s\n']);
        const got = out.split('\n').filter((l) => l.length > 0);
        expect(got.length).toBe(sent.length);
        expect(got).toEqual(sent.map((line, i) => `${i}\t${line}`));
      });
    }
  }

  it('kcat -L lists one broker (node 0, controller) and the topics with leader 0', async () => {
    const out = await kcat(['-b', bootstrap, '-L', '-t', 'kcat-none-plain']);
    expect(out).toContain(`broker 0 at ${bootstrap} (controller)`);
    expect(out).toMatch(/topic "kcat-none-plain" with 1 partitions:\s+partition 0, leader 0, replicas: 0, isrs: 0/);
  });
});
