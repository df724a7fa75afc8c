// Binary searches over the sorted key column of an index (slots 0..count−1).
// Both are the textbook bounds, so a floor lookup is `upperBound − 1` and a
// ceiling lookup is `lowerBound`. Kafka first probes the newest 1024 entries
// (a page-cache optimisation for mmap); its results are the same on sorted
// keys, and our entries live in memory, so we search the whole range.
// On unsorted (corrupt) keys both still terminate and return a slot in range.

/** The first slot whose key is ≥ target, or `count` if none. */
export function lowerBound(count: number, target: number, keyAt: (slot: number) => number): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keyAt(mid) < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first slot whose key is > target, or `count` if none. */
export function upperBound(count: number, target: number, keyAt: (slot: number) => number): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keyAt(mid) <= target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
