// The load producer's batching with --streaming-compression (franz-go's
// StreamingCompression, PR #1366; packages/records README "Batches bounded
// by compressed size"). Per partition the backlog holds RECORDS, never
// compressed bytes that could be thrown away: a run of consecutive sequences
// with each record's stamps (when it entered, in `addedAt`, and its
// timestamp), kept in a ring (StampRing). Payloads are derived from
// (producer, partition, sequence) (payload.ts), so they are generated when a
// batch is sealed, not kept.
//
// Sealing (`ready`), when the backlog's first batch is ready (uncompressed
// batchBytes reached, lingered, or flush):
//   merge  the backlog holds more than one uncompressed batch: its oldest
//          records (up to an offer sized from the last merge) are FROZEN
//          and handed, as values and timestamps, to a merge worker
//          (merge-pool.ts, merge-job.ts), which streams them through ONE
//          BoundedBatchBuilder (bound maxBatchBytes, the broker's
//          max.message.bytes, on the COMPRESSED batch) until it refuses
//          one, and seals it with the span's base sequence. `ready` answers
//          -1 meanwhile; admission (`tryAdd`) goes on behind the frozen span
//          and never waits on compression (franz-go's freeze-steal-merge).
//          When the worker answers, the blob is spliced in as the sealed
//          batch if the span is still there (same generation: no purge
//          meanwhile), the records it did not take (never compressed) are
//          thawed, and the producer is woken (`setWake`). A merge whose span
//          is gone is discarded. Each record is compressed exactly once.
//   plain  otherwise, or after a failed merge: the uncompressed-bounded
//          path (buildBatch of up to one batchBytes' worth, one-shot), with
//          the records' original timestamps, counted by their exact encoded
//          size (a stamp that lingered long takes a longer timestampDelta).
//          A plain batch stays within maxBatchBytes uncompressed too, since
//          after a codec failure it goes uncompressed. Codec none never
//          merges: its compressed size is its uncompressed size, so its
//          plain batches take up to maxBatchBytes' worth at the plain path's
//          cost (streaming it cost 2.2x buildBatch in a micro benchmark:
//          three copies instead of one).
// A failed merge (a codec error or a broken bound in the builder, a worker
// that died) demotes the accumulator to the plain path for good (franz-go
// disables merging on its safety net): the frozen records thaw and drain on
// the plain path with their original stamps; none is lost.
// A sealed batch is frozen: base sequence written at seal (sealed batches
// are taken in order, one at a time per partition), bytes and exact length
// final; `take` hands it out, a retry resends it verbatim.
// Bounds: value bytes not yet taken (frozen ones included) <= bufferBytes
// (Kafka's buffer.memory); one merge in flight per partition.

import { SeglogError, assert } from '@seglog/common';
import { Codec, buildBatch } from '@seglog/records';
import type { RecordInput } from '@seglog/records';
import type { BatchAccumulator, DroppedRecords, SentBatch } from './batch-accumulator.js';
import type { LoadOptions } from './load-options.js';
import type { MergeJob, MergeResult } from './merge-job.js';
import { MergePool } from './merge-pool.js';
import { fillPayload } from './payload.js';
import type { AccumulatorProducer } from './uncompressed-accumulator.js';
import { BATCH_HEADER_BYTES, recordsPerBatch } from './uncompressed-accumulator.js';

const RECORDS_COUNT_OFFSET = 57;
const BASE_SEQUENCE_OFFSET = 53;
const SEQUENCE_IN_PAYLOAD = 8;
const RING_CAPACITY_MIN = 1024;

/** Bytes of a varint holding `zigzagged` (a non-negative zigzag-encoded value < 2^53). */
function varintSize(zigzagged: number): number {
  let n = 1;
  for (let v = zigzagged; v >= 128; v = Math.floor(v / 128)) n++;
  return n;
}

function zigzag(value: number): number {
  return value >= 0 ? value * 2 : -value * 2 - 1;
}

