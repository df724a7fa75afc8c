// NodeIo's write gathering (internal/write-gather.ts): the buffered writes of
// one turn, to any files, go to the threadpool as pwritevMany jobs of at most
// 64; a lone write goes through node:fs; O_DIRECT files, an injected fs and
// gatherWrites: false never gather. Every write still ends by itself: bytes at
// their positions, its own IoError (ENOSPC from /dev/full, EBADF from an fd
// closed behind its back: the same as node:fs gives alone) without failing
// the others, and close() waits for a gathered write in flight. Without the
// addon (SEGLOG_NATIVE=0) nothing is gathered or hinted and writes still land.
import fs from 'node:fs';
import path from 'node:path';
import { capabilities } from '@seglog/native';
import { afterAll, describe, expect, it } from 'vitest';
import { IoError, NodeIo } from '../src/index.js';
import type { IoFile } from '../src/index.js';
import { wasmMemory } from '../src/internal/wasm-memory.js';
import { filled, realFs, tempDir } from './helpers.js';

// Registered by what this build has (not skipped): with the addon the gathering and the hints, without it the fallback.
const withAddon = (name: string, body: () => void): void => {
  if (capabilities.pwritevMany) describe(name, body);
};

withAddon('NodeIo write gathering', () => {
  const { dir, cleanup } = tempDir('gather');
  let counter = 0;
  afterAll(cleanup);

  async function openFiles(io: NodeIo, n: number): Promise<IoFile[]> {
    const files: IoFile[] = [];
    for (let i = 0; i < n; i++) files.push(await io.open(path.join(dir, `g${counter++}`), { create: true }));
    return files;
  }

  it('sends the writes of one turn to many files as one job, each at its position', async () => {
    const io = new NodeIo();
    const files = await openFiles(io, 10);
    await Promise.all(files.map((f, i) => f.pwritev([filled(100, i + 1), filled(5, 0xee)], i)));
    expect(io.stats).toMatchObject({ gatherJobs: 1, gatheredWrites: 10 });
    files.forEach((f, i) => {
      expect(fs.readFileSync(f.path)).toEqual(Buffer.concat([Buffer.alloc(i), filled(100, i + 1), filled(5, 0xee)]));
    });
    // pwrite gathers too; a lone write in its turn goes through node:fs (no job counted).
    await Promise.all([files[0]!.pwrite(filled(3, 7), 0), files[1]!.pwrite(filled(3, 8), 0)]);
    expect(io.stats).toMatchObject({ gatherJobs: 2, gatheredWrites: 12 });
    await files[2]!.pwrite(filled(4, 9), 0);
    expect(io.stats).toMatchObject({ gatherJobs: 2, gatheredWrites: 12 });
    expect(fs.readFileSync(files[2]!.path).subarray(0, 4)).toEqual(filled(4, 9));
    for (const f of files) await f.close();
  });

  it('splits a turn of more than 64 writes into jobs of at most 64 (a remainder of one goes alone)', async () => {
    const io = new NodeIo();
    const files = await openFiles(io, 3);
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 129; i++) writes.push(files[i % 3]!.pwrite(filled(1, i & 0xff), Math.floor(i / 3)));
    await Promise.all(writes);
    expect(io.stats).toMatchObject({ gatherJobs: 2, gatheredWrites: 128 });
    files.forEach((f, k) => {
      const bytes = fs.readFileSync(f.path);
      expect(bytes.length).toBe(43);
      for (let j = 0; j < 43; j++) expect(bytes[j]).toBe((3 * j + k) & 0xff);
    });
    for (const f of files) await f.close();
  });

  it('fails only the write that failed, with the IoError node:fs would give', async () => {
    if (!fs.existsSync('/dev/full')) return;
    const io = new NodeIo();
    const [a, b] = await openFiles(io, 2);
    const full = await io.open('/dev/full');
    const results = await Promise.allSettled([a!.pwrite(filled(10, 1), 0), full.pwritev([filled(10, 2)], 0), b!.pwrite(filled(10, 3), 0)]);
    expect(io.stats.gatheredWrites).toBe(3);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const error = (results[1] as PromiseRejectedResult).reason as IoError;
    expect(error).toBeInstanceOf(IoError);
    expect(error).toMatchObject({ code: 'SEGLOG_ERR_IO_NOSPC', errno: 'ENOSPC', syscall: 'pwritev', path: '/dev/full' });
    // The same write alone (node:fs) fails the same way.
    const alone = await full.pwritev([filled(10, 2)], 0).then(() => null, (e: unknown) => e);
    expect(alone).toMatchObject({ code: error.code, errno: error.errno, syscall: error.syscall });
    expect(fs.readFileSync(a!.path)).toEqual(filled(10, 1));
    expect(fs.readFileSync(b!.path)).toEqual(filled(10, 3));
    for (const f of [a!, b!, full]) await f.close();
  });

  it('maps EBADF (an fd closed behind its back) as node:fs would, gathered or alone', async () => {
    const io = new NodeIo();
    const [a, b, c] = await openFiles(io, 3);
    fs.closeSync(c!.fd); // nothing is opened before the writes below, so the number is not reused meanwhile
    const results = await Promise.allSettled([a!.pwrite(filled(10, 1), 0), c!.pwrite(filled(10, 2), 0), b!.pwrite(filled(10, 3), 0)]);
    expect(io.stats.gatheredWrites).toBe(3);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const gathered = (results[1] as PromiseRejectedResult).reason as IoError;
    expect(gathered).toBeInstanceOf(IoError);
    expect(gathered).toMatchObject({ errno: 'EBADF', syscall: 'pwritev', path: c!.path });
    const alone = await c!.pwrite(filled(10, 2), 0).then(() => null, (e: unknown) => e);
    expect(alone).toBeInstanceOf(IoError);
    expect(alone).toMatchObject({ code: gathered.code, errno: gathered.errno, syscall: gathered.syscall, path: gathered.path });
    expect(fs.readFileSync(a!.path)).toEqual(filled(10, 1));
    expect(fs.readFileSync(b!.path)).toEqual(filled(10, 3));
    for (const f of [a!, b!]) await f.close();
    await c!.close().catch(() => undefined); // its fd is gone already
  });

  it('close() waits for a gathered write in flight', async () => {
    const io = new NodeIo();
    const [a, b] = await openFiles(io, 2);
    const big = filled(8 * 1024 * 1024, 5);
    const writes = Promise.all([a!.pwrite(big, 0), b!.pwrite(big, 0)]);
    const closed = a!.close(); // issued while the job runs
    await writes;
    await closed;
    expect(fs.statSync(a!.path).size).toBe(big.length);
    expect(fs.readFileSync(a!.path).equals(big)).toBe(true);
    await b!.close();
  });

  it('does not gather O_DIRECT files, an injected fs, or with gatherWrites: false', async () => {
    const off = new NodeIo({ gatherWrites: false });
    const files = await openFiles(off, 3);
    await Promise.all(files.map((f, i) => f.pwrite(filled(10, i), 0)));
    expect(off.stats).toMatchObject({ gatherJobs: 0, gatheredWrites: 0 });
    const withFs = new NodeIo({ fs: realFs });
    const more = await openFiles(withFs, 3);
    await Promise.all(more.map((f, i) => f.pwrite(filled(10, i), 0)));
    expect(withFs.stats).toMatchObject({ gatherJobs: 0, gatheredWrites: 0 });
    const alignment = await NodeIo.probeDirectAlignment(dir);
    if (alignment !== null) {
      const io = new NodeIo({ directAlignment: alignment });
      const direct: IoFile[] = [];
      for (let i = 0; i < 3; i++) direct.push(await io.open(path.join(dir, `d${counter++}`), { create: true, direct: true }));
      const block = new Uint8Array(wasmMemory(alignment), 0, alignment); // page-aligned memory
      await Promise.all(direct.map((f) => f.pwrite(block, 0)));
      expect(io.stats).toMatchObject({ gatherJobs: 0, gatheredWrites: 0 });
      for (const f of direct) await f.close();
    }
    for (const f of [...files, ...more]) await f.close();
  });
});

