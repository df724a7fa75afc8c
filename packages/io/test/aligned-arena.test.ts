// AlignedArena: bounds and reuse, and on a real disk that enforces O_DIRECT
// alignment, proof that its chunks pass while a misaligned Buffer is refused
// by the kernel (EINVAL).
import fs from 'node:fs';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlignedArena, ArenaSource, NodeIo } from '../src/index.js';
import { knownAddressAlignment } from '../src/internal/aligned-memory.js';
import { codeOf, tempDir } from './helpers.js';

const MiB = 1 << 20;

describe('AlignedArena bounds and reuse', () => {
  for (const source of Object.values(ArenaSource)) {
    it(`${source}: hands out each chunk once, returns null when exhausted, reuses released chunks`, () => {
      const arena = new AlignedArena({ chunkBytes: 64 * 1024, chunkCount: 3, source });
      const chunks = [arena.acquire(), arena.acquire(), arena.acquire()] as Buffer[];
      expect(chunks.every((c) => c instanceof Buffer && c.byteLength === 64 * 1024)).toBe(true);
      expect(new Set(chunks.map((c) => c.byteOffset)).size).toBe(3);
      expect(chunks.every((c) => c.every((b) => b === 0))).toBe(true);
      expect(chunks.every((c) => knownAddressAlignment(c) >= 4096)).toBe(true);
      expect(arena.available).toBe(0);
      expect(arena.acquire()).toBeNull();
      expect(arena.exhausted).toBe(1);
      arena.release(chunks[1] as Buffer);
      expect(arena.acquire()).toBe(chunks[1]); // the same object: no allocation
      expect(() => arena.release(Buffer.alloc(64 * 1024))).toThrow(/not from this arena/);
      expect(() => arena.release((chunks[0] as Buffer).subarray(0, 4096))).toThrow(/chunk itself/);
      arena.release(chunks[0] as Buffer);
      expect(() => arena.release(chunks[0] as Buffer)).toThrow(/released twice/);
    });
  }

  it('poisons released chunks under VERIFY, so use after release shows', () => {
    const arena = new AlignedArena({ chunkBytes: 4096, chunkCount: 1 });
    const chunk = arena.acquire() as Buffer;
    chunk.fill(1);
    arena.release(chunk);
    expect(chunk.every((b) => b === 0xa5)).toBe(true);
  });

  it('refuses chunk sizes that are not whole pages', () => {
    expect(() => new AlignedArena({ chunkBytes: 1000, chunkCount: 1 })).toThrow(/multiple of 4096/);
  });
});

/**
 * A directory whose file system enforces O_DIRECT alignment (a misaligned
 * page-crossing write fails with EINVAL). tmpfs may accept O_DIRECT without
 * checking anything (Linux 6.18 does), so it does not qualify.
 */
async function enforcingDir(): Promise<{ dir: string; cleanup: () => void; alignment: number } | null> {
  for (const base of [os.tmpdir(), '/var/tmp']) {
    const candidate = tempDir('direct', base);
    const alignment = await NodeIo.probeDirectAlignment(candidate.dir);
    if (alignment !== null && plainWriteRejected(candidate.dir)) return { ...candidate, alignment };
    candidate.cleanup();
  }
  return null;
}

function plainWriteRejected(dir: string): boolean {
  const fd = fs.openSync(`${dir}/enforce`, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_DIRECT);
  try {
    const plain = Buffer.alloc(MiB + 1024);
    fs.writeSync(fd, plain.subarray(1, 1 + MiB), 0, MiB, 0); // address odd: never aligned
    return false;
  } catch (error) {
    return (error as { code?: string }).code === 'EINVAL';
  } finally {
    fs.closeSync(fd);
    fs.unlinkSync(`${dir}/enforce`);
  }
}

/** The offset in 0..511 (step 16) at which `buffer` starts 512-aligned, found by O_DIRECT writes (§1.1, probe 3). */
function alignedOffset(fd: number, buffer: Buffer): number | null {
  for (let offset = 0; offset < 512; offset += 16) {
    try {
      fs.writeSync(fd, buffer, offset, MiB, 0);
      return offset;
    } catch (error) {
      if ((error as { code?: string }).code !== 'EINVAL') throw error;
    }
  }
  return null;
}

