// BatchFilter: what one pass of the cleaner keeps of each batch (Kafka's
// LogCleaner.cleanInto / MemoryRecords.filterTo, reference/kafka-storage.md
// §24), and the rebuilt bytes when a batch loses records or gains a delete
// horizon.
//
// Rules, per batch in offset order:
// - Data records: kept when the key is present and no later offset for it
//   is in the offset map, except a tombstone (null value) whose batch carries
//   a delete horizon that has passed and that lies in the mapped range (a
//   tombstone beyond the map could hide an older value the map never saw).
//   Null-key records (written before the log became compacted) go, as in
//   Kafka. Records of aborted transactions all go.
// - A batch keeps its header whatever it loses: base offset, lastOffsetDelta,
//   partition leader epoch, producer id/epoch, base sequence, attributes
//   (codec, timestamp type, transactional). A batch left empty goes, unless
//   it is the last data batch of an active producer: then it stays as a
//   61-byte header with count 0, baseTimestamp -1 and no codec, so duplicate
//   detection survives cleaning and reloads.
// - A retained batch holding a tombstone gets a delete horizon (attribute
//   bit 6, baseTimestamp = now + deleteRetentionMs) unless it has one.
// - A transaction marker stays while any batch of its transaction (even an
//   empty one) stays; a marker of a transaction with nothing left gets a
//   horizon and goes in a later pass once the horizon has passed.
// - A batch that keeps everything and needs no horizon is copied verbatim
//   (its CRC unchanged); a rebuilt batch gets a new CRC-32C.

import { assert } from '@seglog/common';
import { buildBatch, crc32c, RecordBatch } from '@seglog/records';
import type { RecordInput } from '@seglog/records';
import type { OffsetMap } from './offset-map.js';

const DELETE_HORIZON_FLAG = 0x40;
const CODEC_MASK = 0x07;
const ATTRIBUTES_OFFSET = 21;
const CRC_OFFSET = 17;
const BATCH_LENGTH_OFFSET = 8;
const MAX_TIMESTAMP_OFFSET = 35;
const RECORDS_COUNT_OFFSET = 57;
const RECORDS_OFFSET = 61;
/** baseOffset and batchLength: the bytes batchLength does not count. */
const LOG_OVERHEAD_BYTES = 12;
const NO_TIMESTAMP = -1;

/** Aborted transactions per producer: [firstOffset, lastOffset] ranges (from the .txnindex files). */
export class AbortedRanges {
  private readonly byProducer = new Map<number, Array<readonly [number, number]>>();

  add(producerId: number, firstOffset: number, lastOffset: number): void {
    let ranges = this.byProducer.get(producerId);
    if (ranges === undefined) {
      ranges = [];
      this.byProducer.set(producerId, ranges);
    }
    ranges.push([firstOffset, lastOffset]);
  }

  contains(producerId: number, offset: number): boolean {
    const ranges = this.byProducer.get(producerId);
    if (ranges === undefined) return false;
    for (const [first, last] of ranges) if (offset >= first && offset <= last) return true;
    return false;
  }
}

export interface FilterContext {
  readonly map: OffsetMap;
  /** Offsets at or above this were not mapped this pass. */
  mapEndOffset: number;
  readonly nowMs: number;
  readonly deleteRetentionMs: number;
  /** Last data batch (its lastOffset) of every active producer. */
  readonly lastBatchOfProducer: ReadonlyMap<number, number>;
  readonly aborted: AbortedRanges;
  /** Producers whose transaction is being scanned → whether any of its batches stayed. */
  readonly txnKept: Map<number, boolean>;
  /** The earliest delete horizon among the batches kept (Infinity: none): when a pass is due again. */
  earliestHorizonMs: number;
}

export type FilterOutcome =
  | { readonly kind: 'keep'; readonly removedRecords: 0 }
  | { readonly kind: 'drop'; readonly removedRecords: number }
  | { readonly kind: 'rebuilt'; readonly bytes: Buffer; readonly removedRecords: number };

const KEEP: FilterOutcome = { kind: 'keep', removedRecords: 0 };

/** Whether records of `batch` are data of an aborted transaction. */
function isAbortedData(batch: RecordBatch, ctx: FilterContext): boolean {
  return batch.isTransactional && ctx.aborted.contains(batch.producerId, batch.baseOffset);
}

/** The horizon has passed and the batch lies in the mapped range: its tombstones (or the marker) may go. */
function horizonPassed(batch: RecordBatch, ctx: FilterContext): boolean {
  return batch.hasDeleteHorizon && ctx.nowMs >= batch.deleteHorizonMs && batch.lastOffset < ctx.mapEndOffset;
}

