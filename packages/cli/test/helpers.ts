// Test helpers: data directories written by the engine (NodeIo, real temp
// dirs), damage applied after close, and the CLI run as a child process.

import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NodeIo } from '@seglog/io';
import { LogConfig, LogManager } from '@seglog/log';
import { buildBatch } from '@seglog/records';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const T0 = 1_700_000_000_000;

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `seglog <args>` as a child process from the repo root. */
export function runSeglog(args: readonly string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'packages/cli/src/main.ts', ...args], {
      cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk; });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

export function tempDir(prefix: string): string {
  return mkdtempSync(path.join(os.tmpdir(), `seglog-cli-${prefix}-`));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export interface WrittenDataDir {
  readonly dataDir: string;
  readonly partitionDir: string;
  /** Batches appended, each with 2 records: offsets 0 .. 2 × batches − 1. */
  readonly batches: number;
}

/**
 * A data directory with one partition `orders-0`, written and closed cleanly
 * by LogManager: 4096-byte segments (several segments), an index entry every
 * 300 bytes, `batches` batches of 2 records each (a text key/value record and
 * a binary value with a header).
 */
export async function writeDataDir(dataDir: string, batches = 60): Promise<WrittenDataDir> {
  const io = new NodeIo();
  const config = new LogConfig().with({ segmentBytes: 4096, indexIntervalBytes: 300 });
  const manager = await LogManager.open(io, dataDir, { defaultConfig: config, minFreeBytes: 0, now: () => T0 + 10_000 });
  const log = await manager.getOrCreateLog('orders', 0);
  for (let i = 0; i < batches; i++) {
    await log.appendAsLeader(buildBatch({
      records: [
        { key: `k${i}`, value: `value-${i}-`.repeat(5), timestamp: T0 + i },
        { value: Buffer.from([0, 1, 2, 255]), timestamp: T0 + i, headers: [{ key: 'h', value: 'x' }] },
      ],
    }), { leaderEpoch: 0 });
  }
  await log.flush();
  await manager.close();
  return { dataDir, partitionDir: path.join(dataDir, 'orders-0'), batches };
}

/** The .log files of a partition directory, ascending. */
export function logFiles(partitionDir: string): string[] {
  return readdirSync(partitionDir).filter((n) => n.endsWith('.log')).sort().map((n) => path.join(partitionDir, n));
}

/** Every file under `dir` (recursive) → its bytes. */
export function readTree(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(path.relative(dir, p), readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

export function appendBytes(file: string, bytes: Buffer): void {
  appendFileSync(file, bytes);
}

/**
 * A data directory as a kill -9 leaves it (test/unclean-writer.ts in a child
 * process: preallocated segments of 8 KiB, 2 records per batch, every batch
 * durable, then SIGKILL): no clean-shutdown marker, zero-filled tails in the
 * active .log and its indexes. Returns the log end offset the child reached.
 */
export function writeUncleanDataDir(dataDir: string, batches: number, producerId = -1): Promise<number> {
  return new Promise((resolve, reject) => {
    const args = ['--conditions=source', '--import', 'tsx', 'packages/cli/test/unclean-writer.ts', dataDir, String(batches)];
    if (producerId >= 0) args.push(String(producerId));
    const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk; });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk; });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      const match = /^durable (\d+)$/m.exec(output);
      if (signal !== 'SIGKILL' || match === null) reject(new Error(`unclean writer: exit ${String(code)} ${String(signal)}: ${output}`));
      else resolve(Number(match[1]));
    });
  });
}
