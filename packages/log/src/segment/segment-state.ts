// A sealed segment's state (next offset, max timestamp, time-roll
// reference) known lazily (issue 24). After a clean shutdown the loader
// does not read sealed segments: it takes the next segment's base offset as
// their next offset (an upper bound: offsets between their last batch and
// that base do not exist, so reads and fetch positions stay right) and
// leaves the timestamps unknown. ensureSegmentState() reads them, the way
// the eager load does (loadTrustedState: the last index entries plus a
// header scan after them), before anything that needs them: time
// retention, timestamp lookups, the cleaner's lag checks, truncation.
//
// Invariants:
// - stateKnown false ⇒ nextOffset = readableNextOffset = the next
//   segment's base at load, maxTimestampSoFar = -1.
// - One load per segment at a time (concurrent callers share it); after it
//   stateKnown is true for good. A tail that does not hold whole batches
//   (garbage written after the clean stop) keeps what the scan found; reads
//   meet the bad bytes through the damage survey (segment-reader.ts).

import { withIndexes } from './index-residency.js';
import type { IndexedSegment } from './index-residency.js';
import { loadTrustedState } from './segment-recovery.js';
import type { RecoverableSegment } from './segment-recovery.js';

export interface LazyStateSegment extends RecoverableSegment, IndexedSegment {
  stateKnown: boolean;
}

const loading = new WeakMap<LazyStateSegment, Promise<void>>();

/** Marks a sealed segment's state unknown, its next offset bounded by `nextBase` (the following segment's base). */
export function assumeSealedState(segment: LazyStateSegment, nextBase: number): void {
  segment.stateKnown = false;
  segment.nextOffset = nextBase;
  segment.readableNextOffset = nextBase;
}

/** Reads the state of a segment marked by assumeSealedState (a no-op when known). */
export function ensureSegmentState(segment: LazyStateSegment): Promise<void> {
  if (segment.stateKnown) return Promise.resolve();
  let pending = loading.get(segment);
  if (pending === undefined) {
    const bound = segment.nextOffset;
    pending = withIndexes(segment, async () => {
      // The scan from the last index entry sets nextOffset exactly (an empty file keeps the bound).
      const whole = await loadTrustedState(segment);
      segment.readableNextOffset = whole ? segment.nextOffset : bound;
      segment.stateKnown = true;
    }).finally(() => loading.delete(segment));
    loading.set(segment, pending);
  }
  return pending;
}
