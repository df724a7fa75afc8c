// The integrity checker of the consume phase. Built from the producers'
// ledgers (what was acknowledged where), then fed every fetched batch of a
// partition in offset order, it reports each violation of:
//   - every batch's CRC-32C is valid and its records decode;
//   - offsets are contiguous per partition from the start offset (the end
//     offset before the run) to the end offset after it, batch by batch and
//     record by record;
//   - every acknowledged record is present exactly once, at the offset the
//     broker acknowledged, with the payload derived from its identity
//     (payload.ts) and the configured size;
//   - a record nobody acknowledged is present only if its outcome was unknown
//     (acks=0, timeout), never if the broker refused it, never twice;
//   - idempotent: the batch carries the producer's id and epoch, each record's
//     sequence equals the payload's, and each producer's sequences per
//     partition are contiguous from 0 in offset order.
// Group mode (group-consumer.ts) feeds batches through checkGroupBatch: a
// member that resumes a partition from its committed offset after a
// rebalance may fetch records again that were already checked; those are
// counted as duplicates (reported, never a violation, never counted as
// consumed), and what follows them is checked as above.
// Per-record work uses typed arrays and a reused scratch buffer: no
// allocation, closure or promise per record.

import { assert } from '@seglog/common';
import { RecordBatch, RecordCursor } from '@seglog/records';
import type { LoadCorruption } from './load-options.js';
import { fillPayload, readPayloadIdentity } from './payload.js';
import type { PayloadIdentity, PayloadKind } from './payload.js';
import type { ProducerLedger } from './producer-ledger.js';

export interface CheckerProducer {
  readonly ledger: ProducerLedger;
  /** −1 when not idempotent. */
  readonly producerId: number;
  readonly producerEpoch: number;
}

export interface CheckerSetup {
  readonly partitions: number;
  readonly recordBytes: number;
  readonly payload: PayloadKind;
  readonly producers: readonly CheckerProducer[];
  /** Per partition: end offset before the run (first produced offset). */
  readonly startOffsets: readonly number[];
  /** Per partition: end offset (high watermark) after the run. */
  readonly endOffsets: readonly number[];
  /** Every record's outcome is unknown (acks=0): presence is allowed, absence too. */
  readonly allUncertain: boolean;
  readonly maxViolationsReported: number;
  readonly corruption: LoadCorruption | null;
}

export interface CheckerResult {
  readonly recordsConsumed: number;
  readonly batchesConsumed: number;
  /** Records nobody acknowledged that are in the log (allowed for unknown outcomes). */
  readonly unacknowledgedPresent: number;
  /** Records with an unknown outcome that are not in the log (allowed). */
  readonly uncertainMissing: number;
  /** Group mode: records fetched again below a partition's checked offset (redelivered after a rebalance). */
  readonly duplicateRecords: number;
  readonly violationCount: number;
  readonly violations: readonly string[];
}

export class LoadChecker {
  readonly setup: CheckerSetup;
  /** Next offset expected per partition (batch contiguity). */
  readonly nextOffsets: number[];
  private readonly expectedProducer: Int32Array[];
  private readonly expectedSequence: Int32Array[];
  private readonly consumed: Uint8Array[];
  /** [producer * partitions + partition] → bitmap of sequences seen. */
  private readonly seen: Uint8Array[];
  private readonly lastSequence: Int32Array;
  private readonly nextRecordOffsets: number[];
  private readonly cursor: RecordCursor;
  private readonly scratch: Buffer;
  private readonly identity: PayloadIdentity;
  private readonly violations: string[];
  private violationCount: number;
  private recordsConsumed: number;
  private batchesConsumed: number;
  private unacknowledgedPresent: number;
  private duplicateRecords: number;
  /** While a group batch that starts below the partition's next offset is checked. */
  private redelivering: boolean;

