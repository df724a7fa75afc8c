// SimIo crash modes (reliability.md §3.3) and crash-point enumeration.
import { describe, expect, it } from 'vitest';
import { CrashMode, SimIo } from '../src/index.js';
import type { IoFile } from '../src/index.js';
import { codeOf, dumpTree, filled } from './helpers.js';

const D = '/data';

async function setup(options: ConstructorParameters<typeof SimIo>[0] = {}): Promise<SimIo> {
  const io = new SimIo(options);
  await io.mkdir(D, { recursive: true });
  await io.fsyncDir('/');
  return io;
}

/** A durable file: created, written, synced, directory synced. */
async function durableFile(io: SimIo, name: string, bytes: Uint8Array): Promise<IoFile> {
  const f = await io.open(`${D}/${name}`, { create: true });
  await f.pwrite(bytes, 0);
  await f.fdatasync();
  await io.fsyncDir(D);
  return f;
}

describe('process crash', () => {
  it('keeps every completed write and entry, synced or not, and keeps unsynced ones pending', async () => {
    const io = await setup();
    const f = await durableFile(io, 'a', filled(100, 1));
    await f.pwrite(filled(50, 2), 100); // unsynced append
    const g = await io.open(`${D}/b`, { create: true }); // entry not fsynced
    await g.pwrite(filled(10, 3), 0);
    await io.rename(`${D}/b`, `${D}/c`);
    const before = await dumpTree(io, '/');

    const after = io.recover(CrashMode.process);
    expect(await dumpTree(after, '/')).toEqual(before);
    expect(after.pendingOperations()).toBeGreaterThan(0);

    // The page cache survived the process, but it is still not durable.
    const lost = after.recover(CrashMode.powerClean);
    expect(await dumpTree(lost, '/')).toEqual({ data: 'dir', 'data/a': filled(100, 1).toString('hex') });
  });
});

describe('clean power loss', () => {
  it('loses an unsynced append and keeps a synced one intact', async () => {
    const io = await setup();
    const f = await durableFile(io, 'log', filled(4096, 0xaa));
    await f.pwrite(filled(1000, 0xbb), 4096);
    await f.fdatasync();
    await f.pwrite(filled(777, 0xcc), 5096); // never synced
    expect(await f.size()).toBe(5873);

    const after = io.recover(CrashMode.powerClean);
    const bytes = await after.readFile(`${D}/log`);
    expect(bytes).toEqual(Buffer.concat([filled(4096, 0xaa), filled(1000, 0xbb)]));
    expect(after.pendingOperations()).toBe(0);
  });

  it('needs fsyncDir for a create, even when the file data was fsynced', async () => {
    const io = await setup();
    const f = await io.open(`${D}/new`, { create: true });
    await f.pwrite(filled(10, 1), 0);
    await f.fdatasync();
    const without = io.recover(CrashMode.powerClean, { seed: 1 });
    expect(await without.exists(`${D}/new`)).toBe(false);

    const io2 = await setup();
    const g = await io2.open(`${D}/new`, { create: true });
    await g.pwrite(filled(10, 1), 0);
    await g.fdatasync();
    await io2.fsyncDir(D);
    const withSync = io2.recover(CrashMode.powerClean);
    expect(await withSync.readFile(`${D}/new`)).toEqual(filled(10, 1));
  });

  it('reverts an un-fsynced rename and unlink; an fsynced one sticks', async () => {
    const io = await setup();
    await durableFile(io, 'tmp', filled(5, 7));
    await durableFile(io, 'old', filled(5, 8));
    await io.rename(`${D}/tmp`, `${D}/final`);
    await io.unlink(`${D}/old`);
    expect(await io.readdir(D)).toEqual(['final']);
    const reverted = io.recover(CrashMode.powerClean, { seed: 3 });
    expect(await reverted.readdir(D)).toEqual(['old', 'tmp']);

    await reverted.rename(`${D}/tmp`, `${D}/final`);
    await reverted.unlink(`${D}/old`);
    await reverted.fsyncDir(D);
    const kept = reverted.recover(CrashMode.powerClean);
    expect(await kept.readdir(D)).toEqual(['final']);
    expect(await kept.readFile(`${D}/final`)).toEqual(filled(5, 7));
  });

  it('commits a rename across directories with an fsync of either directory', async () => {
    const io = await setup();
    await io.mkdir(`${D}/x`);
    await io.mkdir(`${D}/y`);
    await io.fsyncDir(D);
    const f = await io.open(`${D}/x/f`, { create: true });
    await f.pwrite(filled(3, 1), 0);
    await f.fdatasync();
    await io.fsyncDir(`${D}/x`);
    await io.rename(`${D}/x/f`, `${D}/y/f`);
    await io.fsyncDir(`${D}/y`);
    const after = io.recover(CrashMode.powerClean);
    expect(await after.readdir(`${D}/x`)).toEqual([]);
    expect(await after.readFile(`${D}/y/f`)).toEqual(filled(3, 1));
  });

  it('loses a file whose directory creation was never made durable', async () => {
    const io = await setup();
    await io.mkdir(`${D}/part-0`);
    const f = await io.open(`${D}/part-0/seg`, { create: true });
    await f.pwrite(filled(3, 1), 0);
    await f.fdatasync();
    await io.fsyncDir(`${D}/part-0`); // the entry in part-0 is durable, part-0 itself is not
    const after = io.recover(CrashMode.powerClean);
    expect(await after.exists(`${D}/part-0`)).toBe(false);
  });
});

