// The swap of a cleaned segment group (reference/kafka-storage.md §21, §24),
// run as a mutation of the log.
//
// On disk, in this order:
//   1. `<base>.log.cleaned` (written and fdatasynced by the pass) is renamed
//      `<base>.log.swap` and the directory fsynced: the commit point. From
//      here a restart completes the swap (swap-recovery.ts).
//   2. every file of every old segment of the group is renamed `.deleted`;
//   3. `<base>.log.swap` is renamed `<base>.log`, the directory fsynced;
//   4. the new segment's indexes are rebuilt from its .log (its .index is
//      missing, as after a crash at step 3) with the group's aborted
//      transactions copied into its .txnindex, written and fdatasynced;
//   5. the segment list swaps in one synchronous step; the old segments'
//      handles are released (a fetch plan holding one keeps it) and their
//      `.deleted` files unlinked after file.delete.delay.ms.
// Before step 1 nothing of the log has changed: a failure there (the rename
// refused) leaves the originals in place and the pass is retried later.
// A failure from the directory fsync of step 1 on is fail-stop: the files are
// then between two states that only recovery may settle.
//
// The group is swapped only if it is still what the pass read: the same
// segment objects, consecutive, sealed, each of the size scanned. A
// truncation or deletion in between makes the swap 'stale' (the .cleaned
// file is removed, nothing else changes).

import { Segment } from '../segment/segment.js';
import type { AbortedTxn } from '../segment/txn-index.js';
import type { CleanerAccess } from './cleaner-access.js';

export interface CleanedGroup {
  readonly segments: readonly Segment[];
  /** Each segment's size when scanned. */
  readonly sizes: readonly number[];
  readonly base: number;
  readonly abortedTxns: readonly AbortedTxn[];
}

export type SwapOutcome = 'swapped' | 'stale';

/** The group's index in the segment list when it is unchanged since the scan, else -1. */
function currentIndex(access: CleanerAccess, group: CleanedGroup): number {
  const all = access.segments.all();
  const first = all.indexOf(group.segments[0] as Segment);
  if (first < 0 || first + group.segments.length >= all.length) return -1;
  for (let i = 0; i < group.segments.length; i++) {
    const segment = all[first + i];
    if (segment === undefined || segment !== group.segments[i] || segment.size !== group.sizes[i]) return -1;
  }
  return first;
}

/** Swaps the cleaned file in (inside a mutation). Throws the pre-commit error as is, later ones through fail-stop. */
export async function swapIn(access: CleanerAccess, group: CleanedGroup): Promise<SwapOutcome> {
  const { io, dir } = access;
  const cleaned = Segment.path(dir, group.base, 'log', 'cleaned');
  const swap = Segment.path(dir, group.base, 'log', 'swap');
  const index = currentIndex(access, group);
  if (index < 0 || access.positions.state !== 'open') {
    await io.unlink(cleaned).catch(() => undefined);
    return 'stale';
  }
  await io.rename(cleaned, swap);
  await access.flusher.pause();
  try {
    await io.fsyncDir(dir);
    for (const old of group.segments) await old.renameToDeleted();
    await io.rename(swap, Segment.path(dir, group.base, 'log'));
    await io.fsyncDir(dir);
    const segment = await openCleaned(access, group);
    access.segments.replace(index, group.segments.length, segment);
    for (const old of group.segments) await access.local.retireRenamed(old);
    for (const old of group.segments.slice(1)) await access.producerState.deleteSnapshot(old.baseOffset);
  } catch (error) {
    throw access.failStop.failWith(error);
  } finally {
    access.flusher.resume();
  }
  return 'swapped';
}

/** Opens the swapped-in .log: indexes rebuilt from it, the aborted transactions copied, everything durable. */
async function openCleaned(access: CleanerAccess, group: CleanedGroup): Promise<Segment> {
  const segment = await Segment.open(access.io, access.dir, group.base, access.config, { nowMs: access.now(), rollJitterMs: 0 });
  try {
    await segment.recover(noop);
    for (const txn of group.abortedTxns) segment.appendAbortedTxn(txn);
    await segment.onBecomeInactive();
    await segment.flushIndexes();
    // A new .txnindex (or the rebuilt .index files) must be in the directory before the swap counts as done.
    await access.io.fsyncDir(access.dir);
  } catch (error) {
    await segment.close().catch(noop);
    throw error;
  }
  segment.setFailureListener(access.failStop.onFailure);
  return segment;
}

function noop(): void {}
