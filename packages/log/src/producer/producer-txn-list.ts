// A list of transactions sorted by first offset, keyed by first offset (two
// transactions never share a first offset: it is the offset of a batch).
// Kafka uses a TreeMap; the number of open transactions in a partition is
// small (one per transactional producer at most), so a sorted array with
// binary search costs O(log n) to find and O(n) memmove to insert or remove,
// and its minimum is O(1).

import { lowerBound } from '../internal/binary-search.js';
import type { TxnMetadata } from './producer-append-info.js';

export class ProducerTxnList {
  private readonly txns: TxnMetadata[] = [];

  get size(): number {
    return this.txns.length;
  }

  /** The transaction with the lowest first offset, or undefined. */
  first(): TxnMetadata | undefined {
    return this.txns[0];
  }

  /** Inserts `txn`, replacing one with the same first offset (TreeMap.put). */
  put(txn: TxnMetadata): void {
    const slot = this.slotOf(txn.firstOffset);
    if (this.txns[slot]?.firstOffset === txn.firstOffset) this.txns[slot] = txn;
    else this.txns.splice(slot, 0, txn);
  }

  /** Removes and returns the transaction beginning at `firstOffset`, or undefined. */
  remove(firstOffset: number): TxnMetadata | undefined {
    const slot = this.slotOf(firstOffset);
    const found = this.txns[slot];
    if (found?.firstOffset !== firstOffset) return undefined;
    this.txns.splice(slot, 1);
    return found;
  }

  /** Removes every transaction for which `predicate` holds. */
  removeWhere(predicate: (txn: TxnMetadata) => boolean): void {
    let kept = 0;
    for (const txn of this.txns) if (!predicate(txn)) this.txns[kept++] = txn;
    this.txns.length = kept;
  }

  clear(): void {
    this.txns.length = 0;
  }

  /** The transactions in first-offset order (a live view: do not keep it across mutations). */
  values(): readonly TxnMetadata[] {
    return this.txns;
  }

  private slotOf(firstOffset: number): number {
    return lowerBound(this.txns.length, firstOffset, (slot) => this.txns[slot]!.firstOffset);
  }
}
