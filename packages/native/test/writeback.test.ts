// startWriteback (sync_file_range SYNC_FILE_RANGE_WRITE on the threadpool):
// resolves on a regular file with dirty pages and leaves its bytes as they
// were; a descriptor it cannot serve is a typed error (EBADF for a closed fd,
// ESPIPE for a character device); bad arguments are TypeErrors.
import { closeSync, constants, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NativeErrorCode, startWriteback } from '../src/index.js';
import { patternBytes, tempDir } from './helpers.js';

const native = process.env['SEGLOG_NATIVE'] === '0' ? describe.skip : describe;

native('startWriteback (native addon)', () => {
  const dir = tempDir('writeback');
  afterAll(() => dir.remove());

  it('starts the writeback of a dirty range and changes no byte', async () => {
    expect(startWriteback).not.toBeNull();
    const file = join(dir.path, 'f');
    const fd = openSync(file, constants.O_RDWR | constants.O_CREAT);
    try {
      const bytes = patternBytes(3 * 1024 * 1024, 3);
      writeSync(fd, bytes, 0, bytes.length, 0);
      await startWriteback!(fd, 0, 1024 * 1024);
      await startWriteback!(fd, 1024 * 1024, 10 * 1024 * 1024); // past the end: fine
      expect(readFileSync(file).equals(bytes)).toBe(true);
    } finally {
      closeSync(fd);
    }
  });

  it('rejects with a typed error for a closed fd or a character device', async () => {
    const fd = openSync(join(dir.path, 'closed'), 'w');
    closeSync(fd);
    const ebadf = await startWriteback!(fd, 0, 1).then(() => null, (e: unknown) => e);
    expect(ebadf).toMatchObject({ code: NativeErrorCode.writeback, errno: 'EBADF' });
    if (existsSync('/dev/null')) {
      const dev = openSync('/dev/null', 'w');
      try {
        const espipe = await startWriteback!(dev, 0, 1).then(() => null, (e: unknown) => e);
        expect(espipe).toMatchObject({ code: NativeErrorCode.writeback, errno: 'ESPIPE', syscall: 'sync_file_range' });
      } finally {
        closeSync(dev);
      }
    }
  });

  it('refuses bad arguments with a TypeError or an assertion', () => {
    expect(() => startWriteback!(-1, 0, 1)).toThrow(/fd must be/);
    expect(() => startWriteback!(0, -1, 1)).toThrow(/offset must be/);
    expect(() => startWriteback!(0, 0, 0)).toThrow(/length must be/);
  });
});
