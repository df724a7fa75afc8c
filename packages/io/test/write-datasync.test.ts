// pwritevDatasync: the write and the fdatasync as one call. SimIo: two crash
// points (the write's, then the sync's), so a crash between them loses the
// unsynced bytes exactly as if the sync never ran and never acknowledges;
// injected write and sync faults. NodeIo: the addon's one-job path and the
// write-then-fdatasync fallback (an injected fs with short writes) put the
// same bytes on disk and map errors to the same codes.
import fs from 'node:fs';
import path from 'node:path';
import { capabilities } from '@seglog/native';
import { describe, expect, it } from 'vitest';
import { CrashMode, NodeIo, SimIo } from '../src/index.js';
import type { IoFile, NodeIoFs } from '../src/index.js';
import { codeOf, filled, tempDir } from './helpers.js';

const D = '/data';

async function withDurablePrefix(options: ConstructorParameters<typeof SimIo>[0] = {}): Promise<{ io: SimIo; file: IoFile; prefix: Buffer }> {
  const io = new SimIo(options);
  await io.mkdir(D, { recursive: true });
  await io.fsyncDir('/');
  const file = await io.open(`${D}/log`, { create: true });
  await io.fsyncDir(D);
  const prefix = filled(1000, 0xaa);
  await file.pwritevDatasync([prefix], 0);
  return { io, file, prefix };
}

describe('SimIo pwritevDatasync', () => {
  it('makes the write and every earlier write durable', async () => {
    const { io, file, prefix } = await withDurablePrefix();
    await file.pwrite(filled(100, 1), 1000); // unsynced
    await file.pwritevDatasync([filled(50, 2), filled(25, 3)], 1100);
    expect(io.pendingOperations()).toBe(0);
    const after = io.recover(CrashMode.powerClean);
    expect(await after.readFile(`${D}/log`)).toEqual(Buffer.concat([prefix, filled(100, 1), filled(50, 2), filled(25, 3)]));
  });

  it('is two crash points, the write then the sync', async () => {
    const ops: string[] = [];
    const { file } = await withDurablePrefix({ onCrashPoint: (p) => void ops.push(p.op) });
    ops.length = 0;
    await file.pwritevDatasync([filled(10, 1)], 1000);
    expect(ops).toEqual(['pwritev', 'fdatasync']);
    ops.length = 0;
    await file.pwritevDatasync([], 0);
    expect(ops).toEqual(['fdatasync']);
  });

  it('a crash between the write and the sync rejects and loses the unsynced bytes on power loss, as if the sync never ran', async () => {
    let armed = false;
    const { io, file, prefix } = await withDurablePrefix({ onCrashPoint: (p) => armed && p.op === 'fdatasync' });
    armed = true;
    const write = filled(3000, 0xbb);
    expect(await codeOf(() => file.pwritevDatasync([write], 1000))).toBe('SEGLOG_ERR_IO_CRASHED');
    expect(io.halted).toBe(true);
    // kill -9: the page cache survives (the write completed), still not durable.
    const process = io.recover(CrashMode.process);
    expect(await process.readFile(`${D}/log`)).toEqual(Buffer.concat([prefix, write]));
    expect(process.pendingOperations()).toBeGreaterThan(0);
    expect(await process.recover(CrashMode.powerClean).readFile(`${D}/log`)).toEqual(prefix);
    expect(await io.recover(CrashMode.powerClean).readFile(`${D}/log`)).toEqual(prefix);
    // Chaotic and ordered power loss: the durable prefix always survives, the unsynced write may or may not (or torn).
    for (let seed = 1; seed <= 40; seed++) {
      for (const mode of [CrashMode.powerChaotic, CrashMode.powerOrdered]) {
        const bytes = await io.recover(mode, { seed }).readFile(`${D}/log`);
        expect(bytes.subarray(0, 1000)).toEqual(prefix);
        expect(bytes.length).toBeLessThanOrEqual(4000);
      }
    }
  });

  it('a crash at the write leaves nothing of it, even in the page cache', async () => {
    let armed = false;
    const { io, file, prefix } = await withDurablePrefix({ onCrashPoint: (p) => armed && p.op === 'pwritev' });
    armed = true;
    expect(await codeOf(() => file.pwritevDatasync([filled(10, 1)], 1000))).toBe('SEGLOG_ERR_IO_CRASHED');
    expect(await io.recover(CrashMode.process).readFile(`${D}/log`)).toEqual(prefix);
  });

  it('a failed write never syncs: an earlier unsynced write stays pending', async () => {
    const { io, file, prefix } = await withDurablePrefix({ faults: { writeEio: { nth: 3 } } });
    await file.pwrite(filled(100, 1), 1000); // write 2 (the prefix was 1): unsynced
    const error = await file.pwritevDatasync([filled(10, 2)], 1100).then(() => null, (e: unknown) => e);
    expect(error).toMatchObject({ code: 'SEGLOG_ERR_IO_EIO', syscall: 'pwritev' });
    expect(await io.recover(CrashMode.powerClean).readFile(`${D}/log`)).toEqual(prefix);
  });

  it('a failed sync rejects from fdatasync; the written bytes are visible but not durable (fsyncgate)', async () => {
    const { io, file, prefix } = await withDurablePrefix({ faults: { syncEio: { nth: 2, path: `${D}/log` } } });
    const error = await file.pwritevDatasync([filled(10, 2)], 1000).then(() => null, (e: unknown) => e);
    expect(error).toMatchObject({ code: 'SEGLOG_ERR_IO_EIO', syscall: 'fdatasync' });
    expect(await file.size()).toBe(1010);
    expect(await io.recover(CrashMode.powerClean).readFile(`${D}/log`)).toEqual(prefix);
  });
});

