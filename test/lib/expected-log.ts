// The expected contents of a test log, as a pure function of offsets.
//
// Every test that appends through `appendAsLeader` here appends, at log end
// offset `base`, exactly `producerBatchAt(base)`: a batch whose record count,
// keys, values and timestamps depend only on `base`. So the whole log that any
// run can ever produce is one fixed sequence of batches (starting at 0 or at
// whatever offset the log starts from), and a checker can tell, for any batch
// it finds on disk, the exact bytes that belong there: the producer batch with
// its base offset and partition leader epoch patched in, as the engine does.
// This lets the kill -9 parent check records its child appended but never got
// to report, and makes "a gap-free prefix of what was appended" checkable
// without shipping batch bytes between processes.

import { buildBatch, RecordBatch } from '@seglog/records';

/** Timestamp of the record at offset 0; record `o` has timestamp T0 + o. */
export const T0 = 1_700_000_000_000;

/** A small integer hash (murmur3 finaliser), so sizes look random but are fixed. */
export function mix(value: number): number {
  let h = (value ^ 0x9e3779b9) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

export interface BatchShape {
  /** Records per batch: 1 + mix(base) % recordsSpread. */
  readonly recordsSpread: number;
  /** Value bytes: valueMin + mix(offset) % valueSpread. */
  readonly valueMin: number;
  readonly valueSpread: number;
}

/** Small batches of 1–4 records, 16–63-byte values: a few per 1 KiB segment. */
export const SMALL_BATCHES: BatchShape = { recordsSpread: 4, valueMin: 16, valueSpread: 48 };

export function recordCountAt(base: number, shape: BatchShape = SMALL_BATCHES): number {
  return 1 + (mix(base) % shape.recordsSpread);
}

/** The value of the record at `offset`: its offset (uint32 BE), then a pattern seeded by the offset. */
export function valueAt(offset: number, shape: BatchShape = SMALL_BATCHES): Buffer {
  const length = shape.valueMin + (mix(offset * 7 + 1) % shape.valueSpread);
  const value = Buffer.allocUnsafe(Math.max(4, length));
  for (let i = 0; i < value.length; i++) value[i] = (offset * 31 + i * 7) & 0xff;
  value.writeUInt32BE(offset >>> 0, 0);
  return value;
}

/** The producer batch (base offset 0, no leader epoch) a test appends at log end offset `base`. */
export function producerBatchAt(base: number, shape: BatchShape = SMALL_BATCHES): Buffer {
  const count = recordCountAt(base, shape);
  const records = [];
  for (let i = 0; i < count; i++) {
    const offset = base + i;
    records.push({
      key: offset % 3 === 0 ? null : `k${offset}`,
      value: valueAt(offset, shape),
      timestamp: T0 + offset,
      headers: offset % 5 === 0 ? [{ key: 'h', value: `v${offset}` }] : [],
    });
  }
  return buildBatch({ records });
}

/** The bytes the log must hold for the batch appended at `base` under `leaderEpoch`. */
export function expectedBatchAt(base: number, leaderEpoch: number, shape: BatchShape = SMALL_BATCHES): Buffer {
  const bytes = producerBatchAt(base, shape);
  const batch = new RecordBatch(bytes);
  batch.setBaseOffset(base);
  batch.setPartitionLeaderEpoch(leaderEpoch);
  return bytes;
}
