// TxnPersistence: where the transaction coordinator's writes go. The broker's
// implementation appends Kafka's __transaction_state records
// (txn-state-topic.ts) and writes markers through Log.appendMarker on every
// partition of a transaction (and completes the group offsets of a
// transaction through the group coordinator); the coordinator tests use an
// in-memory one (and SimIo-backed logs for the crash points).
//
// Contract: each call resolves only once everything it wrote is stored as
// durably as the broker acknowledges produce requests, and rejects otherwise
// (the coordinator then answers an error and keeps its state before the call).

import type { StoredTxn, TxnPartition } from './txn-records.js';

export interface TxnMarker {
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly commit: boolean;
}

export interface TxnPersistence {
  /** The id's record; null stores a tombstone (the id expired, transactional.id.expiration.ms). */
  store(transactionalId: string, value: StoredTxn | null): Promise<void>;
  /** A COMMIT or ABORT marker on every partition (partitions deleted meanwhile are skipped). */
  writeMarkers(partitions: readonly TxnPartition[], marker: TxnMarker): Promise<void>;
}