  constructor(setup: CheckerSetup) {
    assert(setup.startOffsets.length === setup.partitions, 'LoadChecker: one start offset per partition');
    assert(setup.endOffsets.length === setup.partitions, 'LoadChecker: one end offset per partition');
    this.setup = setup;
    this.nextOffsets = [...setup.startOffsets];
    this.nextRecordOffsets = [...setup.startOffsets];
    this.expectedProducer = [];
    this.expectedSequence = [];
    this.consumed = [];
    for (let p = 0; p < setup.partitions; p++) {
      const span = Math.max(0, (setup.endOffsets[p] as number) - (setup.startOffsets[p] as number));
      this.expectedProducer.push(new Int32Array(span).fill(-1));
      this.expectedSequence.push(new Int32Array(span).fill(-1));
      this.consumed.push(new Uint8Array(span));
    }
    this.seen = [];
    for (const producer of setup.producers) {
      for (let p = 0; p < setup.partitions; p++) this.seen.push(new Uint8Array(producer.ledger.sent(p)));
    }
    this.lastSequence = new Int32Array(setup.producers.length * setup.partitions).fill(-1);
    this.cursor = new RecordCursor();
    this.scratch = Buffer.alloc(setup.recordBytes);
    this.identity = { producer: 0, partition: 0, sequence: 0 };
    this.violations = [];
    this.violationCount = 0;
    this.recordsConsumed = 0;
    this.batchesConsumed = 0;
    this.unacknowledgedPresent = 0;
    this.duplicateRecords = 0;
    this.redelivering = false;
    this.loadExpectations();
  }

  violation(message: string): void {
    this.violationCount++;
    if (this.violations.length < this.setup.maxViolationsReported) this.violations.push(message);
  }

  private loadExpectations(): void {
    this.setup.producers.forEach((producer, index) => {
      const acked = producer.ledger.ackedBatches;
      for (let i = 0; i < acked.length; i += 4) {
        const partition = acked[i] as number;
        const baseOffset = acked[i + 1] as number;
        const firstSequence = acked[i + 2] as number;
        const count = acked[i + 3] as number;
        const start = this.setup.startOffsets[partition] as number;
        const span = (this.expectedProducer[partition] as Int32Array).length;
        for (let k = 0; k < count; k++) {
          const at = baseOffset + k - start;
          if (at < 0 || at >= span) {
            this.violation(`partition ${partition}: producer ${index} sequence ${firstSequence + k} acknowledged at offset ${baseOffset + k}, outside [${start}, ${start + span}) (end offset after the run)`);
            continue;
          }
          const owner = (this.expectedProducer[partition] as Int32Array)[at] as number;
          if (owner !== -1) {
            this.violation(`partition ${partition}: offset ${baseOffset + k} acknowledged twice (producer ${owner} and producer ${index})`);
            continue;
          }
          (this.expectedProducer[partition] as Int32Array)[at] = index;
          (this.expectedSequence[partition] as Int32Array)[at] = firstSequence + k;
        }
      }
    });
  }

  /**
   * Group mode: one batch a member fetched. A batch wholly below the
   * partition's next offset is a redelivery (its records count as
   * duplicates); one that starts below it is checked from the next offset
   * on; any other is checked as by checkBatch (a gap is a violation).
   */
  checkGroupBatch(partition: number, bytes: Buffer): void {
    const baseOffset = Number(bytes.readBigInt64BE(0));
    const nextOffset = baseOffset + bytes.readInt32BE(23) + 1;
    const expected = this.nextOffsets[partition] as number;
    if (nextOffset <= expected) {
      this.duplicateRecords += bytes.readInt32BE(57);
      return;
    }
    this.redelivering = baseOffset < expected;
    try {
      this.checkBatch(partition, bytes);
    } finally {
      this.redelivering = false;
    }
  }

