// The integrity checker's transactional mode: checks what a read_committed
// consumer sees. Fed each Fetch answer of a partition (isolation level
// read_committed: the raw record bytes and the answer's abortedTransactions),
// in offset order, it filters as Kafka's consumer does (CompletedFetch):
//   - aborted transactions are queued by first offset; before a batch that
//     carries a producer id, every queued one with firstOffset <= the batch's
//     last offset marks its producer id aborted;
//   - a control batch is never delivered; an ABORT marker clears its
//     producer's aborted mark;
//   - a transactional data batch of a producer marked aborted is dropped
//     (counted as aborted records); every other data batch is delivered.
// Delivered records carry the load payload identity (payload.ts: producer,
// partition, sequence); the checker reports each violation of:
//   - every batch's CRC-32C is valid, batches do not overlap or go back;
//   - each delivered record is a load payload of this partition, its bytes
//     the ones its identity derives, and per (producer, partition) the
//     sequences delivered are 0, 1, 2, … in offset order: a sequence seen
//     again is a duplicate, one skipped is missing, and at finish every
//     expected sequence was delivered (exactly once, in order);
//   - the markers agree with the filtering: an ABORT marker for a
//     transaction whose records were delivered (aborted data seen as
//     committed), a COMMIT marker for one the answer listed as aborted
//     (committed data dropped), a transaction still open at finish whose
//     records were delivered (the LSO let them through).
// No per-record allocation: one reused identity and scratch buffer.

import { assert } from '@seglog/common';
import { RecordBatch, RecordCursor, readTxnMarker } from '@seglog/records';
import { fillPayload, readPayloadIdentity } from './payload.js';
import type { PayloadIdentity, PayloadKind } from './payload.js';

export interface ReadCommittedSetup {
  readonly partitions: number;
  /** Payload identities' producer indexes are 0 .. producers − 1. */
  readonly producers: number;
  readonly recordBytes: number;
  readonly payload: PayloadKind;
  /** [producer * partitions + partition] → the committed records expected (sequences 0 .. n − 1). */
  readonly expectedRecords: readonly number[];
  readonly maxViolationsReported: number;
}

/** One entry of a Fetch answer's abortedTransactions. */
export interface AbortedTxn {
  readonly producerId: number;
  readonly firstOffset: number;
}

export interface ReadCommittedResult {
  readonly recordsCommitted: number;
  readonly recordsAborted: number;
  readonly batchesConsumed: number;
  readonly controlBatches: number;
  readonly abortMarkers: number;
  readonly commitMarkers: number;
  readonly violationCount: number;
  readonly violations: readonly string[];
}

/** A transaction's state on one partition, between its first data batch and its marker. */
const DELIVERED = 1;
const DROPPED = 2;

class PartitionState {
  nextOffset = 0;
  /** Aborted transactions of the answers, not yet reached, sorted by first offset. */
  readonly queued: AbortedTxn[] = [];
  readonly abortedProducers = new Set<number>();
  /** producerId → DELIVERED | DROPPED, for transactions with data and no marker yet. */
  readonly open = new Map<number, number>();
}

export class ReadCommittedChecker {
  readonly setup: ReadCommittedSetup;
  private readonly states: PartitionState[];
  /** [producer * partitions + partition] → next sequence expected. */
  private readonly nextSequence: Int32Array;
  private readonly cursor: RecordCursor;
  private readonly scratch: Buffer;
  private readonly identity: PayloadIdentity;
  private readonly violations: string[];
  private violationCount = 0;
  private recordsCommitted = 0;
  private recordsAborted = 0;
  private batchesConsumed = 0;
  private controlBatches = 0;
  private abortMarkers = 0;
  private commitMarkers = 0;

  constructor(setup: ReadCommittedSetup) {
    assert(setup.expectedRecords.length === setup.partitions * setup.producers, 'ReadCommittedChecker: one expected count per (producer, partition)');
    assert(setup.recordBytes >= 12, 'ReadCommittedChecker: records must hold a payload header');
    this.setup = setup;
    this.states = Array.from({ length: setup.partitions }, () => new PartitionState());
    this.nextSequence = new Int32Array(setup.partitions * setup.producers);
    this.cursor = new RecordCursor();
    this.scratch = Buffer.alloc(setup.recordBytes);
    this.identity = { producer: 0, partition: 0, sequence: 0 };
    this.violations = [];
  }

  violation(message: string): void {
    this.violationCount++;
    if (this.violations.length < this.setup.maxViolationsReported) this.violations.push(message);
  }

  /** The offset to fetch next for `partition` (after the last whole batch checked). */
  nextOffset(partition: number): number {
    return (this.states[partition] as PartitionState).nextOffset;
  }

  /**
   * One read_committed Fetch answer of `partition`: its record bytes (whole
   * batches; a trailing partial batch is ignored) and aborted transactions.
   * Returns the number of whole batches checked.
   */
  checkFetch(partition: number, records: Buffer | null, aborted: readonly AbortedTxn[] | null): number {
    const state = this.states[partition];
    assert(state !== undefined, 'checkFetch: partition out of range');
    if (aborted !== null && aborted.length > 0) {
      state.queued.push(...aborted);
      state.queued.sort((a, b) => a.firstOffset - b.firstOffset);
    }
    let batches = 0;
    let at = 0;
    while (records !== null && at + 61 <= records.length) {
      const size = records.readInt32BE(at + 8) + 12;
      if (at + size > records.length) break;
      this.checkBatch(partition, state, records.subarray(at, at + size));
      batches++;
      at += size;
    }
    return batches;
  }

