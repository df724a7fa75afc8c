// Segment truncation: what cuts a Segment's .log and its state
// (reference/kafka-storage.md §18, §21). The format is Segment's
// (segment.ts): batches contiguous from position 0, indexes keyed by batch
// last offset.
//
// Invariants:
// - truncateSegment (follower truncation) cuts the file at the start of the
//   first batch with lastOffset ≥ offset, so the segment never ends inside a
//   batch; index entries ≥ offset go; afterwards size = readablePosition =
//   the cut position, and the max timestamp is that of the batches kept
//   (the last time-index entry plus a scan of what follows it). Only runs
//   when every accepted byte is written (readablePosition = size).
// - resetSegmentState empties the state and the indexes (restored to full
//   capacity) without touching the .log: a recovery scan rebuilds them from
//   position 0 (segment-recovery.ts).
// - The caller (Segment) forgets its reader's framing-checked prefix first:
//   the bytes it covered may be gone.

import { assert } from '@seglog/common';
import type { LogConfig } from '../log-config.js';
import { BatchHeaderReader } from './batch-header-reader.js';
import type { SegmentFileRef } from '../fetch-plan.js';
import type { OffsetIndex } from './offset-index.js';
import type { TimeIndex } from './time-index.js';
import type { TxnIndex } from './txn-index.js';

/** What truncation reads and sets of its Segment (a shape, so segment.ts and this file do not import each other). */
export interface TruncatableSegment {
  readonly baseOffset: number;
  readonly config: LogConfig;
  readonly logFile: SegmentFileRef;
  readonly offsetIndex: OffsetIndex;
  readonly timeIndex: TimeIndex;
  ensureState(): Promise<void>;
  readonly txnIndex: TxnIndex | null;
  size: number;
  readablePosition: number;
  nextOffset: number;
  readableNextOffset: number;
  maxTimestampSoFar: number;
  offsetOfMaxTimestampSoFar: number;
  rollingBasedTimestamp: number;
  createdMs: number;
  bytesSinceLastIndexEntry: number;
  preallocated: boolean;
  translateOffset(offset: number, reader: BatchHeaderReader, limit?: number): Promise<boolean>;
}

/**
 * Follower truncation (§18): cuts the file at the start of the first batch
 * with lastOffset ≥ offset and drops index entries ≥ offset. Returns the
 * bytes cut. The caller has drained pending writes.
 */
export async function truncateSegment(segment: TruncatableSegment, offset: number, nowMs: number): Promise<number> {
  assert(segment.readablePosition === segment.size, 'Segment.truncateTo: writes still pending');
  // It becomes the active segment: its exact next offset and timestamps (segment-state.ts).
  await segment.ensureState();
  const reader = new BatchHeaderReader(segment.logFile.file);
  const found = await segment.translateOffset(offset, reader, segment.size);
  segment.offsetIndex.truncateTo(offset);
  segment.timeIndex.truncateTo(offset);
  segment.txnIndex?.truncateTo(offset);
  await segment.offsetIndex.resize(segment.config.segmentIndexBytes);
  await segment.timeIndex.resize(segment.config.segmentIndexBytes);
  if (!found) return 0;
  const cut = segment.size - reader.position;
  await segment.logFile.file.truncate(reader.position);
  segment.size = reader.position;
  segment.readablePosition = reader.position;
  segment.nextOffset = reader.baseOffset;
  segment.readableNextOffset = reader.baseOffset;
  segment.bytesSinceLastIndexEntry = 0;
  segment.preallocated = false;
  if (segment.size === 0) {
    segment.createdMs = nowMs;
    segment.rollingBasedTimestamp = -1;
    segment.nextOffset = segment.baseOffset;
    segment.readableNextOffset = segment.baseOffset;
  }
  await reloadMaxTimestamp(segment, reader);
  return cut;
}

/** Max timestamp from the last time-index entry plus a scan of the batches after it. */
async function reloadMaxTimestamp(segment: TruncatableSegment, reader: BatchHeaderReader): Promise<void> {
  const last = segment.timeIndex.lastEntry();
  segment.maxTimestampSoFar = last.timestamp;
  segment.offsetOfMaxTimestampSoFar = last.offset;
  let position = segment.offsetIndex.lookup(last.offset).position;
  while (await reader.read(position, segment.size)) {
    if (reader.maxTimestamp > segment.maxTimestampSoFar) {
      segment.maxTimestampSoFar = reader.maxTimestamp;
      segment.offsetOfMaxTimestampSoFar = reader.lastOffset;
    }
    position += reader.size;
  }
}

/** Empties the state and indexes before a recovery scan (the .log is left as it is). */
export async function resetSegmentState(segment: TruncatableSegment): Promise<void> {
  segment.offsetIndex.truncate();
  segment.timeIndex.truncate();
  segment.txnIndex?.reset();
  await segment.offsetIndex.resize(segment.config.segmentIndexBytes);
  await segment.timeIndex.resize(segment.config.segmentIndexBytes);
  segment.size = 0;
  segment.readablePosition = 0;
  segment.nextOffset = segment.baseOffset;
  segment.readableNextOffset = segment.baseOffset;
  segment.maxTimestampSoFar = -1;
  segment.offsetOfMaxTimestampSoFar = segment.baseOffset;
  segment.rollingBasedTimestamp = -1;
  segment.bytesSinceLastIndexEntry = 0;
}