describe('O_DSYNC and O_DIRECT', () => {
  it('an O_DSYNC write is durable when it completes; an O_DIRECT one is not', async () => {
    const io = await setup({ unknownDirectBuffers: 'allow' });
    const sync = await io.open(`${D}/dsync`, { create: true, dsync: true });
    const direct = await io.open(`${D}/direct`, { create: true, direct: true });
    await io.fsyncDir(D);
    await sync.pwrite(filled(100, 1), 0);
    await sync.allocate(0, 4096, 'zero');
    await direct.pwrite(filled(4096, 2), 0);
    const after = io.recover(CrashMode.powerClean);
    expect(await after.readFile(`${D}/dsync`)).toEqual(Buffer.concat([filled(100, 1), filled(3996, 0)]));
    expect(await after.readFile(`${D}/direct`)).toEqual(Buffer.alloc(0));
  });
});

describe('chaotic power loss', () => {
  const SECTOR = 512;
  const OLD = 0x11;
  const NEW = 0x22;
  const WRITE_AT = 700;
  const WRITE_LEN = 2000; // touches sectors 1..5, partially the first and last

  async function tornCase(seed: number, powersafeOverwrite: boolean): Promise<Buffer> {
    const io = await setup({ sectorBytes: SECTOR, powersafeOverwrite });
    const f = await durableFile(io, 'f', filled(4096, OLD));
    await f.pwrite(filled(WRITE_LEN, NEW), WRITE_AT);
    return (await io.recover(CrashMode.powerChaotic, { seed }).readFile(`${D}/f`));
  }

  it('with powersafe overwrite, changes only the write range, per sector all-new or all-old', async () => {
    const outcomes = new Set<string>();
    for (let seed = 1; seed <= 200; seed++) {
      const bytes = await tornCase(seed, true);
      expect(bytes.length).toBe(4096);
      let newSectors = 0;
      let sectors = 0;
      for (let s = 0; s < 4096 / SECTOR; s++) {
        const from = Math.max(s * SECTOR, WRITE_AT);
        const to = Math.min((s + 1) * SECTOR, WRITE_AT + WRITE_LEN);
        let outsideChanged = 0;
        for (let i = s * SECTOR; i < (s + 1) * SECTOR; i++) {
          if ((i < WRITE_AT || i >= WRITE_AT + WRITE_LEN) && bytes[i] !== OLD) outsideChanged++;
        }
        expect(outsideChanged).toBe(0);
        if (from >= to) continue;
        sectors++;
        const part = bytes.subarray(from, to);
        const allNew = part.every((b) => b === NEW);
        const allOld = part.every((b) => b === OLD);
        expect(allNew || allOld).toBe(true);
        if (allNew) newSectors++;
      }
      outcomes.add(newSectors === 0 ? 'dropped' : newSectors === sectors ? 'full' : 'torn');
    }
    expect([...outcomes].sort()).toEqual(['dropped', 'full', 'torn']);
  });

  it('without powersafe overwrite, may trash whole touched sectors, never an untouched one', async () => {
    let damagedOutsideRange = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const bytes = await tornCase(seed, false);
      const firstSector = Math.floor(WRITE_AT / SECTOR);
      const lastSector = Math.floor((WRITE_AT + WRITE_LEN - 1) / SECTOR);
      let untouchedChanged = 0;
      for (let i = 0; i < 4096; i++) {
        const sector = Math.floor(i / SECTOR);
        const inRange = i >= WRITE_AT && i < WRITE_AT + WRITE_LEN;
        if (sector < firstSector || sector > lastSector) {
          if (bytes[i] !== OLD) untouchedChanged++;
        } else if (!inRange && bytes[i] !== OLD) {
          damagedOutsideRange++;
        }
      }
      expect(untouchedChanged).toBe(0);
    }
    // Durable bytes sharing a sector with the torn write were damaged in some runs.
    expect(damagedOutsideRange).toBeGreaterThan(0);
  });

  it('may grow an append without its data (zeros), in whole sectors', async () => {
    let zeroTail = 0;
    for (let seed = 1; seed <= 100; seed++) {
      const io = await setup({ sectorBytes: SECTOR });
      const f = await durableFile(io, 'f', filled(SECTOR, OLD));
      await f.pwrite(filled(3 * SECTOR, NEW), SECTOR);
      const bytes = await io.recover(CrashMode.powerChaotic, { seed }).readFile(`${D}/f`);
      expect([SECTOR, 4 * SECTOR]).toContain(bytes.length);
      for (let s = 1; s < bytes.length / SECTOR; s++) {
        const sector = bytes.subarray(s * SECTOR, (s + 1) * SECTOR);
        const value = sector[0] as number;
        expect([0, NEW]).toContain(value);
        expect(sector.every((b) => b === value)).toBe(true);
        if (value === 0) zeroTail++;
      }
    }
    expect(zeroTail).toBeGreaterThan(0);
  });

  it('lets each pending directory operation survive or revert independently', async () => {
    const seen = new Set<string>();
    for (let seed = 1; seed <= 60; seed++) {
      const io = await setup();
      for (const name of ['a', 'b']) {
        const f = await io.open(`${D}/${name}`, { create: true });
        await f.close();
      }
      seen.add((await io.recover(CrashMode.powerChaotic, { seed }).readdir(D)).join(','));
    }
    expect([...seen].sort()).toEqual(['', 'a', 'a,b', 'b']);
  });

  it('is deterministic: the same seed recovers the same bytes', async () => {
    const io = await setup({ powersafeOverwrite: false });
    const f = await durableFile(io, 'f', filled(4096, OLD));
    for (let i = 0; i < 8; i++) await f.pwrite(filled(300, i + 1), i * 450);
    const a = await io.recover(CrashMode.powerChaotic, { seed: 42 }).readFile(`${D}/f`);
    const b = await io.recover(CrashMode.powerChaotic, { seed: 42 }).readFile(`${D}/f`);
    const c = await io.recover(CrashMode.powerChaotic, { seed: 43 }).readFile(`${D}/f`);
    expect(a.equals(b)).toBe(true);
    expect(a.equals(c)).toBe(false);
  });
});

