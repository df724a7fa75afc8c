// Operating errors of producer-state validation and of producer snapshots.
// Each carries the Kafka error the broker answers with and the numbers that
// explain it (producer id, epochs, sequences, offsets) in `context`.

import { SeglogError } from '@seglog/common';
import type { KafkaErrorName } from '@seglog/common';

function producerError(code: string, kafka: KafkaErrorName, message: string, context: Record<string, unknown>): SeglogError {
  return new SeglogError(code, message, { kafka, retriable: false, context });
}

/** A batch or marker carries an epoch older than the producer's current one. */
export function fencedEpoch(producerId: number, batchEpoch: number, currentEpoch: number, offset: number): SeglogError {
  return producerError(
    'SEGLOG_ERR_PRODUCER_FENCED_EPOCH',
    'INVALID_PRODUCER_EPOCH',
    `epoch ${batchEpoch} of producer ${producerId} at offset ${offset} is older than its current epoch ${currentEpoch}`,
    { producerId, batchEpoch, currentEpoch, offset },
  );
}

/** A data batch's first sequence does not follow the producer's last one (gap, overlap, stale retry, new epoch not at 0). */
export function outOfOrderSequence(
  producerId: number,
  details: { batchEpoch: number; currentEpoch: number; firstSeq: number; lastSeq: number; offset: number; reason: string },
): SeglogError {
  return producerError(
    'SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE',
    'OUT_OF_ORDER_SEQUENCE_NUMBER',
    `out of order sequence for producer ${producerId} at offset ${details.offset}: ${details.reason}` +
      ` (epoch ${details.batchEpoch}, current epoch ${details.currentEpoch}, first sequence ${details.firstSeq}, last sequence ${details.lastSeq})`,
    { producerId, ...details },
  );
}

/** A non-transactional data batch from a producer with an open transaction. */
export function invalidTxnState(producerId: number, currentTxnFirstOffset: number, offset: number): SeglogError {
  return producerError(
    'SEGLOG_ERR_PRODUCER_INVALID_TXN_STATE',
    'INVALID_TXN_STATE',
    `non-transactional batch from producer ${producerId} at offset ${offset} while its transaction begun at ${currentTxnFirstOffset} is open`,
    { producerId, currentTxnFirstOffset, offset },
  );
}

/** A transaction marker written by a coordinator older than the last one seen for this producer. */
export function coordinatorFenced(producerId: number, markerCoordinatorEpoch: number, currentCoordinatorEpoch: number, offset: number): SeglogError {
  return producerError(
    'SEGLOG_ERR_PRODUCER_COORDINATOR_FENCED',
    'TRANSACTION_COORDINATOR_FENCED',
    `marker for producer ${producerId} at offset ${offset} has coordinator epoch ${markerCoordinatorEpoch}, older than ${currentCoordinatorEpoch}`,
    { producerId, markerCoordinatorEpoch, currentCoordinatorEpoch, offset },
  );
}

/** A producer snapshot that cannot be trusted (version, length, CRC, field ranges). */
export function corruptSnapshot(path: string | null, reason: string): SeglogError {
  return new SeglogError('SEGLOG_ERR_SNAPSHOT_CORRUPT', `corrupt producer snapshot${path === null ? '' : ` ${path}`}: ${reason}`, {
    kafka: 'KAFKA_STORAGE_ERROR',
    context: { path, reason },
  });
}
