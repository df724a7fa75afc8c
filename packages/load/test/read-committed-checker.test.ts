// The checker's transactional mode against a hand-built partition: committed
// and aborted transactions of two producer ids interleaved with plain
// batches, markers, and the Fetch answer's aborted list. A clean log passes
// with the aborted records excluded; a duplicated, a missing or a reordered
// committed record, an aborted transaction not listed (its records would be
// delivered) and a committed one listed as aborted are each reported.

import { describe, expect, it } from 'vitest';
import { buildBatch, buildControlBatch } from '@seglog/records';
import { ReadCommittedChecker } from '../src/read-committed-checker.js';
import type { AbortedTxn } from '../src/read-committed-checker.js';
import { fillPayload } from '../src/payload.js';

const RECORD_BYTES = 40;
const T = 1_700_000_000_000;

interface Log { bytes: Buffer[]; next: number }

function payload(sequence: number): Buffer {
  const value = Buffer.alloc(RECORD_BYTES);
  fillPayload(value, 0, RECORD_BYTES, { producer: 0, partition: 0, sequence });
  return value;
}

function data(log: Log, sequences: readonly number[], producerId = -1): number {
  const baseOffset = log.next;
  log.bytes.push(buildBatch({
    records: sequences.map((s) => ({ value: payload(s) })), baseOffset, baseTimestamp: T,
    ...(producerId >= 0 ? { producerId, producerEpoch: 0, baseSequence: 0, transactional: true } : {}),
  }));
  log.next += sequences.length;
  return baseOffset;
}

function marker(log: Log, type: 'COMMIT' | 'ABORT', producerId: number): void {
  log.bytes.push(buildControlBatch({ type, producerId, producerEpoch: 0, coordinatorEpoch: 0, timestamp: T, baseOffset: log.next }));
  log.next += 1;
}

/** Committed sequences 0..9 in order; producer id 7 aborts a transaction of junk sequences (0..2 again) in the middle. */
function scenario(): { log: Log; aborted: AbortedTxn[] } {
  const log: Log = { bytes: [], next: 0 };
  data(log, [0, 1]);
  const first = data(log, [2, 3], 5);
  const abortedAt = data(log, [0, 1, 2], 7);
  data(log, [4], 5);
  marker(log, 'ABORT', 7);
  marker(log, 'COMMIT', 5);
  data(log, [5, 6]);
  data(log, [7, 8], 5);
  marker(log, 'COMMIT', 5);
  data(log, [9]);
  expect(first).toBe(2);
  return { log, aborted: [{ producerId: 7, firstOffset: abortedAt }] };
}

function check(log: Log, aborted: AbortedTxn[], split = 3): ReturnType<ReadCommittedChecker['finish']> {
  const c = new ReadCommittedChecker({ partitions: 1, producers: 1, recordBytes: RECORD_BYTES, payload: 'random', expectedRecords: [10], maxViolationsReported: 20 });
  // Two fetch answers, as a consumer would get them; the aborted list comes with the answer whose range it overlaps.
  const head = Buffer.concat(log.bytes.slice(0, split));
  const tail = Buffer.concat(log.bytes.slice(split));
  expect(c.checkFetch(0, head, aborted)).toBe(split);
  expect(c.nextOffset(0)).toBeGreaterThan(0);
  c.checkFetch(0, tail, []);
  expect(c.nextOffset(0)).toBe(log.next);
  return c.finish();
}

describe('ReadCommittedChecker', () => {
  it('passes a clean log and excludes the aborted transaction', () => {
    const { log, aborted } = scenario();
    const r = check(log, aborted);
    expect(r.violations).toEqual([]);
    expect(r.recordsCommitted).toBe(10);
    expect(r.recordsAborted).toBe(3);
    expect([r.abortMarkers, r.commitMarkers, r.controlBatches]).toEqual([1, 2, 3]);
  });

  it('passes the clean log fetched in answers split at another batch', () => {
    const { log, aborted } = scenario();
    expect(check(log, aborted, 2).violations).toEqual([]);
  });

  it('reports a duplicated committed record', () => {
    const { log, aborted } = scenario();
    data(log, [9]);
    const r = check(log, aborted);
    expect(r.violationCount).toBe(1);
    expect(r.violations[0]).toMatch(/sequence 9 delivered again .*duplicate/);
  });

  it('reports a missing committed record, in the middle and at the end', () => {
    const log: Log = { bytes: [], next: 0 };
    data(log, [0, 1, 2, 3]);
    data(log, [5, 6, 7, 8], 5);
    marker(log, 'COMMIT', 5);
    const r = check(log, [], 1);
    expect(r.violations).toEqual([
      expect.stringMatching(/sequence 5 at offset 4, expected 4 \(sequences 4\.\.4 missing\)/),
      expect.stringMatching(/delivered sequences up to 8, expected up to 9 \(1 missing\)/),
    ]);
  });

  it('reports records out of order', () => {
    const log: Log = { bytes: [], next: 0 };
    data(log, [0, 1, 2, 4, 3, 5, 6, 7, 8, 9]);
    const r = check(log, [], 1);
    expect(r.violationCount).toBe(2);
    expect(r.violations[1]).toMatch(/sequence 3 delivered again/);
  });

  it('reports an aborted transaction missing from the aborted list (its records delivered as committed)', () => {
    const { log } = scenario();
    const r = check(log, []);
    expect(r.violations.some((v) => /ABORT marker at offset \d+ for producer id 7, whose records were delivered/.test(v))).toBe(true);
    expect(r.violations.some((v) => /delivered again/.test(v))).toBe(true);
    expect(r.recordsAborted).toBe(0);
  });

  it('reports a committed transaction listed as aborted (its records dropped)', () => {
    const { log, aborted } = scenario();
    const r = check(log, [...aborted, { producerId: 5, firstOffset: 2 }]);
    expect(r.violations.some((v) => /COMMIT marker .* producer id 5, whose transaction the answer listed as aborted/.test(v))).toBe(true);
    expect(r.violations.some((v) => /missing/.test(v))).toBe(true);
  });

  it('reports a delivered transaction that has no marker at the end', () => {
    const log: Log = { bytes: [], next: 0 };
    data(log, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 5);
    const r = check(log, [], 1);
    expect(r.violations).toEqual([expect.stringMatching(/producer id 5 has no marker, yet its records were delivered/)]);
  });
});