/** FIFO of per-record stamps (added at, timestamp); capacity a power of two, grown by doubling. */
class StampRing {
  length: number;
  private head: number;
  private addedAt: Float64Array;
  private timestamps: Float64Array;

  constructor() {
    this.length = 0;
    this.head = 0;
    this.addedAt = new Float64Array(RING_CAPACITY_MIN);
    this.timestamps = new Float64Array(RING_CAPACITY_MIN);
  }

  push(addedAt: number, timestamp: number): void {
    if (this.length === this.addedAt.length) this.grow();
    const at = (this.head + this.length) & (this.addedAt.length - 1);
    this.addedAt[at] = addedAt;
    this.timestamps[at] = timestamp;
    this.length++;
  }

  addedAtOf(index: number): number {
    assert(index < this.length, 'StampRing: index out of range');
    return this.addedAt[(this.head + index) & (this.addedAt.length - 1)] as number;
  }

  timestampOf(index: number): number {
    assert(index < this.length, 'StampRing: index out of range');
    return this.timestamps[(this.head + index) & (this.timestamps.length - 1)] as number;
  }

  shift(count: number): void {
    assert(count <= this.length, 'StampRing: shift beyond length');
    this.head = (this.head + count) & (this.addedAt.length - 1);
    this.length -= count;
  }

  private grow(): void {
    const n = this.addedAt.length;
    const addedAt = new Float64Array(n * 2);
    const timestamps = new Float64Array(n * 2);
    for (let i = 0; i < this.length; i++) {
      addedAt[i] = this.addedAt[(this.head + i) & (n - 1)] as number;
      timestamps[i] = this.timestamps[(this.head + i) & (n - 1)] as number;
    }
    this.addedAt = addedAt;
    this.timestamps = timestamps;
    this.head = 0;
  }
}

interface FrozenSpan {
  readonly kind: MergeJob['kind'];
  readonly firstSequence: number;
  readonly count: number;
  readonly openedAt: number;
}

class PartitionBacklog {
  /** Sequence of the oldest record not sealed; the records are [firstSequence, firstSequence + stamps.length). */
  firstSequence = 0;
  readonly stamps = new StampRing();
  /** Sealed, frozen, not yet taken (at most one). */
  sealed: SentBatch | null = null;
  /** The oldest `frozen` records are in a merge in flight (0: none). */
  frozen = 0;
}

/** First offer of a merge: records of this many times maxBatchBytes uncompressed (a compression ratio above any codec's on text). */
const FIRST_OFFER_RATIO = 8;

export class StreamingAccumulator implements BatchAccumulator {
  /** Merged batches sealed, the uncompressed-bounded batches' worth they replaced, and demotions (stats for the report). */
  merges: number;
  mergedBatchesIn: number;
  mergedBatchesOut: number;
  mergeErrors: number;
  /** Merges handed to the pool (spliced, discarded or failed included). */
  mergesStarted: number;
  private readonly o: LoadOptions;
  private readonly p: AccumulatorProducer;
  private readonly recordsPerBatch: number;
  /** Bound of a plain batch, uncompressed: batchBytes (codec none: maxBatchBytes), never above maxBatchBytes. */
  private readonly plainBatchBytes: number;
  private readonly partitions: PartitionBacklog[];
  private readonly identity: { producer: number; partition: number; sequence: number };
  /** False after a codec failure: every batch takes the plain path. */
  private merging: boolean;
  private unsentBytes: number;
  private readonly pool: MergePool;
  /** Bumped by purge: a merge answered under an older generation lost its span. */
  private generation: number;
  private inFlightMerges: number;
  /** Records frozen per merge: from the last full merge's count (so few are generated and thawed unused). */
  private offerRecords: number;
  private wake: () => void;

