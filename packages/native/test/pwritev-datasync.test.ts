// pwritevDatasync against a real file: the bytes land at their position in
// iovec order, the array may be reused at once, errors are typed with the
// failing syscall (EBADF before anything, EINVAL from a misaligned O_DIRECT
// write: nothing synced), and the fallback-free contract holds for 1..IOV_MAX
// buffers.
import { closeSync, constants, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NativeErrorCode, isNativeError, pwritevDatasync } from '../src/index.js';
import { patternBytes, tempDir } from './helpers.js';

const native = process.env['SEGLOG_NATIVE'] === '0' ? describe.skip : describe;

native('pwritevDatasync (native addon)', () => {
  const dir = tempDir('pwritev-datasync');
  let counter = 0;
  const path = (): string => join(dir.path, `f${counter++}`);

  afterAll(() => dir.remove());

  /** Runs `body` on a new file opened read-write, closing its fd afterwards. */
  async function withFile(body: (fd: number, file: string) => Promise<void>): Promise<void> {
    const file = path();
    const fd = openSync(file, constants.O_RDWR | constants.O_CREAT);
    try {
      await body(fd, file);
    } finally {
      closeSync(fd);
    }
  }

  it('is available on this platform', () => {
    expect(pwritevDatasync).not.toBeNull();
  });

  it('writes every buffer at its position, in order, and syncs', () => withFile(async (fd, file) => {
    const a = patternBytes(1000, 1);
    const b = patternBytes(0, 2);
    const c = patternBytes(70_000, 3);
    await pwritevDatasync!(fd, [a, b, c], 0);
    const d = patternBytes(5, 4);
    await pwritevDatasync!(fd, [d], 71_000 + 10); // a hole of 10 bytes reads as zeros
    const expected = Buffer.concat([a, c, Buffer.alloc(10), d]);
    expect(readFileSync(file).equals(expected)).toBe(true);
  }));

  it('copies the iovecs: the caller may reuse its array at once', () => withFile(async (fd, file) => {
    const iov: Uint8Array[] = [Buffer.from('hello '), Buffer.from('world')];
    const done = pwritevDatasync!(fd, iov, 3);
    iov.length = 0;
    iov.push(Buffer.from('XXXXXXXXXXXXXXXX'));
    await done;
    expect(readFileSync(file).toString('latin1')).toBe('\0\0\0hello world');
  }));

  it('takes up to 1024 buffers (IOV_MAX)', () => withFile(async (fd, file) => {
    const buffers = Array.from({ length: 1024 }, (_, i) => patternBytes(7, i));
    await pwritevDatasync!(fd, buffers, 0);
    expect(readFileSync(file).equals(Buffer.concat(buffers))).toBe(true);
  }));

  it('rejects a closed fd with a typed error naming the write, having written nothing', async () => {
    const fd = openSync(path(), constants.O_RDWR | constants.O_CREAT);
    closeSync(fd);
    const error = await pwritevDatasync!(fd, [Buffer.from('x')], 0).then(() => null, (e: unknown) => e);
    expect(isNativeError(error)).toBe(true);
    expect(error).toMatchObject({ code: NativeErrorCode.pwritevDatasync, errno: 'EBADF', syscall: 'pwritev' });
  });

  it('a failed write never syncs: a misaligned O_DIRECT write rejects from pwritev (EINVAL)', async () => {
    let fd: number;
    try {
      fd = openSync(path(), constants.O_RDWR | constants.O_CREAT | (constants as { O_DIRECT?: number }).O_DIRECT!);
    } catch {
      return; // the file system refuses O_DIRECT (tmpfs): nothing to check here
    }
    try {
      const error = await pwritevDatasync!(fd, [Buffer.alloc(100)], 1).then(() => null, (e: unknown) => e);
      expect(error).toMatchObject({ code: NativeErrorCode.pwritevDatasync, errno: 'EINVAL', syscall: 'pwritev' });
      expect((error as { context: { bytesWritten: number } }).context.bytesWritten).toBe(0);
    } finally {
      closeSync(fd);
    }
  });

  it('checks its arguments before touching the fd', () => {
    expect(() => pwritevDatasync!(-1, [Buffer.from('x')], 0)).toThrow(/fd must be/);
    expect(() => pwritevDatasync!(0, [], 0)).toThrow(/1\.\.1024 buffers/);
    expect(() => pwritevDatasync!(0, [Buffer.from('x')], -1)).toThrow(/position must be/);
  });
});
