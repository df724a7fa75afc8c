// Differential: the cursor-free validation walk (internal/fast-scan.ts) must
// accept only what the strict RecordCursor pass accepts, with the same
// findings, and must not give up on ordinary batches (or it measures nothing).
// Inputs: built batches, then the same bytes with random bytes of the record
// region overwritten (CRC not involved: the walk only sees the records).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildBatch, RecordBatch, RecordCursor } from '../src/index.js';
import { fastScanRecords, fastScanResult } from '../src/internal/fast-scan.js';
import { nullablePayload, overwriteRecords, RECORDS_OFFSET, T0 } from './helpers.js';

const record = fc.record({
  key: nullablePayload,
  value: nullablePayload,
  headers: fc.array(fc.record({ key: fc.string({ maxLength: 8 }), value: nullablePayload }), { maxLength: 3 }),
  timestampDelta: fc.oneof(fc.integer({ min: -1_000, max: 1_000 }), fc.integer({ min: -(2 ** 50), max: 2 ** 50 })),
});
const input = fc.record({
  records: fc.array(record, { minLength: 1, maxLength: 20 }),
  baseTimestamp: fc.oneof(fc.constant(T0), fc.integer({ min: 0, max: 2 ** 45 })),
  mutations: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
  compacted: fc.boolean(),
  bounds: fc.option(fc.tuple(fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 0, max: 2000 })), { nil: undefined }),
});

interface Findings { maxTimestamp: number; maxTimestampIndex: number; consecutive: boolean; keyErrorIndex: number; timestampErrorIndex: number; timestampError: number }

/** The strict pass, as validate-batch's scanRecords runs it: null when the cursor rejects the records. */
function strict(batch: RecordBatch, rules: { now: number; beforeMaxMs: number; afterMaxMs: number; compacted: boolean }): Findings | null {
  const f: Findings = { maxTimestamp: -1, maxTimestampIndex: -1, consecutive: true, keyErrorIndex: -1, timestampErrorIndex: -1, timestampError: 0 };
  const cursor = new RecordCursor();
  try {
    cursor.open(batch);
    while (cursor.next()) {
      const i = cursor.index;
      const ts = cursor.timestamp;
      if (cursor.offsetDelta !== i) f.consecutive = false;
      if (ts > f.maxTimestamp) { f.maxTimestamp = ts; f.maxTimestampIndex = i; }
      if (rules.compacted && cursor.keyLength < 0) {
        if (f.keyErrorIndex < 0) f.keyErrorIndex = i;
      } else if (f.timestampErrorIndex < 0 && ts !== -1 && (rules.now - ts > rules.beforeMaxMs || ts - rules.now > rules.afterMaxMs)) {
        f.timestampErrorIndex = i;
        f.timestampError = ts;
      }
    }
    return f;
  } catch (error) {
    expect((error as { code?: string }).code).toBe('SEGLOG_ERR_RECORDS_INVALID_RECORD');
    return null;
  }
}

describe('fast validation walk vs the strict cursor pass', () => {
  it('accepts only what the cursor accepts, with the same findings, and takes ordinary batches', () => {
    let fastOnIntact = 0;
    let intact = 0;
    let mutatedRejected = 0;
    fc.assert(fc.property(input, (inp) => {
      const buf = buildBatch({ records: inp.records, baseTimestamp: inp.baseTimestamp });
      const rules = {
        baseTimestamp: inp.baseTimestamp, baseOffset: 0, boundTimestamps: true, now: T0,
        beforeMaxMs: inp.bounds?.[0] ?? Infinity, afterMaxMs: inp.bounds?.[1] ?? Infinity, compacted: inp.compacted,
      };
      overwriteRecords(buf, inp.mutations);
      const batch = new RecordBatch(buf);
      const want = strict(batch, rules);
      const fast = fastScanRecords(buf, RECORDS_OFFSET, buf.length, batch.recordsCount, rules);
      if (fast) {
        expect(want).not.toBeNull();
        expect({ ...fastScanResult }).toEqual(want);
      }
      if (inp.mutations.length === 0) {
        intact++;
        const small = inp.records.every((r) => Math.abs(r.timestampDelta) < 2 ** 40);
        if (small) {
          expect(fast).toBe(true); // ordinary batches never fall back
          fastOnIntact++;
        }
      } else if (want === null) mutatedRejected++;
    // A fixed seed: the counts below check the generator's mix, and with a fresh seed each run
    // fastOnIntact was seen to land exactly on its bound (50), so the verdict was a coin toss.
    }), { numRuns: 3000, seed: 20261202 });
    expect(intact).toBeGreaterThan(100);
    expect(fastOnIntact).toBeGreaterThan(50);
    expect(mutatedRejected).toBeGreaterThan(100); // the mutations do reach malformed records
  });
});
