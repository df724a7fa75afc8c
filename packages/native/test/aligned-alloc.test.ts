// alignedAlloc: address alignment (read natively), zero fill, usability for
// O_DIRECT, and that collected buffers are freed (external memory is
// reported to V8, so garbage collection sees it).
import { closeSync, constants, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { alignedAlloc, bufferAddressMod, pageSize } from '../src/index.js';
import { patternBytes, tempDir } from './helpers.js';

const ZEROS = Buffer.alloc(4 << 20);
const native = process.env['SEGLOG_NATIVE'] === '0' ? describe.skip : describe;

native('alignedAlloc (native addon)', () => {
  const dir = tempDir('aligned');
  afterAll(() => dir.remove());

  it('returns zero-filled buffers aligned as asked, for random sizes and alignments', () => {
    expect(pageSize).toBeGreaterThanOrEqual(4096);
    fc.assert(fc.property(fc.integer({ min: 1, max: 4 << 20 }), fc.integer({ min: 3, max: 21 }), (size, log2) => {
      const alignment = 2 ** log2;
      const buf = alignedAlloc!(size, alignment);
      expect(buf.length).toBe(size);
      expect(bufferAddressMod!(buf, alignment)).toBe(0);
      expect(buf.equals(ZEROS.subarray(0, size))).toBe(true);
      buf.fill(0xab); // writable to the last byte
      expect(buf[size - 1]).toBe(0xab);
    }), { numRuns: 40 });
  });

  it('bufferAddressMod sees view offsets and can tell a misaligned buffer', () => {
    const buf = alignedAlloc!(3 * 4096, 4096);
    expect(bufferAddressMod!(buf.subarray(512), 4096)).toBe(512);
    expect(bufferAddressMod!(buf.subarray(4096), 4096)).toBe(0);
    expect(bufferAddressMod!(new Uint8Array(buf.buffer, buf.byteOffset + 16, 16), 512)).toBe(16);
  });

  it('works for O_DIRECT writes and reads across page boundaries', () => {
    const path = join(dir.path, 'direct.bin');
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_DIRECT);
    } catch {
      return; // the file system has no O_DIRECT (tmpfs): nothing to check here
    }
    try {
      const out = alignedAlloc!(64 * 1024, 4096);
      patternBytes(out.length, 11).copy(out);
      expect(writeSync(fd, out, 0, out.length, 0)).toBe(out.length);
      const back = alignedAlloc!(64 * 1024, 4096);
      expect(readSync(fd, back, 0, back.length, 0)).toBe(back.length);
      expect(back.equals(out)).toBe(true);
    } finally {
      closeSync(fd);
    }
  });

  it('frees collected buffers: 1 GiB allocated in 32 MiB pieces does not stay resident', async () => {
    // Node runs external-buffer finalizers from the event loop, so let it turn.
    const before = process.memoryUsage().rss;
    for (let i = 0; i < 32; i++) {
      const buf = alignedAlloc!(32 << 20, 4096);
      buf[buf.length - 1] = i;
      await setImmediate();
    }
    await setImmediate();
    const grownBytes = process.memoryUsage().rss - before;
    expect(grownBytes).toBeLessThan(512 << 20);
  });

  it('rejects bad sizes and alignments with an assertion', () => {
    expect(() => alignedAlloc!(0, 4096)).toThrow(/size/);
    expect(() => alignedAlloc!(4096, 3000)).toThrow(/alignment/);
    expect(() => alignedAlloc!(4096, 4)).toThrow(/alignment/);
    expect(() => alignedAlloc!(2 ** 33, 4096)).toThrow(/size/);
  });
});
