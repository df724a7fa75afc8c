// OffsetMap: the cleaner's key → latest offset map over the dirty section of
// a log (Kafka's SkimpyOffsetMap), in a fixed byte budget.
//
// Layout: no JS object per key (a Map of one string per key made the GC walk
// every key while the map was live, on the event loop callers share). An
// open-addressing hash table (linear probing, load ≤ 3/4) in typed arrays:
// per slot a 32-bit hash, the key's start and length in one key arena (a
// Buffer of the key bytes, appended), and the offset (a float64: offsets are
// safe integers). Kafka keeps only a 16-byte digest of each key, so two keys
// with one digest share an entry and the older key's latest value can be
// dropped; here a slot matches only when its hash AND its key bytes are equal,
// so a hash collision costs a longer probe, never a record: the map is exact,
// and cleaning can never keep less than the latest value of every key.
// Both arrays grow by doubling, bounded by the budget's entries and bytes.
//
// Budget (as before the table): each entry is charged its key length plus
// ENTRY_OVERHEAD_BYTES; the slot arrays hold 27-53 B per entry (20 B a slot,
// load between 3/8 and 3/4), the arena at most twice the key bytes. When the next batch's keys would exceed the budget the map is full:
// the pass cleans up to the last batch mapped and a later pass continues.
//
// Invariants: bytesUsed ≤ budgetBytes except for the first batch of a pass
// (a batch always fits, so a pass always progresses); offsets put for a key
// only grow; latestOffset is the largest offset put.

import { assert } from '@seglog/common';

/** What one entry is charged beyond its key bytes: about the slot bytes per entry (20 B a slot at load 3/8-3/4). */
export const ENTRY_OVERHEAD_BYTES = 48;

const INITIAL_SLOTS = 1024;
const INITIAL_ARENA_BYTES = 16 * 1024;
const EMPTY = -1;

/** FNV-1a over the key bytes (32 bits). */
export function hashKey(key: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ (key[i] as number), 0x01000193);
  return h >>> 0;
}

export class OffsetMap {
  readonly budgetBytes: number;
  private hashes: Uint32Array;
  /** Arena start of the slot's key, EMPTY for a free slot. */
  private starts: Int32Array;
  private lengths: Int32Array;
  private offsets: Float64Array;
  private mask: number;
  private arena: Buffer;
  private arenaUsed: number;
  private count: number;
  private used: number;
  private latest: number;

  constructor(budgetBytes: number) {
    assert(Number.isSafeInteger(budgetBytes) && budgetBytes > 0, 'OffsetMap: budgetBytes must be a positive safe integer');
    this.budgetBytes = budgetBytes;
    this.hashes = new Uint32Array(INITIAL_SLOTS);
    this.starts = new Int32Array(INITIAL_SLOTS).fill(EMPTY);
    this.lengths = new Int32Array(INITIAL_SLOTS);
    this.offsets = new Float64Array(INITIAL_SLOTS);
    this.mask = INITIAL_SLOTS - 1;
    this.arena = Buffer.allocUnsafe(INITIAL_ARENA_BYTES);
    this.arenaUsed = 0;
    this.count = 0;
    this.used = 0;
    this.latest = -1;
  }

  get size(): number {
    return this.count;
  }

  get bytesUsed(): number {
    return this.used;
  }

  /** The largest offset put, -1 when empty. */
  get latestOffset(): number {
    return this.latest;
  }

  /** The bytes `keys` would add (keys already present cost nothing more; a key repeated in `keys` is charged each time). */
  costOf(keys: readonly Uint8Array[]): number {
    let cost = 0;
    for (const key of keys) if (this.find(key, hashKey(key)) < 0) cost += key.length + ENTRY_OVERHEAD_BYTES;
    return cost;
  }

  /** Whether `cost` more bytes fit the budget (always true while the map is empty). */
  fits(cost: number): boolean {
    return this.count === 0 || this.used + cost <= this.budgetBytes;
  }

  /** Maps `key` (its bytes are copied) to `offset`. */
  put(key: Uint8Array, offset: number): void {
    assert(offset >= this.latest, 'OffsetMap.put: offsets must not decrease');
    const hash = hashKey(key);
    const found = this.find(key, hash);
    this.latest = offset;
    if (found >= 0) {
      this.offsets[found] = offset;
      return;
    }
    if ((this.count + 1) * 4 > this.starts.length * 3) this.growSlots();
    let slot = hash & this.mask;
    while ((this.starts[slot] as number) !== EMPTY) slot = (slot + 1) & this.mask;
    if (this.arenaUsed + key.length > this.arena.length) this.growArena(this.arenaUsed + key.length);
    this.arena.set(key, this.arenaUsed);
    this.hashes[slot] = hash;
    this.starts[slot] = this.arenaUsed;
    this.lengths[slot] = key.length;
    this.offsets[slot] = offset;
    this.arenaUsed += key.length;
    this.count++;
    this.used += key.length + ENTRY_OVERHEAD_BYTES;
  }

  /** The latest offset of `key`, -1 when not mapped. */
  get(key: Uint8Array): number {
    const slot = this.find(key, hashKey(key));
    return slot < 0 ? -1 : (this.offsets[slot] as number);
  }

  clear(): void {
    this.starts.fill(EMPTY);
    this.arenaUsed = 0;
    this.count = 0;
    this.used = 0;
    this.latest = -1;
  }

  /** The slot holding exactly `key`, -1 when none: equal hash and equal bytes. */
  private find(key: Uint8Array, hash: number): number {
    let slot = hash & this.mask;
    for (;;) {
      const start = this.starts[slot] as number;
      if (start === EMPTY) return -1;
      if (this.hashes[slot] === hash && this.lengths[slot] === key.length && this.sameBytes(start, key)) return slot;
      slot = (slot + 1) & this.mask;
    }
  }

  private sameBytes(start: number, key: Uint8Array): boolean {
    const arena = this.arena;
    if (key.length > 32) return arena.compare(key, 0, key.length, start, start + key.length) === 0;
    for (let i = 0; i < key.length; i++) if (arena[start + i] !== key[i]) return false;
    return true;
  }

  private growSlots(): void {
    const oldHashes = this.hashes;
    const oldStarts = this.starts;
    const oldLengths = this.lengths;
    const oldOffsets = this.offsets;
    const slots = oldStarts.length * 2;
    this.hashes = new Uint32Array(slots);
    this.starts = new Int32Array(slots).fill(EMPTY);
    this.lengths = new Int32Array(slots);
    this.offsets = new Float64Array(slots);
    this.mask = slots - 1;
    for (let i = 0; i < oldStarts.length; i++) {
      const start = oldStarts[i] as number;
      if (start === EMPTY) continue;
      const hash = oldHashes[i] as number;
      let slot = hash & this.mask;
      while ((this.starts[slot] as number) !== EMPTY) slot = (slot + 1) & this.mask;
      this.hashes[slot] = hash;
      this.starts[slot] = start;
      this.lengths[slot] = oldLengths[i] as number;
      this.offsets[slot] = oldOffsets[i] as number;
    }
  }

  private growArena(needed: number): void {
    let size = this.arena.length * 2;
    while (size < needed) size *= 2;
    const arena = Buffer.allocUnsafe(size);
    this.arena.copy(arena, 0, 0, this.arenaUsed);
    this.arena = arena;
  }
}
