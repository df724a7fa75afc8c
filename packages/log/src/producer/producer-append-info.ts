// ProducerAppendInfo: the first of the two phases of a producer-state update
// (Kafka's ProducerAppendInfo, reference/kafka-storage.md §13). It validates
// the batches and markers of ONE producer in one append against the committed
// entry, and accumulates the changes in a private in-flight entry. Nothing is
// visible in the ProducerStateManager until `update(appendInfo)` commits it,
// so a rejected batch (any throw from here) leaves no trace: drop the
// ProducerAppendInfo and write nothing.
//
// Checks by origin:
// - 'client' (leader append): epoch not older, sequence rules, transaction state;
// - 'coordinator' (WriteTxnMarkers and coordinator-written data): epoch only
//   (plus coordinator epoch for markers);
// - 'replication' (follower append, recovery): none; state follows the log.

import { assert } from '@seglog/common';
import { readTxnMarker } from '@seglog/records';
import type { RecordBatch } from '@seglog/records';
import { coordinatorFenced, fencedEpoch, invalidTxnState, outOfOrderSequence } from './producer-errors.js';
import { NO_PRODUCER_EPOCH, NO_SEQUENCE, ProducerStateEntry } from './producer-state-entry.js';

export type AppendOrigin = 'client' | 'replication' | 'coordinator';

const INT32_MAX = 0x7fffffff;

/** The producer fields of a data batch with its assigned offsets. */
export interface ProducerDataBatch {
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly baseSequence: number;
  /** Wraps past Int32.MAX to 0 (RecordBatch.lastSequence). */
  readonly lastSequence: number;
  readonly firstOffset: number;
  readonly lastOffset: number;
  readonly maxTimestamp: number;
  readonly isTransactional: boolean;
}

/** An end-transaction marker (the first record of a control batch). */
export interface ProducerTxnMarker {
  readonly type: 'COMMIT' | 'ABORT';
  readonly coordinatorEpoch: number;
  /** The producer epoch of the control batch. */
  readonly producerEpoch: number;
}

/** A transaction that a marker closed. */
export interface CompletedTxn {
  readonly producerId: number;
  readonly firstOffset: number;
  /** The offset of the marker. */
  readonly lastOffset: number;
  readonly isAborted: boolean;
}

/** A transaction as the manager tracks it: open (lastOffset null) or completed but not yet below the HW. */
export interface TxnMetadata {
  readonly producerId: number;
  readonly firstOffset: number;
  lastOffset: number | null;
}

/** Kafka's ProducerAppendInfo.inSequence: `next` follows `last`, wrapping at Int32.MAX. */
function inSequence(lastSeq: number, nextSeq: number): boolean {
  return nextSeq === lastSeq + 1 || (nextSeq === 0 && lastSeq === INT32_MAX);
}

export class ProducerAppendInfo {
  readonly producerId: number;
  readonly origin: AppendOrigin;
  /** The committed entry (or an empty one); never modified here. */
  private readonly currentEntry: ProducerStateEntry;
  /** The in-flight entry: committed fields, no batches of its own yet. */
  private readonly updatedEntry: ProducerStateEntry;
  /** Transactions begun by batches of this append, in offset order. */
  readonly startedTxns: TxnMetadata[];
  /** Set by ProducerStateManager.update; an append info is committed at most once, and not appended to after. */
  private committed: boolean;

  constructor(producerId: number, currentEntry: ProducerStateEntry, origin: AppendOrigin) {
    assert(currentEntry.producerId === producerId, 'ProducerAppendInfo: entry belongs to another producer');
    this.producerId = producerId;
    this.origin = origin;
    this.currentEntry = currentEntry;
    this.updatedEntry = new ProducerStateEntry(
      producerId,
      currentEntry.producerEpoch,
      currentEntry.coordinatorEpoch,
      currentEntry.lastTimestamp,
      currentEntry.currentTxnFirstOffset,
      [],
    );
    this.startedTxns = [];
    this.committed = false;
  }

