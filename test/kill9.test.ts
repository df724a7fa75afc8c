// kill -9 loop on a real disk (reliability.md §3.8): what SimIo cannot show
// (Node, libuv and the kernel's page cache).
//
// Each iteration spawns test/lib/kill9-child.ts on one log directory under
// os.tmpdir() (ext4 here, not tmpfs). The child recovers the log and appends
// the expected-log batches under leader epoch = iteration, reporting every
// resolved written() and durable() over IPC; the parent SIGKILLs it a seeded
// random 0–200 ms after it reported 'ready'. The parent then opens the log
// itself (NodeIo, hadCleanShutdown false, recovery point alternately 0 — a
// full rescan — and the last acknowledged durable offset) and checks the
// process-crash criteria (test/lib/log-checker.ts): every record the child
// saw written or durable is there byte for byte (the page cache survives a
// process crash), the log is a gap-free prefix of the expected batches with
// the epoch of the iteration that wrote each one, CRCs pass, reads through
// the indexes and offsetForTimestamp agree with a linear scan, and, after a
// clean close, the .index/.timeindex files agree with it and no handle is
// left open. The next child continues at the recovered end, so every
// iteration recovers a log that earlier iterations recovered and extended.
//
// SEGLOG_KILL9_ITERATIONS (default 12) and SEGLOG_KILL9_SEED (default 1)
// replay or extend a run; the directory is kept and printed on failure.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NodeIo } from '@seglog/io';
import { Log } from '@seglog/log';
import { describe, expect, it } from 'vitest';
import { expectedBatchAt } from './lib/expected-log.js';
import { KILL9_BATCHES, kill9Config } from './lib/kill9-shared.js';
import { checkIndexFiles, checkRecoveredLog } from './lib/log-checker.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const childScript = path.join(here, 'lib', 'kill9-child.ts');
const ITERATIONS = Number(process.env['SEGLOG_KILL9_ITERATIONS'] ?? '12');
const SEED = Number(process.env['SEGLOG_KILL9_SEED'] ?? '1');

/** mulberry32: a small seeded PRNG for the kill delays. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface ChildRun {
  readonly startedAt: number;
  readonly written: number;
  readonly durable: number;
  readonly signal: NodeJS.Signals | null;
  readonly code: number | null;
  readonly errors: string[];
}

/** Runs one child until it is killed `delayMs` after it reports ready; collects what it acknowledged. */
function runChild(dir: string, epoch: number, recoveryPoint: number, delayMs: number): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', childScript, dir, String(epoch), String(recoveryPoint)], {
      cwd: root, stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let startedAt = -1;
    let written = 0;
    let durable = 0;
    const errors: string[] = [];
    const guard = setTimeout(() => {
      errors.push('the child did not report ready within 300 s');
      child.kill('SIGKILL');
    }, 300_000);
    child.on('message', (message: { kind: string; end?: number; logEndOffset?: number; message?: string }) => {
      if (message.kind === 'ready') {
        startedAt = message.logEndOffset ?? -1;
        clearTimeout(guard);
        setTimeout(() => child.kill('SIGKILL'), delayMs);
      } else if (message.kind === 'written') {
        written = Math.max(written, message.end ?? 0);
      } else if (message.kind === 'durable') {
        durable = Math.max(durable, message.end ?? 0);
      } else if (message.kind === 'error') {
        errors.push(message.message ?? 'unknown error');
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(guard);
      resolve({ startedAt, written, durable, signal, code, errors });
    });
  });
}

describe('kill -9 loop on a real disk (NodeIo)', () => {
  it(`SIGKILLs an appending child ${ITERATIONS} times; every acknowledged record survives, the log stays a gap-free prefix`, async () => {
    const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'seglog-kill9-')), 'kill9-0');
    const random = prng(SEED);
    const io = new NodeIo();
    /** Iteration i (leader epoch i) wrote the batches from starts[i] on. */
    const starts: number[] = [];
    let durable = 0;
    let recoveredEnd = 0;
    let acknowledged = 0;
    const lines: string[] = [];
    let ok = false;
    try {
      for (let i = 0; i < ITERATIONS; i++) {
        const delayMs = Math.floor(random() * 200);
        const run = await runChild(dir, i, recoveredEnd, delayMs);
        expect(run.errors, `child errors (seed ${SEED}, iteration ${i}, dir ${dir})`).toEqual([]);
        expect(run.signal, `the child must die by SIGKILL, not exit (code ${run.code})`).toBe('SIGKILL');
        expect(run.startedAt).toBe(recoveredEnd);
        starts[i] = run.startedAt;
        durable = Math.max(durable, run.durable);
        const mustSurvive = Math.max(durable, run.written);
        acknowledged += Math.max(0, run.written - run.startedAt);
        const recoveryPoint = i % 2 === 0 ? 0 : durable;
        const log = await Log.open(io, dir, kill9Config(), { topic: 'kill9', partition: 0, recoveryPoint, logStartOffset: 0, hadCleanShutdown: false });
        const epochOf = (base: number): number => {
          let epoch = -1;
          for (let j = 0; j < starts.length; j++) if (starts[j]! <= base) epoch = j;
          return epoch;
        };
        const snapshot = await checkRecoveredLog(io, log, {
          expectedBatch: (base) => (base < 0 ? undefined : expectedBatchAt(base, epochOf(base), KILL9_BATCHES)),
          attemptedEnd: Number.MAX_SAFE_INTEGER,
          durable: mustSurvive,
          logStartMin: 0,
          logStartMax: 0,
        }).catch((error: unknown) => {
          throw new Error(`seed ${SEED} iteration ${i} (killed ${delayMs} ms after ready, recovery point ${recoveryPoint}, dir ${dir}): ${(error as Error).message}`);
        });
        const line = `iteration ${i}: killed ${delayMs} ms after ready at ${run.startedAt}; acknowledged written < ${run.written}, durable < ${run.durable}; ` +
          `recovered [${log.logStartOffset}, ${log.logEndOffset}) in ${snapshot.segments.length} segments (recovery point ${recoveryPoint})`;
        lines.push(line);
        recoveredEnd = log.logEndOffset;
        await log.close();
        await checkIndexFiles(io, dir, snapshot.segments);
        expect(io.openHandles()).toEqual([]);
      }
      ok = true;
    } finally {
      console.log(`kill -9 loop, seed ${SEED}, ${ITERATIONS} iterations, dir ${dir}${ok ? ' (removed)' : ' (kept)'}:\n  ${lines.join('\n  ')}\n` +
        `records acknowledged (written) by children: ${acknowledged}; records in the recovered log: ${recoveredEnd}; durable acknowledged < ${durable}`);
      if (ok) rmSync(path.dirname(dir), { recursive: true, force: true });
    }
    expect(recoveredEnd).toBeGreaterThanOrEqual(durable);
    expect(acknowledged).toBeGreaterThan(0);
  });
});
