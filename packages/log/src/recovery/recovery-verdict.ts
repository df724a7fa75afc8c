// recoveryVerdict: the one decision of what recovery may do with a segment
// whose scan found an invalid batch, a zero tail or an offset gap. The
// loader (recovery/log-loader.ts) calls it for every segment it recovers;
// `seglog recover` runs the loader itself and `seglog verify` may call it on
// its own scan, so the engine and the CLI cannot disagree on the same bytes.
//
// Rules, in order (reference/kafka-storage.md §21, and where we are stricter):
// - nothing invalid and no gap to the next segment: keep;
// - an all-zero tail with the next segment starting exactly where the valid
//   batches end (reservation zeros or direct-write padding whose trim was not
//   durable yet): cut the zeros, keep every later segment — nothing is lost;
// - recovery point unknown (the checkpoint file could not be read): only an
//   all-zero tail of the last segment may be cut (zeros are not data, see
//   ARCHITECTURE.md "write path"); anything else is refused, because nothing
//   says the bytes were not durable;
// - the cut reaches below the recovery point (offsets the last checkpoint
//   called durable): refused;
// - after a clean shutdown, a segment other than the last lost bytes: every
//   byte of a sealed segment was durable at close, so this is damage, not a
//   torn tail; refused (cutting it would also delete every later segment);
// - only a gap to the next segment: after an unclean stop, at or beyond a
//   known recovery point, it follows a lost unsynced write with a newer file
//   kept (ENGINE BUG 3 in test/crash-points.test.ts): the later segments go;
//   any other gap (below the recovery point: durable, as follower appends or
//   compaction leave them; recovery point unknown) is kept;
// - otherwise a torn tail at or beyond the recovery point: cut it, and when
//   the segment is not the last, delete every later segment (they follow a
//   write that never became durable, so none of their offsets is durable
//   either: their base offsets are above the cut, which is ≥ the recovery point).
// Kafka's behaviour (cut at the first invalid batch whatever the recovery
// point says, delete every later segment) is the caller's explicit choice
// (onCorruption 'truncate'); the verdict is then only advice.

import type { RecoveryStop } from '../segment/segment.js';

export interface RecoveryFacts {
  readonly hadCleanShutdown: boolean;
  /** The checkpointed recovery point; null when the checkpoint could not be read (unknown). */
  readonly recoveryPoint: number | null;
  /** Why the scan of the segment stopped. */
  readonly stop: RecoveryStop;
  /** Offset after the last valid batch (the base offset when none). */
  readonly nextOffset: number;
  /** Bytes after the last valid batch. */
  readonly truncatedBytes: number;
  /** Base offset of the next segment; null for the last segment. */
  readonly nextSegmentBase: number | null;
}

export type RecoveryVerdict =
  | { readonly action: 'keep' }
  /** Cut `truncatedBytes` at the end of the segment; `deleteLater`: every later segment goes too. */
  | { readonly action: 'cut'; readonly deleteLater: boolean }
  | { readonly action: 'refuse'; readonly reason: string };

const KEEP: RecoveryVerdict = { action: 'keep' };

export function recoveryVerdict(facts: RecoveryFacts): RecoveryVerdict {
  const isLast = facts.nextSegmentBase === null;
  const lost = facts.truncatedBytes > 0;
  const gap = !isLast && (facts.nextSegmentBase as number) > facts.nextOffset;
  if (!lost) {
    // Only a gap: a lost write when it lies at or beyond a known recovery point after an unclean stop,
    // else a durable gap (follower appends, compaction) or one nothing licenses cutting.
    const lostWrite = gap && !facts.hadCleanShutdown && facts.recoveryPoint !== null && facts.nextOffset >= facts.recoveryPoint;
    return lostWrite ? { action: 'cut', deleteLater: true } : KEEP;
  }
  if (facts.stop === 'zero' && facts.nextSegmentBase === facts.nextOffset) return { action: 'cut', deleteLater: false };
  const what = `invalid batch (${facts.stop})`;
  if (facts.recoveryPoint === null) {
    if (facts.stop === 'zero' && isLast) return { action: 'cut', deleteLater: false };
    return { action: 'refuse', reason: `${what} and the recovery point is unknown (the recovery-point checkpoint could not be read)` };
  }
  if (facts.nextOffset < facts.recoveryPoint) return { action: 'refuse', reason: `${what} below the recovery point` };
  if (facts.hadCleanShutdown && !isLast) {
    return { action: 'refuse', reason: `${what} in a sealed segment after a clean shutdown (damage, not a torn tail; the later segments are intact)` };
  }
  return { action: 'cut', deleteLater: !isLast };
}