  /** Checks one fetched batch of `partition` (whole batch bytes); advances the partition's next offset. */
  checkBatch(partition: number, bytes: Buffer): void {
    let batchBytes = bytes;
    const baseOffsetPeek = Number(bytes.readBigInt64BE(0));
    const c = this.setup.corruption;
    if (c !== null && c.kind === 'flip-batch-byte' && c.partition === partition) {
      const target = (this.setup.startOffsets[partition] as number) + c.offset;
      const lastOffset = baseOffsetPeek + bytes.readInt32BE(23);
      if (target >= baseOffsetPeek && target <= lastOffset) {
        batchBytes = Buffer.from(bytes);
        batchBytes[batchBytes.length - 1] = (batchBytes[batchBytes.length - 1] as number) ^ 0x01;
      }
    }
    const batch = new RecordBatch(batchBytes); // one view per batch
    const expectedBase = this.nextOffsets[partition] as number;
    this.batchesConsumed++;
    if (batch.baseOffset !== expectedBase && !this.redelivering) {
      this.violation(`partition ${partition}: batch at offset ${batch.baseOffset}, expected ${expectedBase} (offsets not contiguous)`);
    }
    this.nextOffsets[partition] = Math.max(expectedBase, batch.nextOffset);
    if (!batch.isValid()) {
      this.violation(`partition ${partition}: batch at offset ${batch.baseOffset} has a bad CRC-32C (stored ${batch.crc >>> 0}, computed ${batch.computeCrc() >>> 0})`);
      return;
    }
    try {
      this.cursor.open(batch);
      while (this.cursor.next()) this.checkRecord(partition, batch);
    } catch (error) {
      this.violation(`partition ${partition}: batch at offset ${batch.baseOffset} does not decode: ${(error as Error).message}`);
    } finally {
      this.cursor.close();
    }
  }

  private checkRecord(partition: number, batch: RecordBatch): void {
    const offset = this.cursor.offset;
    if (this.redelivering && offset < (this.nextRecordOffsets[partition] as number)) {
      this.duplicateRecords++;
      return;
    }
    const c = this.setup.corruption;
    const start = this.setup.startOffsets[partition] as number;
    if (c !== null && c.kind === 'skip-offset' && c.partition === partition && start + c.offset === offset) return;
    if (offset !== this.nextRecordOffsets[partition]) {
      this.violation(`partition ${partition}: record at offset ${offset}, expected ${this.nextRecordOffsets[partition]} (gap or overlap)`);
    }
    this.nextRecordOffsets[partition] = offset + 1;
    this.recordsConsumed++;
    let value = this.cursor.value;
    if (value === null || !readPayloadIdentity(value, this.identity)) {
      this.violation(`partition ${partition}: offset ${offset} has a ${value === null ? 'null' : `${value.length}-byte`} value, not a load payload`);
      return;
    }
    if (c !== null && c.kind === 'flip-payload-byte' && c.partition === partition && start + c.offset === offset) {
      value = Buffer.from(value);
      value[value.length - 1] = (value[value.length - 1] as number) ^ 0x01;
    }
    const id = this.identity;
    if (!this.checkIdentity(partition, offset, id)) return;
    this.checkPayload(partition, offset, value);
    this.checkExpectation(partition, offset, id);
    this.checkSequence(partition, offset, batch, id);
  }

  /** False when the identity names no record this run sent (nothing further can be checked). */
  private checkIdentity(partition: number, offset: number, id: PayloadIdentity): boolean {
    const producer = this.setup.producers[id.producer];
    if (id.partition !== partition || producer === undefined || id.sequence >= producer.ledger.sent(partition)) {
      this.violation(`partition ${partition}: offset ${offset} holds producer ${id.producer} partition ${id.partition} sequence ${id.sequence}, which this run never sent here`);
      return false;
    }
    const seen = this.seen[id.producer * this.setup.partitions + partition] as Uint8Array;
    if (seen[id.sequence] === 1) {
      this.violation(`partition ${partition}: producer ${id.producer} sequence ${id.sequence} present twice (again at offset ${offset})`);
      return false;
    }
    seen[id.sequence] = 1;
    return true;
  }

  private checkPayload(partition: number, offset: number, value: Buffer): void {
    if (value.length !== this.setup.recordBytes) {
      this.violation(`partition ${partition}: offset ${offset} has ${value.length} value bytes, expected ${this.setup.recordBytes}`);
      return;
    }
    fillPayload(this.scratch, 0, this.scratch.length, this.identity, this.setup.payload);
    if (!this.scratch.equals(value)) {
      let at = 0;
      while (at < value.length && value[at] === this.scratch[at]) at++;
      this.violation(`partition ${partition}: offset ${offset} payload differs from producer ${this.identity.producer} sequence ${this.identity.sequence} at byte ${at}`);
    }
  }

