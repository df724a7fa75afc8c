// LogSegments against a trivial reference (a sorted array scanned linearly):
// floor lookups, removals and the active segment.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LogSegments } from '../src/log/log-segments.js';
import type { Segment } from '../src/segment/segment.js';

function fakeSegments(bases: readonly number[]): Segment[] {
  return bases.map((baseOffset) => ({ baseOffset, size: baseOffset % 7 }) as unknown as Segment);
}

function referenceFloor(bases: readonly number[], offset: number): number {
  let found = 0;
  for (let i = 0; i < bases.length; i++) if ((bases[i] as number) <= offset) found = i;
  return found;
}

const sortedBases = fc.uniqueArray(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 40 }).map((xs) => xs.sort((a, b) => a - b));

describe('LogSegments', () => {
  it('floorIndex, higher and endOf match a linear scan', () => {
    fc.assert(fc.property(sortedBases, fc.integer({ min: -5, max: 10_005 }), (bases, offset) => {
      const segments = new LogSegments(fakeSegments(bases));
      const index = segments.floorIndex(offset);
      expect(index).toBe(referenceFloor(bases, offset));
      expect(segments.higher(offset)?.baseOffset).toBe(bases.find((base) => base > offset));
      expect(segments.endOf(index)).toBe(bases[index + 1] ?? Number.POSITIVE_INFINITY);
      expect(segments.active.baseOffset).toBe(bases[bases.length - 1]);
      expect(segments.sizeInBytes).toBe(bases.reduce((sum, base) => sum + (base % 7), 0));
    }));
  });

  it('removeAbove, removeOldest and push keep the order', () => {
    fc.assert(fc.property(sortedBases, fc.integer({ min: 0, max: 10_000 }), (bases, offset) => {
      const segments = new LogSegments(fakeSegments(bases));
      const before = segments.all();
      const removed = segments.removeAbove(offset);
      expect(removed.map((s) => s.baseOffset)).toEqual(bases.filter((base) => base > offset));
      expect(segments.baseOffsets()).toEqual(bases.filter((base) => base <= offset));
      expect(before.map((s) => s.baseOffset)).toEqual(bases); // a reader's array is never cut in place
      if (segments.length > 0) {
        segments.removeOldest(1);
        expect(segments.baseOffsets()).toEqual(bases.filter((base) => base <= offset).slice(1));
      }
      segments.push(fakeSegments([20_000])[0] as Segment);
      expect(segments.active.baseOffset).toBe(20_000);
      expect(() => segments.push(fakeSegments([0])[0] as Segment)).toThrow();
    }));
  });
});