withAddon('NodeIo startWriteback (a hint)', () => {
  const { dir, cleanup } = tempDir('writeback');
  afterAll(cleanup);

  it('passes buffered files to the addon, counts failures instead of raising them, and skips O_DIRECT files', async () => {
    const io = new NodeIo();
    const file = await io.open(path.join(dir, 'w'), { create: true });
    await file.pwrite(filled(1 << 20, 1), 0);
    file.startWriteback?.(0, 1 << 20);
    const dev = await io.open('/dev/null');
    dev.startWriteback?.(0, 1); // sync_file_range on a character device: ESPIPE, counted
    // The hint is fire-and-forget: wait (generously) for the failed one to be counted.
    for (let waited = 0; io.stats.writebackErrors === 0 && waited < 30_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(io.stats).toMatchObject({ writebacks: 2, writebackErrors: 1 });
    expect(fs.readFileSync(file.path)).toEqual(filled(1 << 20, 1));
    await file.close();
    file.startWriteback?.(0, 1); // closed: nothing
    await dev.close();
    const alignment = await NodeIo.probeDirectAlignment(dir);
    if (alignment !== null) {
      const direct = await new NodeIo({ directAlignment: alignment }).open(path.join(dir, 'd'), { create: true, direct: true });
      direct.startWriteback?.(0, alignment);
      await direct.close();
    }
    expect(io.stats.writebacks).toBe(2);
  });
});

if (!capabilities.pwritevMany) describe('NodeIo without the addon (SEGLOG_NATIVE=0)', () => {
  it('gathers nothing, hints nothing, and every write still lands', async () => {
    const { dir, cleanup } = tempDir('gather-off');
    try {
      const io = new NodeIo();
      const files: IoFile[] = [];
      for (let i = 0; i < 5; i++) files.push(await io.open(path.join(dir, `f${i}`), { create: true }));
      await Promise.all(files.map((f, i) => f.pwritev([filled(100, i + 1)], i)));
      files[0]!.startWriteback?.(0, 100);
      expect(io.stats).toMatchObject({ gatherJobs: 0, gatheredWrites: 0, writebacks: 0 });
      files.forEach((f, i) => expect(fs.readFileSync(f.path)).toEqual(Buffer.concat([Buffer.alloc(i), filled(100, i + 1)])));
      for (const f of files) await f.close();
    } finally {
      cleanup();
    }
  });
});