// Kept records of the batch being filtered, as [position, end) ranges of the cursor's buffer: reused, so an
// uncompressed batch is filtered with no per-record object (the previous form built one RecordInput per kept
// record and re-encoded them all; the profile of the compaction bench's p99 case showed it, its CRC and GC).
const keptRanges: number[] = [];

export function filterBatch(batch: RecordBatch, ctx: FilterContext): FilterOutcome {
  if (batch.isControl) return filterMarker(batch, ctx);
  const aborted = isAbortedData(batch, ctx);
  const expired = horizonPassed(batch, ctx);
  keptRanges.length = 0;
  let keptCount = 0;
  let tombstones = 0;
  let maxTimestamp = NO_TIMESTAMP;
  const cursor = batch.records();
  const base = batch.baseTimestamp;
  while (cursor.next()) {
    if (aborted) continue;
    const key = cursor.key;
    if (key === null) continue;
    if (ctx.map.get(key) > cursor.offset) continue;
    if (cursor.valueLength < 0) {
      if (expired) continue;
      tombstones++;
    }
    keptCount++;
    if (base + cursor.timestampDelta > maxTimestamp) maxTimestamp = base + cursor.timestampDelta;
    const position = cursor.recordPosition;
    const last = keptRanges.length - 1;
    // Adjacent kept records are one range: a batch that loses few records is copied in few pieces.
    if (last > 0 && keptRanges[last] === position) keptRanges[last] = position + cursor.sizeInBytes;
    else keptRanges.push(position, position + cursor.sizeInBytes);
  }
  const count = batch.recordsCount;
  const isLast = batch.producerId >= 0 && ctx.lastBatchOfProducer.get(batch.producerId) === batch.lastOffset;
  const stays = keptCount > 0 || isLast;
  if (batch.isTransactional) ctx.txnKept.set(batch.producerId, (ctx.txnKept.get(batch.producerId) ?? false) || stays);
  if (!stays) return { kind: 'drop', removedRecords: count };
  const needsHorizon = tombstones > 0 && !batch.hasDeleteHorizon;
  const horizon = batch.hasDeleteHorizon ? batch.deleteHorizonMs : needsHorizon ? ctx.nowMs + ctx.deleteRetentionMs : null;
  if (horizon !== null && keptCount > 0 && horizon < ctx.earliestHorizonMs) ctx.earliestHorizonMs = horizon;
  if (keptCount === count && !needsHorizon) return KEEP;
  const removedRecords = count - keptCount;
  if (keptCount === 0) return { kind: 'rebuilt', bytes: rebuild(batch, [], null), removedRecords };
  // Uncompressed, baseTimestamp unchanged (no new horizon): the kept records' bytes are valid as they are
  // (their deltas are against the unchanged base offset and timestamp); only the header's length, count,
  // maxTimestamp and CRC change. Otherwise (a codec, or a new horizon moving baseTimestamp) re-encode.
  if (batch.compression === 0 && !needsHorizon) {
    const logAppendTime = batch.timestampType === 'LogAppendTime';
    const header = { count: keptCount, maxTimestamp: logAppendTime ? batch.maxTimestamp : maxTimestamp };
    const fastBytes = copyKept(batch, cursor.buffer, header);
    return { kind: 'rebuilt', bytes: fastBytes, removedRecords };
  }
  return { kind: 'rebuilt', bytes: rebuild(batch, keptRecords(batch), horizon), removedRecords };
}

/** The records of `batch` inside keptRanges, as builder inputs (a second walk: only for re-encoded batches). */
function keptRecords(batch: RecordBatch): RecordInput[] {
  const kept: RecordInput[] = [];
  const cursor = batch.records();
  const base = batch.baseTimestamp;
  let range = 0;
  while (cursor.next()) {
    const position = cursor.recordPosition;
    while (range < keptRanges.length && (keptRanges[range + 1] as number) <= position) range += 2;
    if (range >= keptRanges.length || position < (keptRanges[range] as number)) continue;
    kept.push({
      key: cursor.key, value: cursor.value, headers: cursor.headers(), timestamp: base + cursor.timestampDelta, offsetDelta: cursor.offsetDelta,
    });
  }
  return kept;
}

