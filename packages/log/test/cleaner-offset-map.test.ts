// OffsetMap (cleaner/offset-map.ts): an exact key → latest offset map in
// typed arrays and one key arena. Property: after any sequence of puts (keys
// from a small alphabet, so repeats and probe chains are common; growth of
// the slots and the arena included) it answers as a Map of the key bytes
// does, charges the same bytes, and keeps latestOffset. Two keys whose
// hashes collide (FNV-1a 32: "costarring" / "liquid") keep their own offsets:
// a collision can never make the cleaner drop a key's latest value.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ENTRY_OVERHEAD_BYTES, hashKey, OffsetMap } from '../src/cleaner/offset-map.js';

describe('cleaner offset map', () => {
  it('answers as a Map of the key bytes, with the same charge', () => {
    fc.assert(fc.property(fc.array(fc.uint8Array({ minLength: 0, maxLength: 40 }).map((k) => Buffer.from(k.map((b) => b % 4))), { maxLength: 3000 }), (keys) => {
      const map = new OffsetMap(1 << 30);
      const model = new Map<string, number>();
      let charged = 0;
      keys.forEach((key, offset) => {
        const name = key.toString('hex');
        expect(map.costOf([key])).toBe(model.has(name) ? 0 : key.length + ENTRY_OVERHEAD_BYTES);
        if (!model.has(name)) charged += key.length + ENTRY_OVERHEAD_BYTES;
        map.put(key, offset);
        model.set(name, offset);
      });
      expect(map.size).toBe(model.size);
      expect(map.bytesUsed).toBe(charged);
      expect(map.latestOffset).toBe(keys.length - 1);
      for (const [name, offset] of model) expect(map.get(Buffer.from(name, 'hex'))).toBe(offset);
      expect(map.get(Buffer.from('absent-key-not-in-alphabet'))).toBe(-1);
    }), { numRuns: 60 });
  });

  it('stays exact across growth of the slots and the arena (thousands of keys)', () => {
    fc.assert(fc.property(fc.integer({ min: 2000, max: 20000 }), fc.integer({ min: 1, max: 0x7fffffff }), (puts, seed) => {
      let s = seed;
      const next = (): number => (s = (Math.imul(s, 1103515245) + 12345) >>> 0);
      const map = new OffsetMap(1 << 30);
      const model = new Map<string, number>();
      for (let offset = 0; offset < puts; offset++) {
        const name = `key-${next() % (puts / 2)}-${'x'.repeat(next() % 48)}`;
        map.put(Buffer.from(name), offset);
        model.set(name, offset);
      }
      expect(map.size).toBe(model.size);
      for (const [name, offset] of model) expect(map.get(Buffer.from(name))).toBe(offset);
    }), { numRuns: 10 });
  });

  it('keeps both keys of a hash collision apart', () => {
    const a = Buffer.from('costarring');
    const b = Buffer.from('liquid');
    expect(hashKey(a)).toBe(hashKey(b));
    const map = new OffsetMap(1 << 20);
    map.put(a, 5);
    expect(map.get(b)).toBe(-1);
    expect(map.costOf([b])).toBe(b.length + ENTRY_OVERHEAD_BYTES);
    map.put(b, 10);
    expect(map.get(a)).toBe(5);
    expect(map.get(b)).toBe(10);
    expect(map.size).toBe(2);
    map.clear();
    expect(map.get(a)).toBe(-1);
    expect(map.size).toBe(0);
  });

  it('fits the budget: full once the charge would pass it, never while empty', () => {
    const map = new OffsetMap(100);
    expect(map.fits(1000)).toBe(true);
    map.put(Buffer.from('k1'), 0);
    expect(map.bytesUsed).toBe(2 + ENTRY_OVERHEAD_BYTES);
    expect(map.fits(map.costOf([Buffer.from('k2')]))).toBe(true);
    map.put(Buffer.from('k2'), 1);
    expect(map.fits(map.costOf([Buffer.from('k3')]))).toBe(false);
    expect(map.fits(map.costOf([Buffer.from('k1')]))).toBe(true);
  });
});
