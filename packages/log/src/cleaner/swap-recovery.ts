// Cleaner leftovers at load (reference/kafka-storage.md §21 step 1), before
// the loader opens any segment:
// - every `*.cleaned` file is deleted (a pass that had not reached its
//   commit point: the originals are intact); M = the smallest base among
//   them, and every `*.swap` with base ≥ M is deleted too (an incomplete
//   split, in Kafka's terms; our passes swap one group at a time, so this
//   only fires for leftovers of another writer);
// - each remaining `<base>.log.swap` covers [base, next offset of its last
//   batch): every regular segment file (.log .index .timeindex .txnindex)
//   whose base lies in that range is deleted, then the swap is renamed
//   `<base>.log`; its .index is then missing, so the loader recovers the
//   segment (indexes rebuilt, producer state replayed over it). A swap
//   holding no whole, ordered batch list (not one we wrote: ours are
//   fdatasynced before the rename and never empty) is deleted instead,
//   keeping the regular files.
// - `.swap` files of other kinds are deleted (we write none).
// The directory is fsynced once if anything changed. Idempotent: a crash in
// the middle is finished by the next load.

import type { Io } from '@seglog/io';
import { FileNames } from '../file-names.js';
import { BatchHeaderReader } from '../segment/batch-header-reader.js';

const SEGMENT_KINDS = new Set(['log', 'index', 'timeindex', 'txnindex']);

/** Finishes or rolls back interrupted cleaner swaps in `dir` (`listing`: its names, when just read); returns the count of files changed. */
export async function recoverCleanerLeftovers(io: Io, dir: string, listing?: readonly string[]): Promise<number> {
  const names = listing ?? (await io.readdir(dir));
  let minCleaned = Number.POSITIVE_INFINITY;
  const swaps: { name: string; offset: number; kind: string }[] = [];
  const regular: { name: string; offset: number }[] = [];
  let changed = 0;
  for (const name of names) {
    const parsed = FileNames.parseSegmentFileName(name);
    if (parsed === null) continue;
    if (parsed.transient === 'cleaned') {
      minCleaned = Math.min(minCleaned, parsed.offset);
      await io.unlink(`${dir}/${name}`);
      changed++;
    } else if (parsed.transient === 'swap') {
      swaps.push({ name, offset: parsed.offset, kind: parsed.kind });
    } else if (parsed.transient === null && SEGMENT_KINDS.has(parsed.kind)) {
      regular.push({ name, offset: parsed.offset });
    }
  }
  for (const swap of swaps) {
    if (swap.offset < minCleaned && swap.kind === 'log') continue;
    await io.unlink(`${dir}/${swap.name}`);
    changed++;
  }
  for (const swap of swaps) {
    if (swap.offset >= minCleaned || swap.kind !== 'log') continue;
    const path = `${dir}/${swap.name}`;
    const next = await nextOffsetOf(io, path, swap.offset);
    if (next === null) {
      // Not a swap we wrote (ours are fdatasynced whole before the rename and never empty): roll back.
      await io.unlink(path);
      changed++;
      continue;
    }
    for (const file of regular) {
      if (file.offset < swap.offset || file.offset >= next) continue;
      if (await io.exists(`${dir}/${file.name}`)) {
        await io.unlink(`${dir}/${file.name}`);
        changed++;
      }
    }
    await io.rename(path, `${dir}/${FileNames.segmentFileName(swap.offset, 'log')}`);
    changed++;
  }
  if (changed > 0) await io.fsyncDir(dir);
  return changed;
}

/** The offset after the last batch of a swap file (fdatasynced before it was named .swap: whole batches); null when it holds no valid batch list. */
async function nextOffsetOf(io: Io, path: string, base: number): Promise<number | null> {
  const file = await io.open(path, { readOnly: true });
  try {
    const size = await file.size();
    const reader = new BatchHeaderReader(file);
    let position = 0;
    let next: number | null = null;
    try {
      while (await reader.read(position, size)) {
        if (reader.baseOffset < (next ?? base)) return null;
        next = reader.lastOffset + 1;
        position += reader.size;
      }
    } catch {
      return null;
    }
    return position === size ? next : null;
  } finally {
    await file.close();
  }
}
