// Damage survey: where a segment's .log is damaged, found when a read met a
// batch header it cannot trust (issue 23 item 0c). Runs once per segment,
// on the pool, only after a read failed and an index rebuild failed too
// (the .log itself is damaged, not the index).
//
// Format read (reference/kafka-storage.md §2): batches back to back from
// position 0 to the written position. A batch is accepted when magic = 2,
// 61 ≤ size, it lies below the limit, its offsets follow the previous
// batch's (baseOffset ≥ previous lastOffset + 1, lastOffset below the
// segment's next offset) and its CRC-32C matches: the CRC is what catches a
// damaged batch length (the batch it frames is the wrong bytes), which a
// header check alone would pass and which would send broken framing to
// clients. After a damaged batch the survey resynchronises on the first
// later position, byte by byte, that starts an accepted batch (a header
// prefilter, then the CRC); the bytes in between are one DamagedRange.
//
// Invariants: ranges are ascending and disjoint; [position, resumePosition)
// holds no accepted batch start; offsets [firstOffset, nextOffset) are in no
// accepted batch; resumePosition = limit (nextOffset = the segment's next
// offset) when nothing after the damage is readable.

import type { IoFile } from '@seglog/io';
import { RecordBatch } from '@seglog/records';
import { readInt64BE } from '../internal/int64.js';

const HEADER_BYTES = 61;
const SCAN_CHUNK_BYTES = 1024 * 1024;

export interface DamagedRange {
  /** Position of the first damaged byte (the start of the batch that failed). */
  readonly position: number;
  /** Position of the next accepted batch, or the limit. */
  readonly resumePosition: number;
  /** Offset after the last accepted batch before the damage (the segment base when none). */
  readonly firstOffset: number;
  /** Base offset of the batch at resumePosition, or the segment's next offset. */
  readonly nextOffset: number;
}

export interface SurveyBounds {
  readonly baseOffset: number;
  /** The written position: bytes at or past it are not surveyed. */
  readonly limit: number;
  /** The offset after the segment's last written batch. */
  readonly limitOffset: number;
}

/** The damaged ranges of [0, limit) of `file`, ascending (empty when every batch is accepted). */
export async function surveyDamage(file: IoFile, bounds: SurveyBounds): Promise<DamagedRange[]> {
  const ranges: DamagedRange[] = [];
  let position = 0;
  let nextOffset = bounds.baseOffset;
  while (position < bounds.limit) {
    const accepted = await acceptedBatchAt(file, position, nextOffset, bounds);
    if (accepted !== null) {
      position += accepted.size;
      nextOffset = accepted.lastOffset + 1;
      continue;
    }
    const resume = await resumeAfter(file, position, nextOffset, bounds);
    ranges.push({ position, resumePosition: resume.position, firstOffset: nextOffset, nextOffset: resume.baseOffset });
    position = resume.position;
  }
  return ranges;
}

interface Accepted {
  readonly size: number;
  readonly baseOffset: number;
  readonly lastOffset: number;
}

/** The batch at `position` if it is accepted (header sane, offsets in order, CRC valid), else null. */
async function acceptedBatchAt(file: IoFile, position: number, minOffset: number, bounds: SurveyBounds): Promise<Accepted | null> {
  if (bounds.limit - position < HEADER_BYTES) return null;
  const header = Buffer.allocUnsafe(HEADER_BYTES);
  if ((await file.pread(header, position, HEADER_BYTES)) < HEADER_BYTES) return null;
  const shape = headerShape(header, 0, position, minOffset, bounds);
  if (shape === null) return null;
  const bytes = Buffer.allocUnsafe(shape.size);
  if ((await file.pread(bytes, position, shape.size)) < shape.size) return null;
  return new RecordBatch(bytes).isValid() ? shape : null;
}

/** The header checks of an accepted batch (no CRC), on 61 bytes at `at` of `bytes`. */
function headerShape(bytes: Buffer, at: number, position: number, minOffset: number, bounds: SurveyBounds): Accepted | null {
  if (bytes.readInt8(at + 16) !== 2) return null;
  const size = bytes.readInt32BE(at + 8) + 12;
  if (size < HEADER_BYTES || position + size > bounds.limit) return null;
  const baseOffset = readInt64BE(bytes, at);
  if (!Number.isSafeInteger(baseOffset) || baseOffset < minOffset) return null;
  const lastOffset = baseOffset + bytes.readInt32BE(at + 23);
  if (lastOffset < baseOffset || lastOffset >= bounds.limitOffset) return null;
  return { size, baseOffset, lastOffset };
}

/** The first accepted batch after the damaged one at `damaged`, trying every later position. */
async function resumeAfter(file: IoFile, damaged: number, minOffset: number, bounds: SurveyBounds): Promise<{ position: number; baseOffset: number }> {
  const window = Buffer.allocUnsafe(SCAN_CHUNK_BYTES + HEADER_BYTES);
  for (let chunk = damaged + 1; chunk < bounds.limit; chunk += SCAN_CHUNK_BYTES) {
    const read = await file.pread(window, chunk, Math.min(window.length, bounds.limit - chunk));
    for (let at = 0; at < Math.min(SCAN_CHUNK_BYTES, read - HEADER_BYTES + 1); at++) {
      // Cheap prefilter (magic, length, offsets) before the CRC of a candidate.
      if (window[at + 16] !== 2 || headerShape(window, at, chunk + at, minOffset, bounds) === null) continue;
      const accepted = await acceptedBatchAt(file, chunk + at, minOffset, bounds);
      if (accepted !== null) return { position: chunk + at, baseOffset: accepted.baseOffset };
    }
  }
  return { position: bounds.limit, baseOffset: bounds.limitOffset };
}
