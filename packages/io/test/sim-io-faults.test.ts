// SimIo injected faults (reliability.md §3.4), O_DIRECT checks and handle hygiene.
import { describe, expect, it } from 'vitest';
import { AlignedArena, CrashMode, IoError, SimIo } from '../src/index.js';
import type { SimFaults } from '../src/index.js';
import { codeOf, filled } from './helpers.js';

const D = '/d';

async function withFile(faults: SimFaults, options: { direct?: boolean } = {}) {
  const io = new SimIo({ faults, seed: 7 });
  await io.mkdir(D);
  const file = await io.open(`${D}/f`, { create: true, ...(options.direct === true ? { direct: true } : {}) });
  return { io, file };
}

describe('write faults', () => {
  it('EIO on the n-th write surfaces as a typed storage error', async () => {
    const { io, file } = await withFile({ writeEio: { nth: 2 } });
    await file.pwrite(filled(10, 1), 0);
    const error = await file.pwrite(filled(10, 2), 10).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IoError);
    expect(error).toMatchObject({
      code: 'SEGLOG_ERR_IO_EIO', kafka: 'KAFKA_STORAGE_ERROR', errno: 'EIO', syscall: 'pwrite', path: `${D}/f`,
    });
    expect((error as IoError).context).toMatchObject({ path: `${D}/f`, errno: 'EIO', syscall: 'pwrite' });
    await file.pwrite(filled(10, 3), 10); // transient: the third write works
    expect(io.injected.writeEio).toBe(1);
  });

  it('a persistent fault keeps failing; a path filter spares other files', async () => {
    const io = new SimIo({ faults: { writeEio: { nth: 1, persistent: true, path: /\.log$/ } } });
    const log = await io.open('/x.log', { create: true });
    const idx = await io.open('/x.index', { create: true });
    for (let i = 0; i < 3; i++) expect(await codeOf(() => log.pwrite(filled(1, 1), 0))).toBe('SEGLOG_ERR_IO_EIO');
    await idx.pwrite(filled(1, 1), 0);
    expect(io.injected.writeEio).toBe(3);
  });

  it('short writes are looped to completion', async () => {
    const { io, file } = await withFile({ shortWrite: { probability: 1 } });
    const data = Buffer.from(Array.from({ length: 3000 }, (_, i) => i & 0xff));
    await file.pwritev([data.subarray(0, 1000), data.subarray(1000)], 5);
    expect(io.injected.shortWrite).toBeGreaterThan(2);
    const back = Buffer.alloc(3000);
    expect(await file.pread(back, 5)).toBe(3000);
    expect(back).toEqual(data);
  });

  it('a write that makes no progress fails with NO_PROGRESS', async () => {
    const { file } = await withFile({ zeroWrite: { nth: 1 } });
    expect(await codeOf(() => file.pwrite(filled(10, 1), 0))).toBe('SEGLOG_ERR_IO_NO_PROGRESS');
  });

  it('EIO after a partial write leaves the partial bytes visible', async () => {
    // nth counts low-level writes: the first is cut short, the second fails.
    const { file } = await withFile({ shortWrite: { nth: 1 }, writeEio: { nth: 2 } });
    expect(await codeOf(() => file.pwrite(filled(100, 5), 0))).toBe('SEGLOG_ERR_IO_EIO');
    const size = await file.size();
    expect(size).toBeGreaterThan(0);
    expect(size).toBeLessThan(100);
  });

  it('ENOSPC by byte quota: the bytes that fit land, then a typed error', async () => {
    const { io, file } = await withFile({ quotaBytes: 1000 });
    await file.pwrite(filled(600, 1), 0);
    const error = await file.pwrite(filled(600, 2), 600).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'SEGLOG_ERR_IO_NOSPC', kafka: 'KAFKA_STORAGE_ERROR', errno: 'ENOSPC' });
    expect(await file.size()).toBe(1000);
    expect(await codeOf(() => file.truncate(2000))).toBe('SEGLOG_ERR_IO_NOSPC');
    expect(await codeOf(() => file.allocate(0, 4096, 'zero'))).toBe('SEGLOG_ERR_IO_NOSPC');
    expect(await codeOf(() => io.open(`${D}/g`, { create: true }))).toBe('SEGLOG_ERR_IO_NOSPC');
    expect(await codeOf(() => io.mkdir(`${D}/sub`))).toBe('SEGLOG_ERR_IO_NOSPC');
    expect((await io.statfs(D)).availableBytes).toBe(0);
    await file.truncate(100); // shrinking frees space
    await io.mkdir(`${D}/sub`);
    expect(io.injected.nospc).toBe(5);
  });
});

describe('sync faults', () => {
  it('EIO on fdatasync drops the pending writes from durable state but keeps them visible (fsyncgate)', async () => {
    const { io, file } = await withFile({ syncEio: { nth: 1, path: `${D}/f` } });
    await io.fsyncDir('/');
    await io.fsyncDir(D);
    await file.pwrite(filled(50, 4), 0);
    expect(await codeOf(() => file.fdatasync())).toBe('SEGLOG_ERR_IO_EIO');
    expect(await file.size()).toBe(50);
    await file.fdatasync(); // the error is reported once; this "succeeds" with nothing to write
    const after = io.recover(CrashMode.powerClean);
    expect(await after.readFile(`${D}/f`)).toEqual(Buffer.alloc(0));
  });

  it('EIO on fsyncDir leaves the entries pending', async () => {
    const io = new SimIo({ faults: { syncEio: { nth: 1, path: (p) => p === '/' } } });
    await io.mkdir(D);
    expect(await codeOf(() => io.fsyncDir('/'))).toBe('SEGLOG_ERR_IO_EIO');
    expect(await io.recover(CrashMode.powerClean).exists(D)).toBe(false);
  });
});