describe('ordered power loss', () => {
  it('keeps a prefix of the pending operations in issue order (the last may be torn)', async () => {
    const N = 8;
    const prefixes = new Set<number>();
    for (let seed = 1; seed <= 100; seed++) {
      const io = await setup({ sectorBytes: 512 });
      const files: IoFile[] = [];
      for (let i = 0; i < N; i++) files.push(await durableFile(io, `f${i}`, filled(2048, 0)));
      // Interleave files so that per-file order alone would not explain a prefix.
      for (let i = 0; i < N; i++) await (files[(i * 3) % N] as IoFile).pwrite(filled(2048, i + 1), 0);
      const after = io.recover(CrashMode.powerOrdered, { seed });
      const state: Array<'full' | 'none' | 'torn'> = [];
      for (let i = 0; i < N; i++) {
        const bytes = await after.readFile(`${D}/f${(i * 3) % N}`);
        const n = bytes.filter((b) => b === i + 1).length;
        state.push(n === 2048 ? 'full' : n === 0 ? 'none' : 'torn');
        if (n !== 0 && n !== 2048) expect(n % 512).toBe(0);
      }
      const survivors = state.findIndex((s) => s !== 'full');
      const k = survivors === -1 ? N : survivors;
      // After the first op that is not complete, nothing later survives at all.
      for (let i = k + 1; i < N; i++) expect(state[i]).toBe('none');
      prefixes.add(state[k] === 'torn' ? k + 0.5 : k);
    }
    expect(prefixes.size).toBeGreaterThan(5);
    expect([...prefixes].some((p) => !Number.isInteger(p))).toBe(true);
  });
});