  constructor(options: LoadOptions, producer: AccumulatorProducer) {
    assert(options.streamingCompression, 'StreamingAccumulator: needs streamingCompression');
    this.merges = 0;
    this.mergedBatchesIn = 0;
    this.mergedBatchesOut = 0;
    this.mergeErrors = 0;
    this.o = options;
    this.p = producer;
    this.recordsPerBatch = recordsPerBatch(options);
    this.plainBatchBytes = options.compression === 'none' ? options.maxBatchBytes : Math.min(options.batchBytes, options.maxBatchBytes);
    this.partitions = Array.from({ length: options.partitions }, () => new PartitionBacklog());
    this.identity = { producer: producer.index, partition: 0, sequence: 0 };
    this.merging = options.compression !== 'none';
    this.unsentBytes = 0;
    this.mergesStarted = 0;
    this.pool = MergePool.shared(options.mergeWorkers, options.mergeDeadlineMs);
    this.generation = 0;
    this.inFlightMerges = 0;
    this.offerRecords = Math.max(this.recordsPerBatch + 1, Math.ceil((FIRST_OFFER_RATIO * options.maxBatchBytes) / options.recordBytes));
    this.wake = () => undefined;
  }

  /** Merges (not plain batches) handed to the pool and not yet answered. */
  get mergesInFlight(): number {
    return this.inFlightMerges;
  }

  setWake(wake: () => void): void {
    this.wake = wake;
  }

  tryAdd(partition: number, sequence: number, now: number, timestamp: number): boolean {
    const size = this.o.recordBytes;
    if (this.unsentBytes + size > this.o.bufferBytes) return false; // buffer.memory full: wait for a send
    const b = this.partitions[partition] as PartitionBacklog;
    assert(sequence === b.firstSequence + b.stamps.length, 'StreamingAccumulator: sequences must be consecutive');
    b.stamps.push(now, timestamp);
    this.unsentBytes += size;
    return true;
  }

  ready(partition: number, now: number, flush: boolean): number {
    const b = this.partitions[partition] as PartitionBacklog;
    if (b.sealed === null && b.frozen === 0 && this.isReady(b, now, flush)) {
      if (this.merging) this.startJob(b, partition, b.stamps.length > this.recordsPerBatch ? 'merge' : 'plain');
      else this.sealPlainInto(b, partition);
    }
    return b.sealed === null ? -1 : b.sealed.batch.length;
  }

  take(partition: number): SentBatch {
    const b = this.partitions[partition] as PartitionBacklog;
    const sealed = b.sealed;
    assert(sealed !== null, 'StreamingAccumulator.take: nothing sealed');
    b.sealed = null;
    this.unsentBytes -= sealed.count * this.o.recordBytes;
    assert(this.unsentBytes >= 0, 'StreamingAccumulator: unsent bytes below zero');
    return sealed;
  }

  hasPending(): boolean {
    for (const b of this.partitions) if (b.sealed !== null || b.stamps.length > 0) return true;
    return false;
  }

  lingerDeadline(partition: number): number {
    const b = this.partitions[partition] as PartitionBacklog;
    if (b.sealed !== null) return 0;
    if (b.frozen > 0) return Number.POSITIVE_INFINITY; // the merge's answer wakes the producer
    return b.stamps.length === 0 ? Number.POSITIVE_INFINITY : b.stamps.addedAtOf(0) + this.o.lingerMs;
  }

  purge(dropped: DroppedRecords): void {
    this.partitions.forEach((b, partition) => {
      if (b.sealed !== null) dropped(partition, b.sealed.firstSequence, b.sealed.count);
      if (b.stamps.length > 0) dropped(partition, b.firstSequence, b.stamps.length);
      b.sealed = null;
      b.frozen = 0;
      b.firstSequence += b.stamps.length;
      b.stamps.shift(b.stamps.length);
    });
    this.unsentBytes = 0;
    this.generation++; // merges in flight lost their spans: their answers are discarded
    this.inFlightMerges = 0;
  }

  private isReady(b: PartitionBacklog, now: number, flush: boolean): boolean {
    const count = b.stamps.length;
    if (count === 0) return false;
    return count >= this.recordsPerBatch || flush || now - b.stamps.addedAtOf(0) >= this.o.lingerMs;
  }