describe('read faults', () => {
  it('EIO on pread and readFile', async () => {
    const { file, io } = await withFile({ readEio: { nth: 1, persistent: true } });
    await file.pwrite(filled(10, 1), 0);
    expect(await codeOf(() => file.pread(Buffer.alloc(10), 0))).toBe('SEGLOG_ERR_IO_EIO');
    expect(() => file.preadSync(Buffer.alloc(10), 0)).toThrow(expect.objectContaining({ code: 'SEGLOG_ERR_IO_EIO' }));
    expect(await codeOf(() => io.readFile(`${D}/f`))).toBe('SEGLOG_ERR_IO_EIO');
  });

  it('silent corruption flips exactly one bit of what a read returns', async () => {
    const { file, io } = await withFile({ readCorruption: { nth: 1 } });
    const data = filled(256, 0x0f);
    await file.pwrite(data, 0);
    const back = Buffer.alloc(256);
    expect(await file.pread(back, 0)).toBe(256);
    let bits = 0;
    for (let i = 0; i < 256; i++) bits += popcount((back[i] as number) ^ (data[i] as number));
    expect(bits).toBe(1);
    expect(io.injected.readCorruption).toBe(1);
    expect(await io.readFile(`${D}/f`)).toEqual(data); // the stored bytes are intact
  });

  it('reports an error if and only if a fault was injected (SQLite do_ioerr_test loop)', async () => {
    for (let n = 1; ; n++) {
      const io = new SimIo({ faults: { writeEio: { nth: n } } });
      let failed = false;
      try {
        await io.mkdir(D);
        const f = await io.open(`${D}/f`, { create: true });
        for (let i = 0; i < 5; i++) await f.pwritev([filled(100, i), filled(50, i)], i * 150);
      } catch {
        failed = true;
      }
      expect(failed).toBe(io.injected.writeEio > 0);
      if (!failed) {
        expect(n).toBe(11); // 5 pwritev calls × 2 iovecs = 10 writes, so n = 11 never fires
        break;
      }
    }
  });
});

function popcount(x: number): number {
  let n = 0;
  for (let v = x; v !== 0; v &= v - 1) n++;
  return n;
}

describe('O_DIRECT checks', () => {
  const arena = new AlignedArena({ chunkBytes: 8192, chunkCount: 2 });

  it('accepts arena chunks at aligned positions and rejects everything else', async () => {
    const { file } = await withFile({}, { direct: true });
    const chunk = arena.acquire() as Buffer;
    chunk.fill(3);
    await file.pwrite(chunk, 4096);
    await file.pwrite(chunk.subarray(4096), 0);
    expect(await file.pread(chunk, 0)).toBe(8192);
    const plain = Buffer.alloc(4096);
    expect(await codeOf(() => file.pwrite(plain, 0))).toBe('SEGLOG_ERR_IO_INVALID_ALIGNMENT');
    expect(await codeOf(() => file.pwrite(chunk.subarray(512, 4608), 0))).toBe('SEGLOG_ERR_IO_INVALID_ALIGNMENT');
    expect(await codeOf(() => file.pwrite(chunk.subarray(0, 4096), 512))).toBe('SEGLOG_ERR_IO_INVALID_ALIGNMENT');
    expect(await codeOf(() => file.pwrite(chunk.subarray(0, 1000), 0))).toBe('SEGLOG_ERR_IO_INVALID_ALIGNMENT');
    expect(await codeOf(() => file.pwritev([chunk.subarray(0, 4096), plain], 0))).toBe('SEGLOG_ERR_IO_INVALID_ALIGNMENT');
    expect(await codeOf(() => file.pread(plain, 0))).toBe('SEGLOG_ERR_IO_INVALID_ALIGNMENT');
    arena.release(chunk);
  });

  it('with directAlignment 512, a 512-aligned view of an arena chunk passes', async () => {
    const io = new SimIo({ directAlignment: 512 });
    const f = await io.open('/f', { create: true, direct: true });
    const chunk = arena.acquire() as Buffer;
    await f.pwrite(chunk.subarray(512, 1536), 512);
    expect(await codeOf(() => f.pwrite(chunk.subarray(16, 528), 0))).toBe('SEGLOG_ERR_IO_INVALID_ALIGNMENT');
    arena.release(chunk);
  });
});

describe('handles', () => {
  it('lists open handles until closed; closed and read-only handles refuse work', async () => {
    const io = new SimIo();
    const a = await io.open('/a', { create: true });
    const b = await io.open('/a', { readOnly: true });
    expect(io.openHandles()).toEqual(['/a', '/a']);
    expect(await codeOf(() => b.pwrite(filled(1, 1), 0))).toBe('SEGLOG_ERR_IO_READ_ONLY');
    expect(await codeOf(() => b.truncate(0))).toBe('SEGLOG_ERR_IO_READ_ONLY');
    await a.close();
    await b.close();
    expect(io.openHandles()).toEqual([]);
    expect(await codeOf(() => a.pwrite(filled(1, 1), 0))).toBe('SEGLOG_ERR_IO_CLOSED');
    expect(await codeOf(() => a.close())).toBe('SEGLOG_ERR_IO_CLOSED');
  });

  it('an unlinked file stays usable through its handle until a crash', async () => {
    const io = new SimIo();
    const a = await io.open('/a', { create: true });
    await a.pwrite(filled(3, 1), 0);
    await io.unlink('/a');
    await a.pwrite(filled(3, 2), 3);
    const back = Buffer.alloc(6);
    expect(await a.pread(back, 0)).toBe(6);
    expect(await io.exists('/a')).toBe(false);
    const after = io.recover(CrashMode.process);
    expect(await after.readdir('/')).toEqual([]);
  });
});
