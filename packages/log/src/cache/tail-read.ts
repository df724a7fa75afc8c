// Reads of the active segment served from its TailCache on the caller (no
// file, no await): the same whole-batch range Segment.readRange computes from
// the file, computed from cached bytes (ARCHITECTURE.md "Placement", "Tail
// cache").
//
// Format read: batch headers (reference/kafka-storage.md §2): baseOffset
// int64 @0, batchLength int32 @8 (size = batchLength + 12), magic @16,
// lastOffsetDelta int32 @23. Headers are copied out with TailCache.peek (no
// memory lent); the returned data is lent as views (TailCache.read).
//
// Rule (the caller's read condition): the cache must hold the sparse-index
// floor entry's position for the offset and every byte after it (covers());
// the scan starts there, so no byte before the cache window is needed. Only
// bytes below the segment's readable (written) position are returned, as on
// the pool path, so both paths return exactly the same batches.

import { BATCH_HEADER_BYTES } from '../segment/batch-header-reader.js';
import { readInt64BE } from '../internal/int64.js';
import { logCorruption } from '../internal/log-errors.js';
import type { Segment, SegmentRange } from '../segment/segment.js';
import type { TailCache } from './tail-cache.js';

/** Header fields of the batch last scanned (one per log, reused: no per-read allocation). */
export class TailHeader {
  readonly scratch: Buffer;
  size: number;
  baseOffset: number;
  lastOffset: number;

  constructor() {
    this.scratch = Buffer.alloc(BATCH_HEADER_BYTES);
    this.size = 0;
    this.baseOffset = -1;
    this.lastOffset = -1;
  }

  /** Reads the header at `position`; false when fewer than 61 bytes remain below `limit`. */
  read(cache: TailCache, path: string, position: number, limit: number): boolean {
    if (limit - position < BATCH_HEADER_BYTES) return false;
    const ok = cache.peek(position, BATCH_HEADER_BYTES, this.scratch);
    if (!ok) throw logCorruption(path, 'tail cache lost bytes it covers', { position, limit });
    const w = this.scratch;
    const size = w.readInt32BE(8) + 12;
    const baseOffset = readInt64BE(w, 0);
    const lastOffset = baseOffset + w.readInt32BE(23);
    if (w.readInt8(16) !== 2 || size < BATCH_HEADER_BYTES || position + size > limit || !Number.isSafeInteger(baseOffset) || lastOffset < baseOffset) {
      throw logCorruption(path, 'malformed batch header in the tail cache', { position, limit, size, baseOffset });
    }
    this.size = size;
    this.baseOffset = baseOffset;
    this.lastOffset = lastOffset;
    return true;
  }
}

/**
 * Segment.readRange over the cache: whole batches from the one holding
 * `startOffset`, at most maxBytes (unless minOneMessage and the first batch
 * alone is larger), lastOffset < boundOffset, below the readable position.
 * 'miss' when the cache does not cover the floor entry; null when no batch
 * holds startOffset or later; length 0 when the first batch does not fit.
 */
export function readRangeFromCache(
  segment: Segment,
  cache: TailCache,
  header: TailHeader,
  request: { readonly startOffset: number; readonly maxBytes: number; readonly boundOffset: number; readonly minOneMessage: boolean },
): SegmentRange | null | 'miss' {
  const { startOffset, maxBytes, boundOffset } = request;
  const limit = segment.readablePosition;
  const path = segment.logFile.path;
  // An evicted index is the segment's to load (Segment.readRange), on the pool.
  if (!segment.offsetIndex.isLoaded) return 'miss';
  let position = segment.offsetIndex.lookup(startOffset).position;
  if (!cache.covers(position)) return 'miss';
  for (;;) {
    if (!header.read(cache, path, position, limit)) return null;
    if (header.lastOffset >= startOffset) break;
    position += header.size;
  }
  const start = position;
  const firstOffset = header.baseOffset;
  const end = Math.min(limit, start + (request.minOneMessage ? Math.max(maxBytes, header.size) : maxBytes));
  let nextOffset = startOffset;
  for (;;) {
    if (header.lastOffset >= boundOffset || position + header.size > end) break;
    position += header.size;
    nextOffset = header.lastOffset + 1;
    if (!header.read(cache, path, position, limit)) break;
  }
  return { position: start, length: position - start, firstOffset, nextOffset };
}
