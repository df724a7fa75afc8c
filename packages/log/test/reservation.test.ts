// SegmentReservation: file sizes per mode on SimIo, caps (segment size, free
// space floor), trim back to the logical end, and the real allocations on
// ext4 (st_blocks) with NodeIo.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlignedArena, NodeIo, SimIo } from '@seglog/io';
import type { Io } from '@seglog/io';
import { DirectSegmentWriter } from '../src/segment/direct-segment-writer.js';
import { SegmentReservation } from '../src/segment/segment-reservation.js';
import type { PreallocateMode } from '../src/segment/segment-reservation.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const listener = { onWritten: () => undefined, onWriteError: () => undefined, wantsSync: () => false };

async function reserve(io: Io, mode: PreallocateMode, options: { segmentBytes?: number; floor?: number; logicalEnd?: number } = {}) {
  await io.mkdir('/d', { recursive: true });
  const file = await io.open('/d/00000000000000000000.log', { create: true });
  if ((options.logicalEnd ?? 0) > 0) await file.pwrite(Buffer.alloc(options.logicalEnd!, 7), 0);
  const reservation = new SegmentReservation(io, file, options.logicalEnd ?? 0, {
    mode, stepBytes: MiB, segmentBytes: options.segmentBytes ?? 10 * MiB, alignment: 4096, dir: '/d', freeSpaceFloorBytes: options.floor ?? 0,
  });
  return { file, reservation };
}

describe('SegmentReservation on SimIo', () => {
  for (const mode of ['zero', 'truncate', 'fallocate'] as const) {
    it(`${mode}: grows in steps, the file size follows, trim restores the logical size`, async () => {
      const io = new SimIo();
      const { file, reservation } = await reserve(io, mode);
      expect(reservation.needsGrowth(100)).toBe(true);
      expect(await reservation.grow(100)).toBe(MiB);
      expect(await file.size()).toBe(MiB);
      expect(reservation.needsGrowth(MiB)).toBe(false);
      expect(reservation.needsGrowth(MiB + 1)).toBe(true);
      // A large append reserves at least up to its padded end.
      expect(await reservation.grow(3 * MiB + 10)).toBe(3 * MiB - MiB + 4096);
      expect(await file.size()).toBe(3 * MiB + 4096);
      await file.pwrite(Buffer.alloc(5000, 1), 0);
      expect((await io.readFile('/d/00000000000000000000.log')).subarray(5000).every((b) => b === 0)).toBe(true);
      await reservation.trim(5000);
      expect(await file.size()).toBe(5000);
      expect(reservation.needsGrowth(6000)).toBe(false);
    });
  }

  it('none and fallocate-keep-size do not change the file size', async () => {
    for (const mode of ['none', 'fallocate-keep-size'] as const) {
      const io = new SimIo();
      const { file, reservation } = await reserve(io, mode);
      await reservation.grow(100);
      expect(await file.size()).toBe(0);
      expect(reservation.needsGrowth(100)).toBe(false);
    }
  });

  it('is capped by the segment size and then stops', async () => {
    const io = new SimIo();
    const { file, reservation } = await reserve(io, 'zero', { segmentBytes: 1.5 * MiB + 100 });
    await reservation.grow(1);
    expect(await reservation.grow(MiB + 1)).toBe(MiB / 2 + 4096);
    expect(await file.size()).toBe(1.5 * MiB + 4096);
    expect(reservation.state).toBe('capped');
    expect(reservation.needsGrowth(2 * MiB)).toBe(false);
  });

  it('leaves the free-space floor and stops growing below it', async () => {
    const io = new SimIo({ totalBytes: 8 * MiB });
    const { file, reservation } = await reserve(io, 'zero', { floor: 6 * MiB });
    // 8 MiB free - 6 MiB floor = 2 MiB, at most half of it: 1 MiB.
    expect(await reservation.grow(1)).toBe(MiB);
    // Now 7 MiB free → 0.5 MiB allowed; an append needing more stops growth.
    expect(await reservation.grow(MiB + 600 * KiB)).toBe(0);
    expect(reservation.state).toBe('low-space');
    expect(reservation.needsGrowth(2 * MiB)).toBe(false);
    expect(await file.size()).toBe(MiB);
  });

  it('starts a reopened segment at the page holding its logical end', async () => {
    const io = new SimIo();
    const { file, reservation } = await reserve(io, 'zero', { logicalEnd: 5000 });
    expect(reservation.reservedEnd).toBe(4096);
    expect(reservation.needsGrowth(5001)).toBe(true);
    await reservation.grow(5001);
    expect(await file.size()).toBe(4096 + MiB);
    const bytes = await io.readFile('/d/00000000000000000000.log');
    expect(bytes.subarray(0, 5000).every((b) => b === 7)).toBe(true);
    expect(bytes.subarray(5000).every((b) => b === 0)).toBe(true);
  });

  it('zero mode works on an O_DIRECT handle with a direct writer inside the reservation', async () => {
    const io = new SimIo();
    await io.mkdir('/d');
    const file = await io.open('/d/s.log', { create: true, direct: true });
    const reservation = new SegmentReservation(io, file, 0, { mode: 'zero', stepBytes: 64 * KiB, segmentBytes: MiB, alignment: 4096, dir: '/d', freeSpaceFloorBytes: 0 });
    const arena = new AlignedArena({ chunkBytes: 64 * KiB, chunkCount: 2 });
    const writer = new DirectSegmentWriter(file, 0, listener, { arena, alignment: 4096 });
    let position = 0;
    const all: Buffer[] = [];
    for (let i = 0; i < 40; i++) {
      const b = Buffer.alloc(3000 + i, i + 1);
      if (reservation.needsGrowth(position + b.length)) await reservation.grow(position + b.length);
      expect(position + b.length).toBeLessThanOrEqual(reservation.reservedEnd);
      if (!writer.enqueue(b, position, i)) await writer.whenRoom();
      all.push(b);
      position += b.length;
    }
    await writer.drain();
    expect(await file.size()).toBe(reservation.reservedEnd);
    await writer.close();
    await reservation.trim(position);
    expect(await io.readFile('/d/s.log')).toEqual(Buffer.concat(all));
  });
});

