// TxnMetadata: the coordinator's view of one transactional id (Kafka's
// TransactionMetadata): the producer id and epoch it holds, the previous pair
// (a retried InitProducerId after a bump is answered with the current pair,
// KIP-360), the state, the partitions of the open transaction, its timeout
// and start time. `pending` is set while an operation on the id waits for its
// write: any other operation meanwhile is CONCURRENT_TRANSACTIONS.

import type { StoredTxn, TxnPartition, TxnStateName } from './txn-records.js';

export function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

export class TxnMetadata {
  readonly transactionalId: string;
  producerId: number;
  producerEpoch: number;
  lastProducerId: number;
  lastProducerEpoch: number;
  timeoutMs: number;
  state: TxnStateName;
  readonly partitions: Map<string, TxnPartition>;
  startMs: number;
  updateMs: number;
  pending: boolean;

  constructor(transactionalId: string, producerId: number, timeoutMs: number, now: number) {
    this.transactionalId = transactionalId;
    this.producerId = producerId;
    this.producerEpoch = -1;
    this.lastProducerId = -1;
    this.lastProducerEpoch = -1;
    this.timeoutMs = timeoutMs;
    this.state = 'Empty';
    this.partitions = new Map();
    this.startMs = -1;
    this.updateMs = now;
    this.pending = false;
  }

  static restore(transactionalId: string, stored: StoredTxn): TxnMetadata {
    const txn = new TxnMetadata(transactionalId, stored.producerId, stored.transactionTimeoutMs, stored.lastUpdateTimestampMs);
    txn.producerEpoch = stored.producerEpoch;
    txn.state = stored.state;
    txn.startMs = stored.startTimestampMs;
    for (const p of stored.partitions) txn.partitions.set(partitionKey(p.topic, p.partition), p);
    return txn;
  }

  /** The record of this id with `changes` applied (what is written before the change is made in memory). */
  stored(changes: Partial<StoredTxn>): StoredTxn {
    return {
      producerId: this.producerId, producerEpoch: this.producerEpoch, transactionTimeoutMs: this.timeoutMs, state: this.state,
      partitions: [...this.partitions.values()], lastUpdateTimestampMs: this.updateMs, startTimestampMs: this.startMs, ...changes,
    };
  }

  /** Applies a stored record (after its write succeeded). */
  apply(stored: StoredTxn): void {
    this.producerId = stored.producerId;
    this.producerEpoch = stored.producerEpoch;
    this.timeoutMs = stored.transactionTimeoutMs;
    this.state = stored.state;
    this.partitions.clear();
    for (const p of stored.partitions) this.partitions.set(partitionKey(p.topic, p.partition), p);
    this.updateMs = stored.lastUpdateTimestampMs;
    this.startMs = stored.startTimestampMs;
  }
}
