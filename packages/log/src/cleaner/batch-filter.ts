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

import { buildBatch, crc32c, RecordBatch } from '@seglog/records';
import type { RecordInput } from '@seglog/records';
import type { OffsetMap } from './offset-map.js';

const DELETE_HORIZON_FLAG = 0x40;
const CODEC_MASK = 0x07;
const ATTRIBUTES_OFFSET = 21;
const CRC_OFFSET = 17;

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
  readonly mapEndOffset: number;
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

export function filterBatch(batch: RecordBatch, ctx: FilterContext): FilterOutcome {
  if (batch.isControl) return filterMarker(batch, ctx);
  const aborted = isAbortedData(batch, ctx);
  const expired = horizonPassed(batch, ctx);
  const kept: RecordInput[] = [];
  let tombstones = 0;
  const cursor = batch.records();
  const base = batch.baseTimestamp;
  while (cursor.next()) {
    if (aborted) continue;
    const key = cursor.key;
    if (key === null) continue;
    if (ctx.map.get(key) > cursor.offset) continue;
    const value = cursor.value;
    if (value === null) {
      if (expired) continue;
      tombstones++;
    }
    kept.push({
      key, value, headers: cursor.headers(), timestamp: base + cursor.timestampDelta, offsetDelta: cursor.offsetDelta,
    });
  }
  const count = batch.recordsCount;
  const isLast = batch.producerId >= 0 && ctx.lastBatchOfProducer.get(batch.producerId) === batch.lastOffset;
  const stays = kept.length > 0 || isLast;
  if (batch.isTransactional) ctx.txnKept.set(batch.producerId, (ctx.txnKept.get(batch.producerId) ?? false) || stays);
  if (!stays) return { kind: 'drop', removedRecords: count };
  const needsHorizon = tombstones > 0 && !batch.hasDeleteHorizon;
  const horizon = batch.hasDeleteHorizon ? batch.deleteHorizonMs : needsHorizon ? ctx.nowMs + ctx.deleteRetentionMs : null;
  if (horizon !== null && kept.length > 0 && horizon < ctx.earliestHorizonMs) ctx.earliestHorizonMs = horizon;
  if (kept.length === count && !needsHorizon) return KEEP;
  return { kind: 'rebuilt', bytes: rebuild(batch, kept, kept.length === 0 ? null : horizon), removedRecords: count - kept.length };
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
