// fallocate and fadvise against a real file on the test machine's file
// system (ext4 in CI): sizes and allocated blocks from fstat, zeroed ranges
// read back, typed errors for bad fds and unsupported modes.
import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FALLOC_FL, NativeErrorCode, POSIX_FADV, fadvise, fallocate, fallocateSync, isNativeError } from '../src/index.js';
import { patternBytes, tempDir } from './helpers.js';

const MiB = 1 << 20;
const native = process.env['SEGLOG_NATIVE'] === '0' ? describe.skip : describe;

function allocatedBytes(fd: number): number {
  return fstatSync(fd).blocks * 512; // st_blocks counts 512-byte units
}

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return new Error('did not throw');
}

native('fallocate and fadvise (native addon)', () => {
  const dir = tempDir('fallocate');
  let counter = 0;
  const openNew = (): number => openSync(join(dir.path, `f${counter++}`), constants.O_RDWR | constants.O_CREAT | constants.O_EXCL);

  afterAll(() => dir.remove());

  it('are available on this platform', () => {
    expect(fallocate).not.toBeNull();
    expect(fallocateSync).not.toBeNull();
    expect(fadvise).not.toBeNull();
  });

  it('mode 0 grows the file and allocates its blocks (sync and async)', async () => {
    const fd = openNew();
    try {
      expect(allocatedBytes(fd)).toBe(0);
      fallocateSync!(fd, 0, 0, 2 * MiB);
      expect(fstatSync(fd).size).toBe(2 * MiB);
      expect(allocatedBytes(fd)).toBeGreaterThanOrEqual(2 * MiB);
      await fallocate!(fd, 0, 2 * MiB, 3 * MiB);
      expect(fstatSync(fd).size).toBe(5 * MiB);
      expect(allocatedBytes(fd)).toBeGreaterThanOrEqual(5 * MiB);
      const probe = Buffer.alloc(4096, 0xaa);
      expect(readSync(fd, probe, 0, probe.length, 4 * MiB)).toBe(4096);
      expect(probe.every((b) => b === 0)).toBe(true); // unwritten extents read as zeros
    } finally {
      closeSync(fd);
    }
  });

  it('KEEP_SIZE allocates beyond the end without changing the size', async () => {
    const fd = openNew();
    try {
      writeSync(fd, Buffer.alloc(1000, 1), 0, 1000, 0);
      await fallocate!(fd, FALLOC_FL.KEEP_SIZE, 0, 4 * MiB);
      expect(fstatSync(fd).size).toBe(1000);
      expect(allocatedBytes(fd)).toBeGreaterThanOrEqual(4 * MiB);
    } finally {
      closeSync(fd);
    }
  });

  it('PUNCH_HOLE | KEEP_SIZE frees blocks and reads back zeros; ZERO_RANGE zeroes', async () => {
    const fd = openNew();
    try {
      const data = patternBytes(4 * MiB, 7);
      writeSync(fd, data, 0, data.length, 0);
      const before = allocatedBytes(fd);
      await fallocate!(fd, FALLOC_FL.PUNCH_HOLE | FALLOC_FL.KEEP_SIZE, MiB, MiB);
      expect(fstatSync(fd).size).toBe(4 * MiB);
      expect(allocatedBytes(fd)).toBeLessThanOrEqual(before - MiB);
      const back = Buffer.alloc(4 * MiB);
      readSync(fd, back, 0, back.length, 0);
      expect(back.subarray(MiB, 2 * MiB).every((b) => b === 0)).toBe(true);
      expect(back.subarray(0, MiB).equals(data.subarray(0, MiB))).toBe(true);
      expect(back.subarray(2 * MiB).equals(data.subarray(2 * MiB))).toBe(true);

      const zeroed = await fallocate!(fd, FALLOC_FL.ZERO_RANGE, 3 * MiB + 5, 100).then(() => true, (e: unknown) => e);
      if (zeroed !== true) {
        // Not every file system has ZERO_RANGE (tmpfs does not): that is a typed
        // EOPNOTSUPP, named ENOTSUP like node:fs does (libuv's name for errno 95).
        expect(isNativeError(zeroed) && zeroed.errno).toBe('ENOTSUP');
        return;
      }
      readSync(fd, back, 0, back.length, 0);
      expect(back.subarray(3 * MiB + 5, 3 * MiB + 105).every((b) => b === 0)).toBe(true);
      expect(back[3 * MiB + 4]).toBe(data[3 * MiB + 4]);
      expect(back[3 * MiB + 105]).toBe(data[3 * MiB + 105]);
    } finally {
      closeSync(fd);
    }
  });

  it('reports errno failures as NativeErrors: EBADF, EOPNOTSUPP/ENOTSUP (PUNCH_HOLE without KEEP_SIZE)', async () => {
    const syncError = caught(() => fallocateSync!(999_999, 0, 0, 4096));
    expect(isNativeError(syncError)).toBe(true);
    if (!isNativeError(syncError)) return;
    expect(syncError.code).toBe(NativeErrorCode.fallocate);
    expect(syncError.errno).toBe('EBADF');
    expect(syncError.syscall).toBe('fallocate');
    expect(syncError.context).toMatchObject({ fd: 999_999, offset: 0, length: 4096 });

    const asyncError = await fallocate!(999_999, 0, 0, 4096).catch((e: unknown) => e);
    expect(isNativeError(asyncError) && asyncError.errno).toBe('EBADF');

    const readOnly = openSync(join(dir.path, 'ro'), 'w');
    closeSync(readOnly);
    const fd = openSync(join(dir.path, 'ro'), 'r');
    try {
      const notWritable = await fallocate!(fd, 0, 0, 4096).catch((e: unknown) => e);
      expect(isNativeError(notWritable) && notWritable.errno).toBe('EBADF');
    } finally {
      closeSync(fd);
    }

    const rw = openNew();
    try {
      const unsupported = caught(() => fallocateSync!(rw, FALLOC_FL.PUNCH_HOLE, 0, 4096));
      expect(isNativeError(unsupported) && unsupported.errno).toBe('ENOTSUP'); // EOPNOTSUPP, named as node:fs does
    } finally {
      closeSync(rw);
    }
  });

  it('rejects bad arguments with an assertion before any syscall', () => {
    expect(() => fallocateSync!(-1, 0, 0, 1)).toThrow(/fd/);
    expect(() => fallocateSync!(3, 0x100, 0, 1)).toThrow(/mode/);
    expect(() => fallocateSync!(3, 0, -1, 1)).toThrow(/offset/);
    expect(() => fallocateSync!(3, 0, 0, 0)).toThrow(/length/);
    expect(() => fallocate!(3, 0, 2 ** 53, 1)).toThrow(/offset/);
  });

  it('fadvise accepts every advice and reports EBADF', () => {
    const fd = openNew();
    try {
      writeSync(fd, Buffer.alloc(8192, 3), 0, 8192, 0);
      for (const advice of Object.values(POSIX_FADV)) fadvise!(fd, 0, 0, advice);
    } finally {
      closeSync(fd);
    }
    const error = caught(() => fadvise!(999_999, 0, 0, POSIX_FADV.DONTNEED));
    expect(isNativeError(error) && error.code === NativeErrorCode.fadvise && error.errno).toBe('EBADF');
    expect(() => fadvise!(0, 0, 0, 6 as never)).toThrow(/advice/);
  });
});
