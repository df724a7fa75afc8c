// Io.lock: an exclusive, non-blocking lock on a file. SimIo keeps a table per
// simulated machine; NodeIo uses flock plus a process-wide table, tested here
// against a second open in this process and against a child process.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeIo, SimIo } from '../src/index.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const IO_INDEX_URL = pathToFileURL(path.join(REPO_ROOT, 'packages/io/src/index.ts')).href;

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
}

/** Runs a child process that tries to lock `file` through NodeIo and prints 'locked' or the error code. */
function lockInChild(file: string): Promise<string> {
  const script = `const { NodeIo } = await import(${JSON.stringify(IO_INDEX_URL)});
try { const lock = await new NodeIo().lock(${JSON.stringify(file)}); await lock.release(); console.log('locked'); }
catch (error) { console.log(error.code ?? String(error)); }`;
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

describe('SimIo.lock', () => {
  it('creates the file, refuses a second lock until released, and counts as an open handle', async () => {
    const io = new SimIo();
    await io.mkdir('/d');
    const lock = await io.lock('/d/.lock');
    expect(await io.exists('/d/.lock')).toBe(true);
    expect(io.openHandles()).toEqual(['/d/.lock']);
    expect(await codeOf(io.lock('/d/.lock'))).toBe('SEGLOG_ERR_IO_LOCKED');
    expect(await codeOf(io.lock('/d/../d/.lock'))).toBe('SEGLOG_ERR_IO_LOCKED');
    expect(io.openHandles()).toEqual(['/d/.lock']);
    await lock.release();
    await lock.release();
    expect(io.openHandles()).toEqual([]);
    const again = await io.lock('/d/.lock');
    await again.release();
  });

  it('a crash drops the lock: the recovered machine can lock again', async () => {
    const io = new SimIo();
    await io.mkdir('/d');
    await io.fsyncDir('/');
    await io.lock('/d/.lock');
    const next = io.recover('process');
    const lock = await next.lock('/d/.lock');
    await lock.release();
    expect(next.openHandles()).toEqual([]);
  });
});

describe('NodeIo.lock', () => {
  let dir = '';
  afterEach(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
    dir = '';
  });

  it('refuses a second lock in this process (same or another NodeIo) and in a child process', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-lock-'));
    const file = path.join(dir, '.lock');
    const io = new NodeIo();
    const lock = await io.lock(file);
    expect(io.openHandles()).toEqual([file]);
    expect(await codeOf(io.lock(file))).toBe('SEGLOG_ERR_IO_LOCKED');
    expect(await codeOf(new NodeIo().lock(path.join(dir, '..', path.basename(dir), '.lock')))).toBe('SEGLOG_ERR_IO_LOCKED');
    expect(io.openHandles()).toEqual([file]);
    expect(await lockInChild(file)).toBe('SEGLOG_ERR_IO_LOCKED');
    await lock.release();
    expect(io.openHandles()).toEqual([]);
    expect(await lockInChild(file)).toBe('locked');
    const again = await io.lock(file);
    await again.release();
  });

  it('flock alone refuses a second open file description of this process', async () => {
    // The process-wide table answers first in NodeIo.lock; this checks the
    // kernel rule underneath it, so the table is not the only line of defence.
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-lock-'));
    const file = path.join(dir, '.lock');
    const io = new NodeIo();
    const lock = await io.lock(file);
    const other = await io.open(file);
    const { createRequire } = await import('node:module');
    const flock = (createRequire(import.meta.url)('fs-ext') as { flockSync: (fd: number, flags: string) => void }).flockSync;
    expect(() => flock(other.fd, 'exnb')).toThrow(/EAGAIN|EWOULDBLOCK/);
    await other.close();
    await lock.release();
  });
});
