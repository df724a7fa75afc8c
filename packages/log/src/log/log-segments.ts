// LogSegments: the ordered collection of one partition's segments (Kafka's
// LogSegments), with floor lookups by offset.
//
// Invariants: base offsets strictly ascending; never empty once the log is
// open (the last segment is the active one, the only one written). The
// collection owns no file: removing a segment from it does not close or
// delete it (LocalLog does that). Lookups are binary searches; the array is
// replaced, never mutated in place, when segments are removed, so a reader
// iterating the array it got from all() keeps a consistent view.

import { assert } from '@seglog/common';
import type { Segment } from '../segment/segment.js';

export class LogSegments {
  private segments: Segment[];

  constructor(segments: Segment[]) {
    for (let i = 1; i < segments.length; i++) {
      assert((segments[i - 1] as Segment).baseOffset < (segments[i] as Segment).baseOffset, 'LogSegments: base offsets must ascend');
    }
    this.segments = segments;
  }

  get length(): number {
    return this.segments.length;
  }

  /** The segments, ascending (do not mutate). */
  all(): readonly Segment[] {
    return this.segments;
  }

  at(index: number): Segment | undefined {
    return this.segments[index];
  }

  /** The oldest segment. */
  get first(): Segment {
    assert(this.segments.length > 0, 'LogSegments.first: no segments');
    return this.segments[0] as Segment;
  }

  /** The newest segment: the one being written. */
  get active(): Segment {
    return this.segments[this.segments.length - 1] as Segment;
  }

  isActive(index: number): boolean {
    return index === this.segments.length - 1;
  }

  baseOffsets(): number[] {
    return this.segments.map((segment) => segment.baseOffset);
  }

  /** Sum of the segments' logical sizes. */
  get sizeInBytes(): number {
    let total = 0;
    for (const segment of this.segments) total += segment.size;
    return total;
  }

  /** The index of the last segment with base ≤ offset (0 when offset is below every base). */
  floorIndex(offset: number): number {
    let lo = 0;
    let hi = this.segments.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if ((this.segments[mid] as Segment).baseOffset <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The first segment whose base is above `baseOffset`, or undefined. */
  higher(baseOffset: number): Segment | undefined {
    return this.segments.find((next) => next.baseOffset > baseOffset);
  }

  /** The base offset of the segment after the one at `index`, or +∞ for the active one. */
  endOf(index: number): number {
    const next = this.segments[index + 1];
    return next === undefined ? Number.POSITIVE_INFINITY : next.baseOffset;
  }

  /** Adds a new active segment above every other. */
  push(segment: Segment): void {
    const last = this.segments[this.segments.length - 1];
    assert(last === undefined || last.baseOffset < segment.baseOffset, 'LogSegments.push: base offset must be above the active segment');
    this.segments.push(segment);
  }

  /**
   * Replaces `count` consecutive segments starting at `index` with one
   * segment of the same base (the cleaner's swap); the active one is never
   * replaced. A new array, so readers iterating the old one stay consistent.
   */
  replace(index: number, count: number, segment: Segment): void {
    const first = this.segments[index];
    assert(first !== undefined && first.baseOffset === segment.baseOffset, 'LogSegments.replace: the new segment must have the first base');
    assert(count >= 1 && index + count < this.segments.length, 'LogSegments.replace: the active segment cannot be replaced');
    this.segments = [...this.segments.slice(0, index), segment, ...this.segments.slice(index + count)];
  }

  /** Removes and returns the segments with base > offset. */
  removeAbove(offset: number): Segment[] {
    const removed = this.segments.filter((segment) => segment.baseOffset > offset);
    this.segments = this.segments.filter((segment) => segment.baseOffset <= offset);
    return removed;
  }

  /** Removes and returns every segment. */
  removeAll(): Segment[] {
    const removed = this.segments;
    this.segments = [];
    return removed;
  }

  /** Removes the `count` oldest segments. */
  removeOldest(count: number): void {
    assert(count >= 0 && count <= this.segments.length, 'LogSegments.removeOldest: count out of range');
    this.segments = this.segments.slice(count);
  }
}