describe('SegmentReservation on ext4 (NodeIo): real allocations', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-reservation-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const cases: Array<{ mode: PreallocateMode; size: number; allocated: (blocksBytes: number) => boolean }> = [
    { mode: 'zero', size: 4 * MiB, allocated: (b) => b >= 4 * MiB },
    { mode: 'fallocate', size: 4 * MiB, allocated: (b) => b >= 4 * MiB },
    { mode: 'fallocate-keep-size', size: 0, allocated: (b) => b >= 4 * MiB },
    { mode: 'truncate', size: 4 * MiB, allocated: (b) => b < MiB },
    { mode: 'none', size: 0, allocated: (b) => b === 0 },
  ];
  for (const c of cases) {
    it(`${c.mode}: size ${c.size}, blocks as expected, trim frees the rest`, async () => {
      const io = new NodeIo();
      const p = path.join(dir, `${c.mode}.log`);
      const file = await io.open(p, { create: true });
      const reservation = new SegmentReservation(io, file, 0, { mode: c.mode, stepBytes: 4 * MiB, segmentBytes: 64 * MiB, alignment: 4096, dir, freeSpaceFloorBytes: 0 });
      await reservation.grow(1);
      const st = statSync(p);
      expect(st.size).toBe(c.size);
      // Without the native addon fallocate falls back to ftruncate (sparse): accept that for the fallocate modes.
      const fellBack = io.stats.allocateFallback > 0;
      if (!fellBack) expect(c.allocated(st.blocks * 512)).toBe(true);
      await file.pwrite(Buffer.alloc(5000, 1), 0);
      await reservation.trim(5000);
      await file.fdatasync();
      const after = statSync(p);
      expect(after.size).toBe(5000);
      expect(after.blocks * 512).toBeLessThanOrEqual(64 * KiB);
      await file.close();
    });
  }

  it('zero mode on an O_DIRECT handle under a DirectSegmentWriter, trimmed to the logical end', async (ctx) => {
    if ((await NodeIo.probeDirectAlignment(dir)) === null) ctx.skip(); // no O_DIRECT under os.tmpdir() (tmpfs?): runs on ext4/xfs
    const io = new NodeIo();
    const p = path.join(dir, 'direct-zero.log');
    const file = await io.open(p, { create: true, direct: true });
    const reservation = new SegmentReservation(io, file, 0, { mode: 'zero', stepBytes: 256 * KiB, segmentBytes: 4 * MiB, alignment: 4096, dir, freeSpaceFloorBytes: 0 });
    const arena = new AlignedArena({ chunkBytes: 64 * KiB, chunkCount: 3 });
    const writer = new DirectSegmentWriter(file, 0, listener, { arena, alignment: 4096, maxChunks: 3 });
    const all: Buffer[] = [];
    let position = 0;
    for (let i = 0; i < 200; i++) {
      const b = Buffer.alloc(1000 + 37 * i, (i % 250) + 1);
      // Growth runs while writes below reservedEnd are in flight (it only writes past it).
      if (reservation.needsGrowth(position + b.length)) await reservation.grow(position + b.length);
      if (!writer.enqueue(b, position, i)) await writer.whenRoom();
      all.push(b);
      position += b.length;
    }
    await writer.drain();
    expect(statSync(p).size).toBe(reservation.reservedEnd);
    await writer.close();
    await reservation.trim(position);
    await file.close();
    expect(statSync(p).size).toBe(position);
    expect(readFileSync(p).equals(Buffer.concat(all))).toBe(true);
  });
});