  private checkBatch(partition: number, state: PartitionState, bytes: Buffer): void {
    const batch = new RecordBatch(bytes); // one view per batch
    this.batchesConsumed++;
    if (batch.baseOffset < state.nextOffset) {
      this.violation(`partition ${partition}: batch at offset ${batch.baseOffset} below the next offset ${state.nextOffset} (overlap)`);
    }
    state.nextOffset = Math.max(state.nextOffset, batch.nextOffset);
    if (!batch.isValid()) {
      this.violation(`partition ${partition}: batch at offset ${batch.baseOffset} has a bad CRC-32C`);
      return;
    }
    const producerId = batch.producerId;
    if (producerId >= 0) {
      while (state.queued.length > 0 && (state.queued[0] as AbortedTxn).firstOffset <= batch.lastOffset) {
        state.abortedProducers.add((state.queued.shift() as AbortedTxn).producerId);
      }
    }
    if (batch.isControl) {
      this.checkMarker(partition, state, batch);
      return;
    }
    if (batch.isTransactional) {
      const dropped = state.abortedProducers.has(producerId);
      state.open.set(producerId, dropped ? DROPPED : DELIVERED);
      if (dropped) {
        this.recordsAborted += batch.lastOffsetDelta + 1;
        return;
      }
    }
    try {
      this.cursor.open(batch);
      while (this.cursor.next()) this.checkRecord(partition);
    } catch (error) {
      this.violation(`partition ${partition}: batch at offset ${batch.baseOffset} does not decode: ${(error as Error).message}`);
    } finally {
      this.cursor.close();
    }
  }

  private checkMarker(partition: number, state: PartitionState, batch: RecordBatch): void {
    this.controlBatches++;
    const marker = readTxnMarker(batch);
    if (marker === null) return;
    const producerId = batch.producerId;
    const seen = state.open.get(producerId);
    state.open.delete(producerId);
    if (marker.type === 'ABORT') {
      this.abortMarkers++;
      state.abortedProducers.delete(producerId);
      if (seen === DELIVERED) this.violation(`partition ${partition}: ABORT marker at offset ${batch.baseOffset} for producer id ${producerId}, whose records were delivered as committed (not in the aborted transactions)`);
      return;
    }
    this.commitMarkers++;
    if (state.abortedProducers.delete(producerId) || seen === DROPPED) {
      this.violation(`partition ${partition}: COMMIT marker at offset ${batch.baseOffset} for producer id ${producerId}, whose transaction the answer listed as aborted (committed records dropped)`);
    }
  }

  private checkRecord(partition: number): void {
    const offset = this.cursor.offset;
    const value = this.cursor.value;
    const id = this.identity;
    if (value === null || !readPayloadIdentity(value, id)) {
      this.violation(`partition ${partition}: offset ${offset} has a ${value === null ? 'null' : `${value.length}-byte`} value, not a load payload`);
      return;
    }
    if (id.partition !== partition || id.producer >= this.setup.producers) {
      this.violation(`partition ${partition}: offset ${offset} holds producer ${id.producer} partition ${id.partition} sequence ${id.sequence}, which was never sent here`);
      return;
    }
    this.recordsCommitted++;
    const slot = id.producer * this.setup.partitions + partition;
    const expected = this.nextSequence[slot] as number;
    if (id.sequence < expected) {
      this.violation(`partition ${partition}: producer ${id.producer} sequence ${id.sequence} delivered again at offset ${offset} (duplicate; next expected ${expected})`);
      return;
    }
    if (id.sequence > expected) {
      this.violation(`partition ${partition}: producer ${id.producer} sequence ${id.sequence} at offset ${offset}, expected ${expected} (sequences ${expected}..${id.sequence - 1} missing)`);
    }
    this.nextSequence[slot] = id.sequence + 1;
    if (id.sequence >= (this.setup.expectedRecords[slot] as number)) {
      this.violation(`partition ${partition}: producer ${id.producer} sequence ${id.sequence} at offset ${offset}, beyond the ${this.setup.expectedRecords[slot]} expected`);
    }
    this.checkPayload(partition, offset, value);
  }

  private checkPayload(partition: number, offset: number, value: Buffer): void {
    if (value.length !== this.setup.recordBytes) {
      this.violation(`partition ${partition}: offset ${offset} has ${value.length} value bytes, expected ${this.setup.recordBytes}`);
      return;
    }
    fillPayload(this.scratch, 0, this.scratch.length, this.identity, this.setup.payload);
    if (!this.scratch.equals(value)) this.violation(`partition ${partition}: offset ${offset} payload differs from producer ${this.identity.producer} sequence ${this.identity.sequence}`);
  }

  /** Ends the check: every expected sequence was delivered; no delivered transaction is still open. */
  finish(): ReadCommittedResult {
    for (let p = 0; p < this.setup.partitions; p++) {
      for (let producer = 0; producer < this.setup.producers; producer++) {
        const slot = producer * this.setup.partitions + p;
        const next = this.nextSequence[slot] as number;
        const expected = this.setup.expectedRecords[slot] as number;
        if (next < expected) this.violation(`partition ${p}: producer ${producer} delivered sequences up to ${next - 1}, expected up to ${expected - 1} (${expected - next} missing)`);
      }
      for (const [producerId, seen] of (this.states[p] as PartitionState).open) {
        if (seen === DELIVERED) this.violation(`partition ${p}: the transaction of producer id ${producerId} has no marker, yet its records were delivered`);
      }
    }
    return {
      recordsCommitted: this.recordsCommitted, recordsAborted: this.recordsAborted, batchesConsumed: this.batchesConsumed,
      controlBatches: this.controlBatches, abortMarkers: this.abortMarkers, commitMarkers: this.commitMarkers,
      violationCount: this.violationCount, violations: [...this.violations],
    };
  }
}
