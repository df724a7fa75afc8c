// NodeIo on a real temp directory: round trips, errno mapping, the short
// write/read loops (through an injected fs layer), allocate modes, close.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IoError, NodeIo } from '../src/index.js';
import type { NodeIoFs } from '../src/index.js';
import { codeOf, filled, realFs, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => void;
beforeAll(() => ({ dir, cleanup } = tempDir('node')));
afterAll(() => cleanup());

describe('NodeIo basics', () => {
  it('writes, reads, syncs, truncates and closes', async () => {
    const io = new NodeIo();
    const f = await io.open(`${dir}/a`, { create: true, exclusive: true });
    expect(f.fd).toBeGreaterThan(2);
    await f.pwrite(filled(100, 1), 0);
    await f.pwritev([filled(10, 2), filled(20, 3)], 100);
    f.pwriteSync(filled(5, 4), 130);
    await f.fdatasync();
    await f.fsync();
    expect(await f.size()).toBe(135);
    const back = Buffer.alloc(200);
    expect(await f.pread(back, 0)).toBe(135);
    expect(back.subarray(0, 135)).toEqual(Buffer.concat([filled(100, 1), filled(10, 2), filled(20, 3), filled(5, 4)]));
    expect(f.preadSync(back, 130, 10)).toBe(5);
    await f.truncate(50);
    expect((await io.stat(`${dir}/a`)).size).toBe(50);
    expect(io.openHandles()).toEqual([`${dir}/a`]);
    await f.close();
    expect(io.openHandles()).toEqual([]);
    await io.fsyncDir(dir);
    expect(await io.readdir(dir)).toContain('a');
    const st = await io.statfs(dir);
    expect(st.availableBytes).toBeGreaterThan(0);
    expect(st.totalBytes).toBeGreaterThanOrEqual(st.availableBytes);
  });

  it('maps errno to typed errors with errno, syscall and path', async () => {
    const io = new NodeIo();
    const missing = await io.open(`${dir}/missing`).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(IoError);
    expect(missing).toMatchObject({ code: 'SEGLOG_ERR_IO_NOT_FOUND', errno: 'ENOENT', syscall: 'open', path: `${dir}/missing` });
    await io.mkdir(`${dir}/sub`);
    const f = await io.open(`${dir}/sub/x`, { create: true });
    expect(await codeOf(() => io.open(`${dir}/sub/x`, { create: true, exclusive: true }))).toBe('SEGLOG_ERR_IO_EXISTS');
    expect(await codeOf(() => io.open(`${dir}/sub`, { readOnly: true }))).toBe('SEGLOG_ERR_IO_IS_DIRECTORY');
    expect(await codeOf(() => io.open(`${dir}/sub`))).toBe('SEGLOG_ERR_IO_IS_DIRECTORY');
    expect(await codeOf(() => io.readdir(`${dir}/sub/x`))).toBe('SEGLOG_ERR_IO_NOT_DIRECTORY');
    expect(await codeOf(() => io.rmdir(`${dir}/sub`))).toBe('SEGLOG_ERR_IO_NOT_EMPTY');
    expect(await codeOf(() => io.unlink(`${dir}/sub`))).toBe('SEGLOG_ERR_IO_IS_DIRECTORY');
    expect(await codeOf(() => io.mkdir(`${dir}/sub`))).toBe('SEGLOG_ERR_IO_EXISTS');
    expect(await codeOf(() => io.fsyncDir(`${dir}/nope`))).toBe('SEGLOG_ERR_IO_NOT_FOUND');
    expect(await codeOf(() => io.stat(`${dir}/nope`))).toBe('SEGLOG_ERR_IO_NOT_FOUND');
    expect(await io.exists(`${dir}/sub/x`)).toBe(true);
    expect(await io.exists(`${dir}/sub/x/y`)).toBe(false);
    const ro = await io.open(`${dir}/sub/x`, { readOnly: true });
    expect(await codeOf(() => ro.pwrite(filled(1, 1), 0))).toBe('SEGLOG_ERR_IO_READ_ONLY');
    expect(await codeOf(() => ro.truncate(0))).toBe('SEGLOG_ERR_IO_READ_ONLY');
    await ro.close();
    await f.close();
    expect(await codeOf(() => f.pwrite(filled(1, 1), 0))).toBe('SEGLOG_ERR_IO_CLOSED');
    expect(await codeOf(() => f.fdatasync())).toBe('SEGLOG_ERR_IO_CLOSED');
    expect(await codeOf(() => f.close())).toBe('SEGLOG_ERR_IO_CLOSED');
    expect(() => f.preadSync(Buffer.alloc(1), 0)).toThrow(expect.objectContaining({ code: 'SEGLOG_ERR_IO_CLOSED' }));
  });

  it('close waits for in-flight writes before closing the fd', async () => {
    const slow: NodeIoFs = { ...realFs, write: (fd, b, o, l, p, cb) => setTimeout(() => fs.write(fd, b, o, l, p, cb), 30) };
    const io = new NodeIo({ fs: slow });
    const f = await io.open(`${dir}/slow`, { create: true });
    const write = f.pwrite(filled(10, 9), 0);
    await f.close();
    await write;
    expect(fs.readFileSync(`${dir}/slow`)).toEqual(filled(10, 9));
  });
});

/** An fs layer whose writes and reads make at most a few bytes of progress, crossing iovec boundaries. */
function stingyFs(maxBytes: number): NodeIoFs {
  let turn = 0;
  const cap = (length: number): number => Math.max(1, Math.min(length, 1 + (turn++ % maxBytes)));
  return {
    write: (fd, b, o, l, p, cb) => fs.write(fd, b, o, cap(l), p, cb),
    writev: (fd, bs, p, cb) => {
      const all = Buffer.concat(bs);
      fs.write(fd, all, 0, cap(all.length), p, cb);
    },
    read: (fd, b, o, l, p, cb) => fs.read(fd, b, o, cap(l), p, cb),
    writeSync: (fd, b, o, l, p) => fs.writeSync(fd, b, o, cap(l), p),
    readSync: (fd, b, o, l, p) => fs.readSync(fd, b, o, cap(l), p),
  };
}

describe('short writes and reads', () => {
  it('pwrite, pwritev and pwriteSync loop until every byte is written', async () => {
    const io = new NodeIo({ fs: stingyFs(37) });
    const f = await io.open(`${dir}/short`, { create: true });
    const data = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7) & 0xff));
    await f.pwrite(data.subarray(0, 1000), 0);
    await f.pwritev([data.subarray(1000, 1003), data.subarray(1003, 1500), Buffer.alloc(0), data.subarray(1500, 2000)], 1000);
    f.pwriteSync(data.subarray(2000), 2000);
    expect(io.stats.shortWrites).toBeGreaterThan(50);
    const back = Buffer.alloc(3000);
    expect(await f.pread(back, 0)).toBe(3000);
    expect(back).toEqual(data);
    back.fill(0);
    expect(f.preadSync(back, 0)).toBe(3000);
    expect(back).toEqual(data);
    expect(fs.readFileSync(`${dir}/short`)).toEqual(data);
    await f.close();
  });

  it('a write that makes no progress fails with NO_PROGRESS', async () => {
    const stuck: NodeIoFs = {
      ...realFs,
      write: (_fd, _b, _o, _l, _p, cb) => setImmediate(() => cb(null, 0)),
      writev: (_fd, _bs, _p, cb) => setImmediate(() => cb(null, 0)),
      writeSync: () => 0,
    };
    const io = new NodeIo({ fs: stuck });
    const f = await io.open(`${dir}/stuck`, { create: true });
    expect(await codeOf(() => f.pwrite(filled(4, 1), 0))).toBe('SEGLOG_ERR_IO_NO_PROGRESS');
    expect(await codeOf(() => f.pwritev([filled(4, 1)], 0))).toBe('SEGLOG_ERR_IO_NO_PROGRESS');
    expect(() => f.pwriteSync(filled(4, 1), 0)).toThrow(expect.objectContaining({ code: 'SEGLOG_ERR_IO_NO_PROGRESS' }));
    await f.close();
  });

  it('a failing write surfaces as a typed error and releases the handle', async () => {
    const failing: NodeIoFs = {
      ...realFs,
      write: (_fd, _b, _o, _l, _p, cb) => setImmediate(() => cb(Object.assign(new Error('EIO'), { code: 'EIO' }), 0)),
    };
    const io = new NodeIo({ fs: failing });
    const f = await io.open(`${dir}/eio`, { create: true });
    const error = await f.pwrite(filled(4, 1), 0).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'SEGLOG_ERR_IO_EIO', kafka: 'KAFKA_STORAGE_ERROR', errno: 'EIO', path: `${dir}/eio` });
    await f.close();
  });
});