/** The 61-byte header of `batch` followed by the kept ranges of `payload`; length, count, maxTimestamp, CRC patched. */
function copyKept(batch: RecordBatch, payload: Buffer, header: { readonly count: number; readonly maxTimestamp: number }): Buffer {
  const { count, maxTimestamp } = header;
  assert(count > 0 && count <= batch.recordsCount, 'copyKept: a kept count within the batch');
  let size = RECORDS_OFFSET;
  for (let i = 0; i < keptRanges.length; i += 2) size += (keptRanges[i + 1] as number) - (keptRanges[i] as number);
  const bytes = Buffer.allocUnsafe(size);
  batch.bytes().copy(bytes, 0, 0, RECORDS_OFFSET);
  let position = RECORDS_OFFSET;
  for (let i = 0; i < keptRanges.length; i += 2) position += payload.copy(bytes, position, keptRanges[i] as number, keptRanges[i + 1] as number);
  assert(position === size, 'copyKept: the kept ranges fill the batch exactly');
  bytes.writeInt32BE(size - LOG_OVERHEAD_BYTES, BATCH_LENGTH_OFFSET);
  bytes.writeInt32BE(Math.floor(maxTimestamp / 0x1_0000_0000), MAX_TIMESTAMP_OFFSET);
  bytes.writeUInt32BE(maxTimestamp >>> 0, MAX_TIMESTAMP_OFFSET + 4);
  bytes.writeInt32BE(count, RECORDS_COUNT_OFFSET);
  bytes.writeUInt32BE(crc32c(bytes.subarray(ATTRIBUTES_OFFSET)), CRC_OFFSET);
  return bytes;
}

function filterMarker(batch: RecordBatch, ctx: FilterContext): FilterOutcome {
  const txnKept = ctx.txnKept.get(batch.producerId) === true;
  ctx.txnKept.delete(batch.producerId);
  if (txnKept) return KEEP;
  if (batch.hasDeleteHorizon) {
    if (horizonPassed(batch, ctx)) return { kind: 'drop', removedRecords: batch.recordsCount };
    if (batch.deleteHorizonMs < ctx.earliestHorizonMs) ctx.earliestHorizonMs = batch.deleteHorizonMs;
    return KEEP;
  }
  if (ctx.nowMs + ctx.deleteRetentionMs < ctx.earliestHorizonMs) ctx.earliestHorizonMs = ctx.nowMs + ctx.deleteRetentionMs;
  const records: RecordInput[] = [];
  const cursor = batch.records();
  while (cursor.next()) {
    records.push({ key: cursor.key, value: cursor.value, headers: cursor.headers(), timestamp: batch.baseTimestamp + cursor.timestampDelta, offsetDelta: cursor.offsetDelta });
  }
  return { kind: 'rebuilt', bytes: rebuild(batch, records, ctx.nowMs + ctx.deleteRetentionMs), removedRecords: 0 };
}

/** The batch with only `records`, its header kept; `horizon` non-null sets bit 6 and baseTimestamp. */
function rebuild(batch: RecordBatch, records: readonly RecordInput[], horizon: number | null): Buffer {
  const empty = records.length === 0;
  const logAppendTime = batch.timestampType === 'LogAppendTime';
  const bytes = buildBatch({
    records,
    baseOffset: batch.baseOffset,
    partitionLeaderEpoch: batch.partitionLeaderEpoch,
    compression: empty ? 0 : batch.compression,
    baseTimestamp: horizon ?? (empty ? -1 : batch.baseTimestamp),
    ...(logAppendTime || empty ? { maxTimestamp: batch.maxTimestamp } : {}),
    timestampType: batch.timestampType,
    producerId: batch.producerId,
    producerEpoch: batch.producerEpoch,
    baseSequence: batch.baseSequence,
    transactional: batch.isTransactional,
    lastOffsetDelta: batch.lastOffsetDelta,
  });
  let attributes = batch.attributes & ~DELETE_HORIZON_FLAG;
  if (empty) attributes &= ~CODEC_MASK;
  if (horizon !== null) attributes |= DELETE_HORIZON_FLAG;
  bytes.writeUInt16BE(attributes, ATTRIBUTES_OFFSET);
  bytes.writeUInt32BE(crc32c(bytes.subarray(ATTRIBUTES_OFFSET)), CRC_OFFSET);
  return bytes;
}

/** The batch as a 61-byte header with count 0 (its offsets and producer fields kept). */
export function emptyBatch(batch: RecordBatch): Buffer {
  return rebuild(batch, [], null);
}

/** Whether a batch carries a record the offset map must learn (data, not aborted): the keys it maps, in order. */
/** The keys are views into the batch's bytes: valid while the batch is. */
export function mappedKeys(batch: RecordBatch, aborted: AbortedRanges, out: Buffer[], offsets: number[]): void {
  out.length = 0;
  offsets.length = 0;
  if (batch.isControl || (batch.isTransactional && aborted.contains(batch.producerId, batch.baseOffset))) return;
  const cursor = batch.records();
  while (cursor.next()) {
    const key = cursor.key;
    if (key === null) continue;
    out.push(key);
    offsets.push(cursor.offset);
  }
}
