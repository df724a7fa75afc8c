// HandleCache / CachingIo / CachedFile on SimIo (issue 24): the budget of
// idle descriptors, pinned and held files kept open, lazy opens, renames
// followed, and a closed file refusing use.
import { describe, expect, it } from 'vitest';
import { CachingIo, HandleCache } from '../src/log-dir/handle-cache.js';
import type { CachedFile } from '../src/log-dir/handle-cache.js';
import { newIo } from './log-helpers.js';

async function files(count: number, budget: number) {
  const sim = await newIo();
  const io = new CachingIo(sim, new HandleCache(budget));
  const opened: CachedFile[] = [];
  for (let i = 0; i < count; i++) {
    const file = (await io.open(`/data/${i}.log`, { create: true })) as CachedFile;
    await file.pwrite(Buffer.from(`segment ${i}`), 0);
    opened.push(file);
  }
  return { sim, io, opened };
}

describe('HandleCache', () => {
  it('keeps at most the budget of idle files open and reopens an evicted one on use', async () => {
    const { sim, io, opened } = await files(6, 2);
    expect(io.cache.stats().open).toBe(2);
    expect(sim.openHandles()).toHaveLength(2);
    expect(opened[0]?.isOpen).toBe(false);
    const buffer = Buffer.alloc(9);
    await opened[0]?.pread(buffer, 0);
    expect(buffer.toString()).toBe('segment 0');
    expect(io.cache.stats().open).toBe(2);
    expect(io.cache.stats().evictions).toBeGreaterThanOrEqual(5);
    for (const file of opened) await file.close();
    expect(sim.openHandles()).toEqual([]);
    expect(io.cache.stats()).toMatchObject({ open: 0, files: 0 });
  });

  it('never evicts a pinned or held file; unpinning lets it go', async () => {
    const { sim, io, opened } = await files(1, 1);
    const pinned = opened[0] as CachedFile;
    io.setPinned(['/data/0.log'], true);
    let holding = true;
    const held = (await io.open('/data/held.log', { create: true })) as CachedFile;
    held.holdWhile({ get refCount() { return holding ? 2 : 1; } }); // held while a plan retains its SegmentFileRef (refCount > 1)
    for (let i = 1; i < 5; i++) await (await io.open(`/data/${i}.log`, { create: true })).pwrite(Buffer.from('x'), 0);
    expect(pinned.isOpen).toBe(true);
    expect(held.isOpen).toBe(true);
    // The pinned file is outside the budget; the held one occupies its one slot, so every other went.
    expect(io.cache.stats().open).toBe(2);
    expect(sim.openHandles()).toHaveLength(2);
    holding = false;
    io.setPinned(['/data/0.log'], false);
    // Both idle now and one slot: the least recently used (held) is closed.
    expect([pinned.isOpen, held.isOpen]).toEqual([true, false]);
    expect(sim.openHandles()).toHaveLength(1);
  });

  it('an existing file opened without create is not opened until used; a rename is followed', async () => {
    const { io, opened } = await files(1, 1);
    await opened[0]?.close();
    const lazy = (await io.open('/data/0.log')) as CachedFile;
    expect(lazy.isOpen).toBe(false);
    await io.rename('/data/0.log', '/data/0.log.deleted');
    expect(lazy.path).toBe('/data/0.log.deleted');
    const buffer = Buffer.alloc(9);
    await lazy.pread(buffer, 0);
    expect(buffer.toString()).toBe('segment 0');
    await lazy.close();
    await expect(lazy.pread(buffer, 0)).rejects.toMatchObject({ code: 'SEGLOG_ERR_IO_CLOSED' });
  });

  it('non-segment paths and O_DIRECT opens go to the wrapped Io unchanged', async () => {
    const sim = await newIo();
    const io = new CachingIo(sim, new HandleCache(1));
    const checkpoint = await io.open('/data/recovery-point-offset-checkpoint', { create: true });
    expect(checkpoint.constructor.name).not.toBe('CachedFile');
    await checkpoint.close();
    expect(io.cache.stats().files).toBe(0);
  });
});