  /** The in-flight entry (read-only use: inspection, tests). */
  toEntry(): ProducerStateEntry {
    return this.updatedEntry;
  }

  /** For ProducerStateManager.update only: marks this append info committed and hands over its entry. */
  takeForCommit(): ProducerStateEntry {
    assert(!this.committed, 'ProducerAppendInfo: committed twice');
    this.committed = true;
    return this.updatedEntry;
  }

  /**
   * Kafka's ProducerAppendInfo.append: a control batch is read as an
   * end-transaction marker at its base offset (an empty control batch, left by
   * compaction, or a control record of another type changes nothing); any
   * other batch is a data batch at its own offsets. For batches already in the
   * log (recovery, follower append) or already assigned offsets (leader).
   */
  append(batch: RecordBatch): CompletedTxn | null {
    assert(batch.producerId === this.producerId, 'append: batch belongs to another producer');
    if (batch.isControl) {
      const marker = readTxnMarker(batch);
      if (marker === null) return null;
      // The marker record's timestamp: every record of a LogAppendTime batch
      // reads as maxTimestamp; the one record of a CreateTime marker has delta 0.
      const timestamp = batch.timestampType === 'LogAppendTime' ? batch.maxTimestamp : batch.baseTimestamp;
      return this.appendEndTxnMarker(
        { type: marker.type, coordinatorEpoch: marker.coordinatorEpoch, producerEpoch: batch.producerEpoch },
        batch.baseOffset,
        timestamp,
      );
    }
    this.appendDataBatch({
      producerId: batch.producerId,
      producerEpoch: batch.producerEpoch,
      baseSequence: batch.baseSequence,
      lastSequence: batch.lastSequence,
      firstOffset: batch.baseOffset,
      lastOffset: batch.lastOffset,
      maxTimestamp: batch.maxTimestamp,
      isTransactional: batch.isTransactional,
    });
    return null;
  }

  /**
   * Validates a data batch (by origin) and records it. Throws
   * SEGLOG_ERR_PRODUCER_FENCED_EPOCH, _OUT_OF_ORDER_SEQUENCE or
   * _INVALID_TXN_STATE; a throw leaves this append info as it was.
   */
  appendDataBatch(batch: ProducerDataBatch): void {
    assert(!this.committed, 'appendDataBatch: append info already committed');
    assert(batch.producerId === this.producerId, 'appendDataBatch: batch belongs to another producer');
    assert(Number.isSafeInteger(batch.firstOffset) && batch.firstOffset >= 0, 'appendDataBatch: firstOffset must be a safe integer >= 0');
    assert(Number.isSafeInteger(batch.lastOffset), 'appendDataBatch: lastOffset must be a safe integer');
    assert(batch.lastOffset >= batch.firstOffset, 'appendDataBatch: lastOffset must be >= firstOffset');
    assert(Number.isSafeInteger(batch.maxTimestamp), 'appendDataBatch: maxTimestamp must be a safe integer');
    this.checkProducerEpoch(batch.producerEpoch, batch.firstOffset);
    if (this.origin === 'client') this.checkSequence(batch.producerEpoch, batch.baseSequence, batch.firstOffset);
    // Kafka records the batch before the transaction check; we check first so
    // that a throw leaves the in-flight entry untouched (same outcome: the
    // whole append is rejected either way).
    const openTxnFirstOffset = this.updatedEntry.currentTxnFirstOffset;
    if (openTxnFirstOffset !== null && !batch.isTransactional && this.origin !== 'replication') {
      throw invalidTxnState(this.producerId, openTxnFirstOffset, batch.firstOffset);
    }
    this.updatedEntry.addBatch(
      batch.producerEpoch,
      batch.lastSequence,
      batch.lastOffset,
      batch.lastOffset - batch.firstOffset,
      batch.maxTimestamp,
    );
    if (openTxnFirstOffset === null && batch.isTransactional) {
      this.updatedEntry.currentTxnFirstOffset = batch.firstOffset;
      this.startedTxns.push({ producerId: this.producerId, firstOffset: batch.firstOffset, lastOffset: null });
    }
  }

