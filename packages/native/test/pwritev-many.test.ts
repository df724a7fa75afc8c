// pwritevMany against real files: every write's bytes land at its position in
// its file (iovec order kept), writes to one file run in order, a failing
// write (EBADF, ENOSPC on /dev/full, ESPIPE on a pipe) gets its own typed
// error and never stops the others, and bad arguments are TypeErrors before
// anything is written.
import { closeSync, constants, existsSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NativeErrorCode, isNativeError, pwritevMany } from '../src/index.js';
import { patternBytes, tempDir } from './helpers.js';

const native = process.env['SEGLOG_NATIVE'] === '0' ? describe.skip : describe;

native('pwritevMany (native addon)', () => {
  const dir = tempDir('pwritev-many');
  let counter = 0;
  const fds: number[] = [];
  const open = (): { fd: number; file: string } => {
    const file = join(dir.path, `f${counter++}`);
    const fd = openSync(file, constants.O_RDWR | constants.O_CREAT);
    fds.push(fd);
    return { fd, file };
  };

  afterAll(() => {
    for (const fd of fds) closeSync(fd);
    dir.remove();
  });

  it('is available on this platform', () => {
    expect(pwritevMany).not.toBeNull();
  });

  it('writes every entry to its file at its position', async () => {
    const files = Array.from({ length: 5 }, () => open());
    const parts = files.map((_, i) => [patternBytes(1000 + i, i + 1), patternBytes(70_000, i + 11), patternBytes(3, i + 21)]);
    const slots = await pwritevMany!(files.map((f, i) => ({ fd: f.fd, position: 10 * i, buffers: parts[i]! })));
    expect(slots).toEqual([null, null, null, null, null]);
    files.forEach((f, i) => {
      expect(readFileSync(f.file)).toEqual(Buffer.concat([Buffer.alloc(10 * i), ...parts[i]!]));
    });
  });

  it('runs the writes of one file in order (a later write over an earlier one wins)', async () => {
    const f = open();
    const slots = await pwritevMany!([
      { fd: f.fd, position: 0, buffers: [Buffer.from('aaaaaaaa')] },
      { fd: f.fd, position: 4, buffers: [Buffer.from('bb')] },
      { fd: f.fd, position: 8, buffers: [Buffer.from('cc')] },
    ]);
    expect(slots).toEqual([null, null, null]);
    expect(readFileSync(f.file, 'latin1')).toBe('aaaabbaacc');
  });

  it('gives a failing write its own error and still runs the others', async () => {
    const a = open();
    const b = open();
    const full = existsSync('/dev/full') ? openSync('/dev/full', 'w') : -1;
    if (full >= 0) fds.push(full);
    const closed = openSync(join(dir.path, 'closed'), 'w');
    closeSync(closed);
    const writes = [
      { fd: a.fd, position: 0, buffers: [Buffer.from('first')] },
      { fd: closed, position: 0, buffers: [Buffer.from('x')] },
      ...(full >= 0 ? [{ fd: full, position: 0, buffers: [Buffer.from('y')] }] : []),
      { fd: b.fd, position: 2, buffers: [Buffer.from('last')] },
    ];
    const slots = await pwritevMany!(writes);
    expect(slots[0]).toBeNull();
    expect(slots[slots.length - 1]).toBeNull();
    const ebadf = slots[1];
    expect(isNativeError(ebadf)).toBe(true);
    expect(ebadf).toMatchObject({ code: NativeErrorCode.pwritevMany, errno: 'EBADF', syscall: 'pwritev', context: { fd: closed, bytesWritten: 0 } });
    if (full >= 0) expect(slots[2]).toMatchObject({ code: NativeErrorCode.pwritevMany, errno: 'ENOSPC', syscall: 'pwritev' });
    expect(readFileSync(a.file, 'latin1')).toBe('first');
    expect(readFileSync(b.file, 'latin1')).toBe('\0\0last');
  });

  it('takes 1..IOV_MAX buffers per write and rejects bad arguments before writing', async () => {
    const f = open();
    const many = Array.from({ length: 1024 }, (_, i) => Buffer.from([i & 0xff]));
    expect(await pwritevMany!([{ fd: f.fd, position: 0, buffers: many }, { fd: f.fd, position: 1024, buffers: [Buffer.from('z')] }])).toEqual([null, null]);
    expect(readFileSync(f.file).length).toBe(1025);
    expect(() => pwritevMany!([])).toThrow(/at least one write/);
    expect(() => pwritevMany!([{ fd: -1, position: 0, buffers: [Buffer.from('x')] }])).toThrow(/fd must be/);
    expect(() => pwritevMany!([{ fd: f.fd, position: -1, buffers: [Buffer.from('x')] }])).toThrow(/position must be/);
    expect(() => pwritevMany!([{ fd: f.fd, position: 0, buffers: [] }])).toThrow(/1\.\.1024 buffers/);
    expect(() => pwritevMany!([{ fd: f.fd, position: 0, buffers: [...many, Buffer.from('x')] }])).toThrow(/1\.\.1024 buffers/);
    // A non-Uint8Array in a later write: a TypeError from the binding, and nothing written by the first.
    const g = open();
    expect(() => pwritevMany!([
      { fd: g.fd, position: 0, buffers: [Buffer.from('never')] },
      { fd: g.fd, position: 5, buffers: ['text' as unknown as Uint8Array] },
    ])).toThrow(TypeError);
    expect(readFileSync(g.file).length).toBe(0);
  });
});