  private checkExpectation(partition: number, offset: number, id: PayloadIdentity): void {
    const at = offset - (this.setup.startOffsets[partition] as number);
    const expected = this.expectedProducer[partition] as Int32Array;
    if (at < 0 || at >= expected.length) {
      this.violation(`partition ${partition}: offset ${offset} outside the produced range`);
      return;
    }
    (this.consumed[partition] as Uint8Array)[at] = 1;
    const owner = expected[at] as number;
    if (owner !== -1) {
      const sequence = (this.expectedSequence[partition] as Int32Array)[at] as number;
      if (owner !== id.producer || sequence !== id.sequence) {
        this.violation(`partition ${partition}: offset ${offset} holds producer ${id.producer} sequence ${id.sequence}, acknowledged there was producer ${owner} sequence ${sequence}`);
      }
      return;
    }
    const ledger = (this.setup.producers[id.producer] as CheckerProducer).ledger;
    const refused = ledger.failedCodeOf(partition, id.sequence);
    if (refused !== null) {
      this.violation(`partition ${partition}: offset ${offset} holds producer ${id.producer} sequence ${id.sequence}, refused by the broker with error ${refused}`);
    } else if (this.setup.allUncertain || ledger.isUncertain(partition, id.sequence)) {
      this.unacknowledgedPresent++;
    } else {
      this.violation(`partition ${partition}: offset ${offset} holds producer ${id.producer} sequence ${id.sequence}, which was never acknowledged`);
    }
  }

  private checkSequence(partition: number, offset: number, batch: RecordBatch, id: PayloadIdentity): void {
    const producer = this.setup.producers[id.producer] as CheckerProducer;
    if (producer.producerId < 0) return;
    if (batch.producerId !== producer.producerId || batch.producerEpoch !== producer.producerEpoch) {
      this.violation(`partition ${partition}: offset ${offset} is in a batch of producer id ${batch.producerId} epoch ${batch.producerEpoch}, expected ${producer.producerId} epoch ${producer.producerEpoch}`);
    }
    if (this.cursor.sequence !== id.sequence) {
      this.violation(`partition ${partition}: offset ${offset} has batch sequence ${this.cursor.sequence}, payload sequence ${id.sequence}`);
    }
    const slot = id.producer * this.setup.partitions + partition;
    const last = this.lastSequence[slot] as number;
    if (id.sequence !== last + 1) {
      this.violation(`partition ${partition}: producer ${id.producer} sequence ${id.sequence} at offset ${offset} follows sequence ${last} (not contiguous)`);
    }
    this.lastSequence[slot] = id.sequence;
  }

  /** Ends the check: every partition reached its end offset, every acknowledged record was consumed. */
  finish(): CheckerResult {
    for (let p = 0; p < this.setup.partitions; p++) {
      const end = this.setup.endOffsets[p] as number;
      if ((this.nextOffsets[p] as number) < end) this.violation(`partition ${p}: consumed up to offset ${this.nextOffsets[p]}, end offset is ${end}`);
      this.reportMissing(p);
    }
    let uncertainMissing = 0;
    this.setup.producers.forEach((producer, index) => {
      for (let p = 0; p < this.setup.partitions; p++) {
        const seen = this.seen[index * this.setup.partitions + p] as Uint8Array;
        for (let s = 0; s < seen.length; s++) {
          if (seen[s] === 0 && (this.setup.allUncertain || producer.ledger.isUncertain(p, s))) uncertainMissing++;
        }
      }
    });
    return {
      recordsConsumed: this.recordsConsumed, batchesConsumed: this.batchesConsumed, unacknowledgedPresent: this.unacknowledgedPresent,
      uncertainMissing, duplicateRecords: this.duplicateRecords, violationCount: this.violationCount, violations: [...this.violations],
    };
  }

  private reportMissing(partition: number): void {
    const expected = this.expectedProducer[partition] as Int32Array;
    const consumed = this.consumed[partition] as Uint8Array;
    const start = this.setup.startOffsets[partition] as number;
    for (let at = 0; at < expected.length; at++) {
      if (expected[at] === -1 || consumed[at] === 1) continue;
      this.violation(`partition ${partition}: acknowledged record at offset ${start + at} (producer ${expected[at]} sequence ${(this.expectedSequence[partition] as Int32Array)[at]}) was not consumed`);
    }
  }
}
