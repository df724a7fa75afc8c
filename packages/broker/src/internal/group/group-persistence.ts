// GroupPersistence: where the coordinator's state goes. The broker's
// implementation (offsets-topic.ts) appends Kafka's __consumer_offsets records
// and resolves once they are acknowledged per the ack mode; the model test
// uses an in-memory one. A record with a null value is a tombstone.
//
// Contract: append() resolves only when every record is stored as durably as
// the broker acknowledges produce requests; it rejects (and the coordinator
// then answers an error and changes nothing) when they are not.

import type { CommittedOffset } from './classic-group.js';

export interface StoredMember {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly rebalanceTimeout: number;
  readonly sessionTimeout: number;
  readonly subscription: Buffer;
  readonly assignment: Buffer;
}

/** GroupMetadataValue (Kafka's field names). */
export interface StoredGroup {
  readonly protocolType: string;
  readonly generation: number;
  readonly protocol: string | null;
  readonly leader: string | null;
  readonly currentStateTimestamp: number;
  readonly members: readonly StoredMember[];
}

export type GroupRecord =
  | { readonly kind: 'group'; readonly groupId: string; readonly value: StoredGroup | null }
  | { readonly kind: 'offset'; readonly groupId: string; readonly topic: string; readonly partition: number; readonly value: CommittedOffset | null };

/** An offset committed in a transaction that has not ended yet (txn-offsets.ts). */
export interface PendingTxnOffset {
  readonly groupId: string;
  readonly topic: string;
  readonly partition: number;
  readonly value: CommittedOffset;
}

/** The producer of a transactional write (TxnOffsetCommit). */
export interface TxnProducer {
  readonly producerId: number;
  readonly producerEpoch: number;
}

export interface GroupPersistence {
  /** With `producer`: one transactional batch of that producer (its offsets count once the transaction commits). */
  append(groupId: string, records: readonly GroupRecord[], producer?: TxnProducer): Promise<void>;
}
