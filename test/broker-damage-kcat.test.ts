// kcat (librdkafka) against a broker whose data directory has a damaged
// batch header inside a sealed segment (issue 23 item 0c): the issue saw kcat
// stall (broken framing or KAFKA_STORAGE_ERROR forever) and 5,600+ records
// unreadable, with nothing logged. Now kcat reports the broker's
// CORRUPT_MESSAGE (librdkafka: "Broker: Invalid message", code 2) for the
// damaged offsets after offsets 0..3, the broker logs the damage once
// with file and position, and `kcat -o <next offset> -e` reads every record
// after it. Skipped only when kcat is not installed.

import { afterEach, describe, expect, it } from 'vitest';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Broker } from '@seglog/broker';
import { NodeIo } from '@seglog/io';
import { LogConfig, LogManager } from '@seglog/log';
import { buildBatch } from '@seglog/records';

const run = promisify(execFile);
const hasKcat = spawnSync('kcat', ['-V'], { encoding: 'utf8' }).status === 0;
const T0 = 1_700_000_000_000;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Runs kcat until its stderr matches `pattern` (then kills it) or `timeoutMs` passes; returns what it printed. */
function kcatUntil(args: string[], pattern: RegExp, timeoutMs: number): Promise<{ stdout: string; stderr: string; matched: boolean }> {
  return new Promise((resolve) => {
    const child = spawn('kcat', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let matched = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (c: string) => { stdout += c; });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
      if (!matched && pattern.test(stderr)) {
        matched = true;
        child.kill('SIGKILL');
      }
    });
    child.once('close', () => {
      clearTimeout(timer);
      resolve({ stdout, stderr, matched });
    });
  });
}

describe.skipIf(!hasKcat)('kcat and a damaged batch in a sealed segment (issue 23 0c)', () => {
  it('kcat gets CORRUPT_MESSAGE ("Broker: Invalid message") at the damaged offsets, the broker logs it once, and kcat -o <next> -e reads the rest', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'seglog-kcat-damage-'));
    dirs.push(dataDir);
    const manager = await LogManager.open(new NodeIo(), dataDir, { defaultConfig: new LogConfig().with({ segmentBytes: 16_384, indexIntervalBytes: 512 }), minFreeBytes: 0, checkpointIntervalMs: 0 });
    const log = await manager.getOrCreateLog('orders', 0);
    for (let i = 0; i < 150; i++) {
      await log.appendAsLeader(buildBatch({ records: [{ key: `k${i}`, value: `value-${i}-`.repeat(20), timestamp: T0 + 10 * i }, { value: `v${i}`, timestamp: T0 + 10 * i }] }), { leaderEpoch: 0 });
    }
    await log.flush();
    await manager.close();
    const partitionDir = path.join(dataDir, 'orders-0');
    const sealed = path.join(partitionDir, readdirSync(partitionDir).filter((n) => n.endsWith('.log')).sort()[0] as string);
    const bytes = readFileSync(sealed);
    let position = 0;
    for (let i = 0; i < 2; i++) position += bytes.readInt32BE(position + 8) + 12;
    bytes.writeInt32BE(bytes.readInt32BE(position + 8) + 40, position + 8); // batch 2 (offsets 4, 5): a plausible wrong length
    writeFileSync(sealed, bytes);

    const lines: string[] = [];
    const broker = await Broker.start({ dataDir, port: 0, log: (l) => lines.push(l) });
    const bootstrap = `127.0.0.1:${broker.port}`;
    try {
      // -u: kcat's stdout is a pipe here, block-buffered; SIGKILL at the error would drop offsets it already printed.
      const from0 = await kcatUntil(['-b', bootstrap, '-C', '-t', 'orders', '-p', '0', '-o', 'beginning', '-e', '-u', '-f', '%o\n'], /Broker: Invalid message/, 300_000);
      expect(from0.matched, `kcat printed:\n${from0.stderr}`).toBe(true);
      expect(from0.stdout.split('\n').filter((l) => l !== '')).toEqual(['0', '1', '2', '3']);
      const said = lines.filter((l) => l.includes('SEGLOG_ERR_LOG_CORRUPT_BATCH'));
      expect(said).toHaveLength(1);
      expect(said[0]).toContain(`${sealed} at position ${position}`);
      const { stdout } = await run('kcat', ['-b', bootstrap, '-C', '-t', 'orders', '-p', '0', '-o', '6', '-e', '-q', '-f', '%o\n'], { timeout: 300_000 });
      expect(stdout.split('\n').filter((l) => l !== '').map(Number)).toEqual(Array.from({ length: 294 }, (_, i) => 6 + i));
    } finally {
      await broker.stop();
    }
  });
});
