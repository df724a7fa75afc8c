// The checker's group path (checkGroupBatch) against hand-built batches of
// one producer on one partition: a batch wholly below the checked offset is
// a redelivery (its records counted as duplicates, not consumed again); a
// batch that starts below it is checked from the checked offset on; a gap is
// still a violation; and the plain path (checkBatch) reports the same
// redelivery as a violation, so the group path hides nothing it should not.

import { describe, expect, it } from 'vitest';
import { buildBatch } from '@seglog/records';
import { LoadChecker } from '../src/load-checker.js';
import { fillPayload } from '../src/payload.js';
import { ProducerLedger } from '../src/producer-ledger.js';

const RECORD_BYTES = 40;

function batch(baseOffset: number, count: number): Buffer {
  const records = Array.from({ length: count }, (_, i) => {
    const value = Buffer.alloc(RECORD_BYTES);
    fillPayload(value, 0, RECORD_BYTES, { producer: 0, partition: 0, sequence: baseOffset + i });
    return { value };
  });
  return buildBatch({ records, baseOffset, baseTimestamp: 1_700_000_000_000 });
}

/** 30 records acknowledged at offsets 0..29 in three batches of 10. */
function checker(): LoadChecker {
  const ledger = new ProducerLedger(1);
  for (let i = 0; i < 30; i++) ledger.claimSequence(0);
  for (const base of [0, 10, 20]) ledger.acked(0, base, base, 10);
  return new LoadChecker({
    partitions: 1, recordBytes: RECORD_BYTES, payload: 'random', producers: [{ ledger, producerId: -1, producerEpoch: -1 }],
    startOffsets: [0], endOffsets: [30], allUncertain: false, maxViolationsReported: 10, corruption: null,
  });
}

describe('LoadChecker in group mode', () => {
  it('whole batches fetched again are duplicates, not violations, not consumed twice', () => {
    const c = checker();
    for (const base of [0, 10, 0, 10, 20, 20]) c.checkGroupBatch(0, batch(base, 10));
    const r = c.finish();
    expect(r.violations).toEqual([]);
    expect(r.recordsConsumed).toBe(30);
    expect(r.duplicateRecords).toBe(30);
  });

  it('a batch that starts below the checked offset: its records below are duplicates, the rest checked', () => {
    const c = checker();
    c.checkGroupBatch(0, batch(0, 10));
    c.checkGroupBatch(0, batch(0, 20)); // offsets 0..19, of which 0..9 were checked
    c.checkGroupBatch(0, batch(20, 10));
    const r = c.finish();
    expect(r.violations).toEqual([]);
    expect(r.recordsConsumed).toBe(30);
    expect(r.duplicateRecords).toBe(10);
  });

  it('a gap is a violation on the group path too; a redelivery on the plain path is one', () => {
    const gap = checker();
    gap.checkGroupBatch(0, batch(0, 10));
    gap.checkGroupBatch(0, batch(20, 10));
    const g = gap.finish();
    expect(g.violations).toContain('partition 0: batch at offset 20, expected 10 (offsets not contiguous)');
    expect(g.violations.some((v) => /acknowledged record at offset 10 .* was not consumed/.test(v))).toBe(true);
    const plain = checker();
    for (const base of [0, 0, 10, 20]) plain.checkBatch(0, batch(base, 10));
    const p = plain.finish();
    expect(p.duplicateRecords).toBe(0);
    expect(p.violations.some((v) => /present twice/.test(v))).toBe(true);
  });
});