describe('NodeIo pwritevDatasync', () => {
  /** node:fs with every positional write cut to at most 7 bytes (so the fallback loops). */
  const shortFs = {
    write: (fd: number, b: Uint8Array, o: number, l: number, p: number, cb: (e: NodeJS.ErrnoException | null, n: number) => void) => fs.write(fd, b, o, Math.min(l, 7), p, cb),
    writev: (fd: number, bs: readonly Uint8Array[], p: number, cb: (e: NodeJS.ErrnoException | null, n: number) => void) => {
      const first = bs.find((b) => b.byteLength > 0) ?? new Uint8Array(0);
      fs.write(fd, first, 0, Math.min(first.byteLength, 7), p, cb);
    },
    read: fs.read, writeSync: fs.writeSync, readSync: fs.readSync,
  } as unknown as NodeIoFs;

  it('the addon path and the fallback (short writes) write the same bytes and agree on errors', async () => {
    const { dir, cleanup } = tempDir('write-datasync');
    const native = new NodeIo();
    const fallback = new NodeIo({ fs: shortFs });
    try {
      const results: Array<{ bytes: Buffer; codes: string[] }> = [];
      for (const io of [native, fallback]) {
        const p = path.join(dir, io === native ? 'native' : 'fallback');
        const file = await io.open(p, { create: true });
        await file.pwritevDatasync([filled(100, 1), filled(0, 0), filled(33, 2)], 0);
        await file.pwritevDatasync([filled(5000, 3)], 200);
        await file.pwritevDatasync([], 0);
        const readOnly = await io.open(p, { readOnly: true });
        const codes = [await codeOf(() => readOnly.pwritevDatasync([filled(1, 1)], 0))];
        await readOnly.close();
        await file.close();
        codes.push(await codeOf(() => file.pwritevDatasync([filled(1, 1)], 0)));
        results.push({ bytes: fs.readFileSync(p), codes });
      }
      expect(results[1]).toEqual(results[0]);
      expect(results[0]!.bytes.length).toBe(5200);
      expect(results[0]!.codes).toEqual(['SEGLOG_ERR_IO_READ_ONLY', 'SEGLOG_ERR_IO_CLOSED']);
      expect(fallback.stats.writeSyncNative).toBe(0);
      expect(fallback.stats.shortWrites).toBeGreaterThan(0);
      if (capabilities.pwritevDatasync) expect(native.stats.writeSyncNative).toBe(2);
      else expect(native.stats.writeSyncFallback).toBe(2);
    } finally {
      cleanup();
    }
  });

  it('maps a misaligned O_DIRECT write to SEGLOG_ERR_IO_INVALID_ALIGNMENT on both paths', async () => {
    const { dir, cleanup } = tempDir('write-datasync-direct');
    try {
      for (const io of [new NodeIo(), new NodeIo({ fs: shortFs })]) {
        let file: IoFile;
        try {
          file = await io.open(path.join(dir, `d${io.stats.writeSyncNative}${Math.random()}`), { create: true, direct: true });
        } catch {
          return; // O_DIRECT refused here (tmpfs)
        }
        // Position and length aligned, the buffer (a plain Buffer) only by chance: the kernel decides.
        expect(await codeOf(() => file.pwritevDatasync([filled(4096, 1)], 1))).toBe('SEGLOG_ERR_IO_INVALID_ALIGNMENT');
        await file.close();
      }
    } finally {
      cleanup();
    }
  });
});