describe('O_DIRECT on a real disk', async () => {
  const target = await enforcingDir();
  const skipReason = 'no file system under os.tmpdir() or /var/tmp enforces O_DIRECT alignment here (tmpfs?); runs on ext4/xfs';
  if (target === null) console.warn(`skipping O_DIRECT tests: ${skipReason}`);
  let cleanup: () => void = () => {};
  beforeAll(() => {
    if (target !== null) cleanup = target.cleanup;
  });
  afterAll(() => cleanup());

  for (const source of Object.values(ArenaSource)) {
    it.skipIf(target === null)(`${source} arena chunks write and read with O_DIRECT`, async () => {
      const { dir, alignment } = target as NonNullable<typeof target>;
      const arena = new AlignedArena({ chunkBytes: MiB, chunkCount: 3, source });
      const io = new NodeIo({ directAlignment: alignment });
      const f = await io.open(`${dir}/${source}.log`, { create: true, direct: true, dsync: true });
      const [a, b, c] = [arena.acquire(), arena.acquire(), arena.acquire()] as [Buffer, Buffer, Buffer];
      a.fill(0x5a);
      b.fill(0xc3);
      await f.pwrite(a, 0);
      await f.pwritev([b, a.subarray(0, 4096)], MiB);
      f.pwriteSync(b.subarray(alignment, 2 * alignment), 8192); // a sub-view at the measured alignment
      await f.allocate(2 * MiB + 4096, 2 * MiB, 'zero');
      expect(await f.size()).toBe(4 * MiB + 4096);
      expect(await f.pread(c, MiB)).toBe(MiB);
      expect(c.equals(b)).toBe(true);
      expect(f.preadSync(c.subarray(0, 4096), 2 * MiB)).toBe(4096);
      expect(c.subarray(0, 4096).every((x) => x === 0x5a)).toBe(true);
      await f.close();
      const onDisk = fs.readFileSync(`${dir}/${source}.log`);
      expect(onDisk.subarray(0, 8192).every((x) => x === 0x5a)).toBe(true);
      expect(onDisk.subarray(8192, 8192 + alignment).every((x) => x === 0xc3)).toBe(true);
      expect(onDisk.subarray(2 * MiB + 4096).every((x) => x === 0)).toBe(true);
    });
  }

  it.skipIf(target === null)('a plain Buffer at a certainly misaligned address is refused with EINVAL', async () => {
    const { dir, alignment } = target as NonNullable<typeof target>;
    const path = `${dir}/plain.log`;
    const fd = fs.openSync(path, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_DIRECT);
    const plain = Buffer.alloc(MiB + 1024);
    // Find where this allocation is 512-aligned; 16 bytes further is then certainly not (and 1 MiB crosses pages).
    const good = alignedOffset(fd, plain);
    fs.closeSync(fd);
    expect(good).not.toBeNull();
    const misaligned = plain.subarray((good as number) + 16, (good as number) + 16 + MiB);
    const aligned = plain.subarray(good as number, (good as number) + MiB);

    const io = new NodeIo({ directAlignment: alignment });
    const f = await io.open(path, { direct: true });
    const error = await f.pwrite(misaligned, 0).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'SEGLOG_ERR_IO_INVALID_ALIGNMENT', errno: 'EINVAL', syscall: 'pwrite' });
    expect(await codeOf(() => f.pread(misaligned, 0))).toBe('SEGLOG_ERR_IO_INVALID_ALIGNMENT');
    // Same length, same position, only the address differs: the aligned view passes.
    await f.pwrite(aligned, 0);
    // And the kernel itself says EINVAL to the raw syscall.
    expect(() => fs.writeSync(f.fd, misaligned, 0, MiB, 0)).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    // Misaligned positions and lengths are refused before the syscall.
    expect(await codeOf(() => f.pwrite(aligned, 100))).toBe('SEGLOG_ERR_IO_INVALID_ALIGNMENT');
    expect(await codeOf(() => f.pwrite(aligned.subarray(0, 1000), 0))).toBe('SEGLOG_ERR_IO_INVALID_ALIGNMENT');
    await f.close();
  });
});