  private sealPlainInto(b: PartitionBacklog, partition: number): void {
    const sealed = this.sealPlain(b, partition);
    this.check(sealed, partition);
    b.firstSequence += sealed.count;
    b.stamps.shift(sealed.count);
    b.sealed = sealed;
  }

  /** Freezes the backlog's oldest records and hands them to a merge worker; `onMerged` splices the answer. */
  private startJob(b: PartitionBacklog, partition: number, kind: MergeJob['kind']): void {
    const count = kind === 'merge' ? Math.min(b.stamps.length, this.offerRecords) : this.plainCount(b);
    const size = this.o.recordBytes;
    const values = new ValueSlab(size, count);
    const timestamps = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      this.value(values, partition, b.firstSequence + i);
      timestamps[i] = b.stamps.timestampOf(i);
    }
    if (kind === 'merge') this.mergesStarted++;
    const job: MergeJob = {
      id: this.pool.newJobId(), kind, codec: Codec[this.o.compression], maxBytes: this.o.maxBatchBytes,
      producerId: this.p.producerId, producerEpoch: this.p.producerEpoch, baseSequence: this.baseSequence(b),
      recordBytes: size, values: values.whole(), timestamps,
      fault: kind === 'merge' && this.o.mergeFault !== null && this.o.mergeFault.merge === this.mergesStarted ? this.o.mergeFault.kind : null,
    };
    b.frozen = count;
    if (kind === 'merge') this.inFlightMerges++;
    const generation = this.generation;
    const firstSequence = b.firstSequence;
    const openedAt = b.stamps.addedAtOf(0);
    void this.pool.run(job).then((result) => this.onMerged(b, partition, generation, { kind, firstSequence, count, openedAt }, result));
  }

  private onMerged(b: PartitionBacklog, partition: number, generation: number, span: FrozenSpan, r: MergeResult): void {
    if (generation !== this.generation) return; // purged meanwhile: the records settled as purged, the blob is dropped
    if (span.kind === 'merge') this.inFlightMerges--;
    assert(b.frozen === span.count && b.firstSequence === span.firstSequence && b.sealed === null, 'StreamingAccumulator: the frozen span moved');
    b.frozen = 0;
    const expected = span.kind === 'merge' ? r.accepted >= 1 && r.accepted <= span.count : r.accepted === span.count;
    if (r.failure !== null || r.batch === null || !expected) {
      // Merging off for good; the records thaw and drain on the plain path, original stamps.
      this.mergeErrors++;
      this.merging = false;
    } else {
      const batch = Buffer.from(r.batch.buffer, r.batch.byteOffset, r.batch.byteLength);
      const sealed: SentBatch = { partition, firstSequence: span.firstSequence, count: r.accepted, openedAt: span.openedAt, batch };
      this.check(sealed, partition);
      assert(batch.length <= this.o.maxBatchBytes, 'StreamingAccumulator: merged batch above maxBatchBytes');
      b.firstSequence += r.accepted;
      b.stamps.shift(r.accepted);
      b.sealed = sealed;
      if (span.kind === 'plain') {
        this.wake();
        return;
      }
      this.merges++;
      this.mergedBatchesIn += Math.ceil(r.accepted / this.recordsPerBatch);
      this.mergedBatchesOut++;
      // Next offer: a quarter above what a full batch took; double it while batches come out not full.
      this.offerRecords = r.accepted < span.count
        ? Math.max(this.recordsPerBatch + 1, Math.ceil(r.accepted * 1.25))
        : (span.count === this.offerRecords ? this.offerRecords * 2 : this.offerRecords);
    }
    this.wake();
  }

  /** The uncompressed-bounded path: up to one batchBytes' worth, one-shot, original timestamps. */
  private sealPlain(b: PartitionBacklog, partition: number): SentBatch {
    const count = this.plainCount(b);
    const values = new ValueSlab(this.o.recordBytes, count);
    const records: RecordInput[] = new Array<RecordInput>(count);
    for (let i = 0; i < count; i++) records[i] = { value: this.value(values, partition, b.firstSequence + i), timestamp: b.stamps.timestampOf(i) };
    const options = {
      records, compression: Codec[this.o.compression], producerId: this.p.producerId, producerEpoch: this.p.producerEpoch,
      baseSequence: this.baseSequence(b),
    };
    let batch: Buffer | null = null;
    try {
      batch = buildBatch(options);
    } catch (error) {
      // A codec that fails one-shot too: the records still go, uncompressed.
      if (!(error instanceof SeglogError)) throw error;
      this.mergeErrors++;
    }
    // Incompressible records may grow past maxBatchBytes compressed: then they go uncompressed (franz-go does the same).
    if (batch === null || batch.length > this.o.maxBatchBytes) batch = buildBatch({ ...options, compression: Codec.none });
    assert(batch.length <= this.o.maxBatchBytes, 'StreamingAccumulator: plain batch above maxBatchBytes');
    return { partition, firstSequence: b.firstSequence, count, openedAt: b.stamps.addedAtOf(0), batch };
  }

  /** The oldest records whose exact encoded size fits plainBatchBytes (at least one). */
  private plainCount(b: PartitionBacklog): number {
    const stamps = b.stamps;
    const base = stamps.timestampOf(0);
    const valueBytes = this.o.recordBytes + varintSize(this.o.recordBytes * 2);
    let bytes = BATCH_HEADER_BYTES;
    let count = 0;
    while (count < stamps.length) {
      // attributes, null key, header count: 1 byte each.
      const body = 3 + varintSize(zigzag(stamps.timestampOf(count) - base)) + varintSize(count * 2) + valueBytes;
      const size = varintSize(body * 2) + body;
      if (count > 0 && bytes + size > this.plainBatchBytes) break;
      bytes += size;
      count++;
    }
    return count;
  }

  private baseSequence(b: PartitionBacklog): number {
    return this.p.producerId >= 0 ? b.firstSequence : -1;
  }

  private value(values: ValueSlab, partition: number, sequence: number): Buffer {
    this.identity.partition = partition;
    this.identity.sequence = sequence;
    return values.next(this.identity, this.o);
  }

  /** Pair assertion: the sealed bytes say what the backlog says (count, first record, sequence). */
  private check(sealed: SentBatch, partition: number): void {
    assert(sealed.count > 0 && sealed.count === sealed.batch.readInt32BE(RECORDS_COUNT_OFFSET), 'StreamingAccumulator: batch and records differ');
    assert(sealed.partition === partition, 'StreamingAccumulator: sealed for another partition');
    if (this.p.producerId >= 0) assert(sealed.batch.readInt32BE(BASE_SEQUENCE_OFFSET) === sealed.firstSequence, 'StreamingAccumulator: base sequence');
  }
}

/** Values cut from slabs of `perSlab` records (allocation per batch's worth, not per record). */
class ValueSlab {
  private readonly size: number;
  private readonly perSlab: number;
  private slab: Buffer;
  private used: number;

  constructor(size: number, perSlab: number) {
    this.size = size;
    this.perSlab = Math.max(1, perSlab);
    this.slab = Buffer.allocUnsafe(size * this.perSlab);
    this.used = 0;
  }

  /** The one slab of a ValueSlab sized for all its values (a merge's), filled: handed to the worker. */
  whole(): Buffer {
    assert(this.used === this.slab.length, 'ValueSlab.whole: not filled');
    return this.slab;
  }

  next(identity: { producer: number; partition: number; sequence: number }, o: LoadOptions): Buffer {
    if (this.used + this.size > this.slab.length) {
      this.slab = Buffer.allocUnsafe(this.size * this.perSlab);
      this.used = 0;
    }
    const at = this.used;
    this.used = at + this.size;
    fillPayload(this.slab, at, this.size, identity, o.payload);
    const value = this.slab.subarray(at, at + this.size);
    assert(value.readUInt32BE(SEQUENCE_IN_PAYLOAD) === identity.sequence, 'StreamingAccumulator: payload sequence');
    return value;
  }
}
