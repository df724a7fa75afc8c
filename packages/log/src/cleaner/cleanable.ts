// The cleanable section of a log and its dirty ratio (Kafka's
// LogCleanerManager.cleanableOffsets and LogToClean).
//
//   [logStart ............ firstDirty ............ firstUncleanable ... LEO)
//    clean section (cleaned    dirty section         never cleaned yet: the
//    by an earlier pass)       (the offset map)      active segment, beyond
//                                                    the HW or the first
//                                                    unstable offset, or
//                                                    younger than the lag
//
// firstDirty is the cleaner checkpoint, reset to the log start when it is
// unknown, below the log start or beyond the LEO (a truncation). The first
// uncleanable offset is always a segment base: a segment is cleanable only
// when every offset of it is below the HW and the first unstable offset, it
// is not the active segment, and (min.compaction.lag.ms) its largest
// timestamp is at least minCompactionLagMs old. Ratio = dirty bytes /
// (clean + dirty bytes), by whole segments.

import type { LogConfig } from '../log-config.js';
import type { Segment } from '../segment/segment.js';
import type { CleanerAccess } from './cleaner-access.js';

export interface CleanableRange {
  readonly firstDirtyOffset: number;
  readonly firstUncleanableOffset: number;
  readonly cleanBytes: number;
  readonly dirtyBytes: number;
  /** dirty / (clean + dirty); 0 when both are 0. */
  readonly dirtyRatio: number;
  /** A dirty segment is older than max.compaction.lag.ms: clean whatever the ratio. */
  readonly maxLagExceeded: boolean;
}

export function cleanableRange(access: CleanerAccess, checkpointed: number | undefined, nowMs: number): CleanableRange {
  const positions = access.positions;
  const config = access.config;
  const all = access.segments.all();
  let firstDirty = checkpointed ?? positions.logStart;
  if (firstDirty < positions.logStart || firstDirty > positions.logEnd) firstDirty = positions.logStart;
  const unstable = access.producerState.firstUnstableOffset();
  let uncleanable = (all[all.length - 1] as Segment).baseOffset;
  for (let i = 0; i < all.length - 1; i++) {
    const segment = all[i] as Segment;
    const end = (all[i + 1] as Segment).baseOffset;
    const young = end > firstDirty && nowMs - segment.largestTimestamp < config.minCompactionLagMs;
    if (end > positions.highWatermark || (unstable !== null && end > unstable) || young) {
      uncleanable = segment.baseOffset;
      break;
    }
  }
  if (firstDirty > uncleanable) firstDirty = Math.max(uncleanable, positions.logStart);
  let cleanBytes = 0;
  let dirtyBytes = 0;
  let maxLagExceeded = false;
  for (let i = 0; i < all.length - 1; i++) {
    const segment = all[i] as Segment;
    const end = (all[i + 1] as Segment).baseOffset;
    if (segment.baseOffset >= uncleanable) break;
    if (end <= firstDirty) {
      cleanBytes += segment.size;
      continue;
    }
    dirtyBytes += segment.size;
    if (exceedsMaxLag(segment, config, nowMs)) maxLagExceeded = true;
  }
  const total = cleanBytes + dirtyBytes;
  return {
    firstDirtyOffset: firstDirty, firstUncleanableOffset: uncleanable, cleanBytes, dirtyBytes,
    dirtyRatio: total === 0 ? 0 : dirtyBytes / total, maxLagExceeded,
  };
}

function exceedsMaxLag(segment: Segment, config: LogConfig, nowMs: number): boolean {
  if (config.maxCompactionLagMs === Number.MAX_SAFE_INTEGER) return false;
  const first = segment.rollingBasedTimestamp >= 0 ? segment.rollingBasedTimestamp : segment.largestTimestamp;
  return nowMs - first > config.maxCompactionLagMs;
}

/** Whether a pass is due: dirty bytes, and the ratio reached or the max lag exceeded. */
export function needsCleaning(range: CleanableRange, config: LogConfig): boolean {
  if (range.dirtyBytes === 0) return false;
  return range.dirtyRatio >= config.minCleanableDirtyRatio || range.maxLagExceeded;
}