  /**
   * Validates an end-transaction marker at `offset` and records it. Returns
   * the transaction it closes, or null for a marker with no open transaction
   * (an empty transaction: not indexed, no effect on the LSO). Throws
   * SEGLOG_ERR_PRODUCER_FENCED_EPOCH or _COORDINATOR_FENCED.
   */
  appendEndTxnMarker(marker: ProducerTxnMarker, offset: number, timestamp: number): CompletedTxn | null {
    assert(!this.committed, 'appendEndTxnMarker: append info already committed');
    assert(Number.isSafeInteger(offset) && offset >= 0, 'appendEndTxnMarker: offset must be a safe integer >= 0');
    assert(Number.isSafeInteger(timestamp), 'appendEndTxnMarker: timestamp must be a safe integer');
    this.checkProducerEpoch(marker.producerEpoch, offset);
    if (this.updatedEntry.coordinatorEpoch > marker.coordinatorEpoch && this.origin !== 'replication') {
      throw coordinatorFenced(this.producerId, marker.coordinatorEpoch, this.updatedEntry.coordinatorEpoch, offset);
    }
    const firstOffset = this.updatedEntry.currentTxnFirstOffset;
    const completed: CompletedTxn | null =
      firstOffset === null ? null : { producerId: this.producerId, firstOffset, lastOffset: offset, isAborted: marker.type === 'ABORT' };
    this.updatedEntry.maybeUpdateProducerEpoch(marker.producerEpoch);
    this.updatedEntry.currentTxnFirstOffset = null;
    this.updatedEntry.coordinatorEpoch = marker.coordinatorEpoch;
    this.updatedEntry.lastTimestamp = timestamp;
    return completed;
  }

  /** Older epoch → INVALID_PRODUCER_EPOCH, except under replication (Kafka only logs it there). */
  private checkProducerEpoch(producerEpoch: number, offset: number): void {
    if (producerEpoch >= this.updatedEntry.producerEpoch) return;
    if (this.origin === 'replication') return;
    throw fencedEpoch(this.producerId, producerEpoch, this.updatedEntry.producerEpoch, offset);
  }

  /** Kafka's ProducerAppendInfo.checkSequence (client origin only). */
  private checkSequence(producerEpoch: number, firstSeq: number, offset: number): void {
    const updatedEpoch = this.updatedEntry.producerEpoch;
    if (producerEpoch !== updatedEpoch) {
      // A new epoch must start at 0, unless the producer had no epoch at all.
      if (firstSeq !== 0 && updatedEpoch !== NO_PRODUCER_EPOCH) {
        throw outOfOrderSequence(this.producerId, {
          batchEpoch: producerEpoch,
          currentEpoch: updatedEpoch,
          firstSeq,
          lastSeq: NO_SEQUENCE,
          offset,
          reason: 'a new epoch must start at sequence 0',
        });
      }
      return;
    }
    let lastSeq: number;
    if (!this.updatedEntry.isEmpty) lastSeq = this.updatedEntry.lastSeq;
    else if (producerEpoch === this.currentEntry.producerEpoch) lastSeq = this.currentEntry.lastSeq;
    else lastSeq = NO_SEQUENCE;
    // A producer with no epoch (its data removed by retention or
    // deleteRecords, or never seen) may continue at any sequence.
    if (this.currentEntry.producerEpoch === NO_PRODUCER_EPOCH || inSequence(lastSeq, firstSeq)) return;
    throw outOfOrderSequence(this.producerId, {
      batchEpoch: producerEpoch,
      currentEpoch: updatedEpoch,
      firstSeq,
      lastSeq,
      offset,
      reason: `expected sequence ${lastSeq === INT32_MAX ? 0 : lastSeq + 1}`,
    });
  }
}