describe('lying fsync', () => {
  it('returns success but makes nothing durable (the harness must catch it)', async () => {
    const io = await setup({ faults: { lyingSync: { probability: 1, path: `${D}/f` } } });
    const f = await io.open(`${D}/f`, { create: true });
    await io.fsyncDir(D);
    await f.pwrite(filled(100, 9), 0);
    await f.fdatasync();
    expect(io.injected.lyingSync).toBe(1);
    expect(await f.size()).toBe(100); // still visible
    const after = io.recover(CrashMode.powerClean);
    expect(await after.readFile(`${D}/f`)).toEqual(Buffer.alloc(0));
  });
});

describe('crash points', () => {
  async function workload(io: SimIo): Promise<void> {
    await io.mkdir(D); // 1
    await io.fsyncDir('/'); // 2
    const f = await io.open(`${D}/seg`, { create: true }); // 3
    await f.pwrite(filled(100, 1), 0); // 4
    await f.fdatasync(); // 5
    await io.fsyncDir(D); // 6
    await f.pwritev([filled(10, 2), filled(20, 3)], 100); // 7
    await f.truncate(120); // 8
    await f.allocate(0, 4096, 'zero'); // 9
    await f.fsync(); // 10
    await io.rename(`${D}/seg`, `${D}/seg2`); // 11
    await io.fsyncDir(D); // 12
    await f.pread(Buffer.alloc(10), 0); // reads are not crash points
    await f.close();
  }

  it('numbers every mutating call, and crashAt halts exactly there', async () => {
    const seen: number[] = [];
    const counting = new SimIo({ onCrashPoint: (p) => void seen.push(p.point) });
    await workload(counting);
    const K = counting.crashPoints;
    expect(K).toBe(12);
    expect(seen).toEqual(Array.from({ length: K }, (_, i) => i + 1));

    for (let k = 1; k <= K; k++) {
      const io = new SimIo({ crashAt: k });
      expect(await codeOf(() => workload(io))).toBe('SEGLOG_ERR_IO_CRASHED');
      expect(io.crashPoints).toBe(k);
      expect(io.halted).toBe(true);
      expect(await codeOf(() => io.readdir('/'))).toBe('SEGLOG_ERR_IO_CRASHED');
      // Every mode recovers to a usable machine with no open handles.
      for (const mode of Object.values(CrashMode)) {
        const after = io.recover(mode, { seed: k });
        expect(after.openHandles()).toEqual([]);
        // seg's entry is durable from point 6 on; the rename (11) is durable only at 12.
        if (k > 6) expect((await after.readdir(D)).filter((n) => n.startsWith('seg'))).toHaveLength(1);
        if (k > 6 && mode === CrashMode.powerClean) expect(await after.readdir(D)).toEqual(['seg']);
        if (k > 11 && mode === CrashMode.process) expect(await after.readdir(D)).toEqual(['seg2']);
      }
    }
  });

  it('lets the hook choose the crash point, and old handles fail after it', async () => {
    const io = new SimIo({ onCrashPoint: (p) => p.op === 'fdatasync' });
    await io.mkdir(D);
    const f = await io.open(`${D}/f`, { create: true });
    await f.pwrite(filled(10, 1), 0);
    expect(await codeOf(() => f.fdatasync())).toBe('SEGLOG_ERR_IO_CRASHED');
    expect(await codeOf(() => f.pwrite(filled(1, 1), 0))).toBe('SEGLOG_ERR_IO_CRASHED');
    expect(await codeOf(() => f.close())).toBe('SEGLOG_ERR_IO_CRASHED');
    expect(io.openHandles()).toEqual([]);
    // The crash happened before the sync took effect.
    const after = io.recover(CrashMode.powerClean);
    expect(await after.exists(D)).toBe(false);
  });
});
