// OffsetMap: the cleaner's key → latest offset map over the dirty section of
// a log (Kafka's SkimpyOffsetMap), in a fixed byte budget.
//
// Kafka stores a 16-byte MD5 of each key (a collision would drop a live
// record); we store the key bytes themselves (as a latin1 string: one JS
// string per distinct key, exact), and charge each entry its key length plus
// ENTRY_OVERHEAD_BYTES for the Map slot and string header. When the next
// batch's keys would exceed the budget the map is full: the pass cleans up
// to the last batch mapped and a later pass continues from there.
//
// Invariants: bytesUsed ≤ budgetBytes except for the first batch of a pass
// (a batch always fits, so a pass always progresses); offsets put for a key
// only grow; latestOffset is the largest offset put.

import { assert } from '@seglog/common';

/** Map slot, string header and number: what one entry costs beyond its key bytes (V8, measured order of magnitude). */
export const ENTRY_OVERHEAD_BYTES = 48;

export class OffsetMap {
  readonly budgetBytes: number;
  private readonly map: Map<string, number>;
  private used: number;
  private latest: number;

  constructor(budgetBytes: number) {
    assert(Number.isSafeInteger(budgetBytes) && budgetBytes > 0, 'OffsetMap: budgetBytes must be a positive safe integer');
    this.budgetBytes = budgetBytes;
    this.map = new Map();
    this.used = 0;
    this.latest = -1;
  }

  get size(): number {
    return this.map.size;
  }

  get bytesUsed(): number {
    return this.used;
  }

  /** The largest offset put, -1 when empty. */
  get latestOffset(): number {
    return this.latest;
  }

  /** The bytes `keys` would add (keys already present cost nothing more). */
  costOf(keys: readonly string[]): number {
    let cost = 0;
    for (const key of keys) if (!this.map.has(key)) cost += key.length + ENTRY_OVERHEAD_BYTES;
    return cost;
  }

  /** Whether `cost` more bytes fit the budget (always true while the map is empty). */
  fits(cost: number): boolean {
    return this.map.size === 0 || this.used + cost <= this.budgetBytes;
  }

  put(key: string, offset: number): void {
    assert(offset >= this.latest, 'OffsetMap.put: offsets must not decrease');
    if (!this.map.has(key)) this.used += key.length + ENTRY_OVERHEAD_BYTES;
    this.map.set(key, offset);
    this.latest = offset;
  }

  /** The latest offset of `key`, -1 when not mapped. */
  get(key: string): number {
    return this.map.get(key) ?? -1;
  }

  clear(): void {
    this.map.clear();
    this.used = 0;
    this.latest = -1;
  }
}