describe('allocate', () => {
  it('extends by each mode without changing existing bytes, and records the fallback', async () => {
    const io = new NodeIo();
    const f = await io.open(`${dir}/alloc`, { create: true });
    await f.pwrite(filled(100, 5), 0);
    await f.allocate(0, 4096, 'truncate');
    expect(await f.size()).toBe(4096);
    await f.allocate(1000, 8192, 'zero');
    expect(await f.size()).toBe(9192);
    await f.allocate(0, 100, 'zero'); // inside the file: nothing changes
    await f.allocate(0, 12288, 'fallocate');
    expect(await f.size()).toBe(12288);
    await f.allocate(0, 65536, 'fallocate-keep-size');
    expect(await f.size()).toBe(12288);
    const bytes = fs.readFileSync(`${dir}/alloc`);
    expect(bytes.subarray(0, 100)).toEqual(filled(100, 5));
    expect(bytes.subarray(100).every((b) => b === 0)).toBe(true);
    const { capabilities } = await import('@seglog/native');
    if (capabilities.fallocate) expect(io.stats.allocateNative).toBe(2);
    else expect(io.stats.allocateFallback).toBe(2);
    await f.close();
  });

  it('fallocate-keep-size reserves blocks past the end with the addon, and nothing without it', async () => {
    const io = new NodeIo();
    const f = await io.open(`${dir}/reserve`, { create: true });
    await f.pwrite(filled(4096, 1), 0);
    const before = fs.statSync(`${dir}/reserve`).blocks;
    await f.allocate(4096, 1 << 20, 'fallocate-keep-size');
    const after = fs.statSync(`${dir}/reserve`);
    expect(after.size).toBe(4096);
    const { capabilities } = await import('@seglog/native');
    // st_blocks counts 512-byte units: 1 MiB reserved is 2048 more.
    if (capabilities.fallocate) expect(after.blocks - before).toBeGreaterThanOrEqual(2048);
    else expect(after.blocks).toBe(before);
    await f.close();
  });
});

describe('direct alignment probe', () => {
  it('finds the O_DIRECT alignment of a disk file system (512 on the reference VM)', async () => {
    const alignment = await NodeIo.probeDirectAlignment(dir);
    // os.tmpdir() may be tmpfs elsewhere; there O_DIRECT may be refused (null).
    expect([null, 512, 1024, 2048, 4096]).toContain(alignment);
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('.seglog-direct-probe'))).toEqual([]);
  });
});
