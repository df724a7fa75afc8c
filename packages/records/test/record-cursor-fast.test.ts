// Differential: RecordCursor's fast path (next() decoding the common record
// in locals) against the same cursor with the strict readers only
// (fastPath: false). Every getter of every record, and the error (code,
// rule, context) where the strict pass throws, must be the same. Inputs:
// built batches (keys, values, headers, timestamp deltas small and huge,
// LogAppendTime), then the same bytes with random bytes of the record region
// overwritten (the cursor does not check CRCs). Plus: the fast path does take
// an ordinary record (or it measures nothing).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildBatch, RecordBatch, RecordCursor } from '../src/index.js';
import { nullablePayload, overwriteRecords, T0, walkCursor as walk } from './helpers.js';

const record = fc.record({
  key: nullablePayload,
  value: nullablePayload,
  headers: fc.oneof(fc.constant([]), fc.array(fc.record({ key: fc.string({ maxLength: 8 }), value: nullablePayload }), { maxLength: 3 })),
  timestampDelta: fc.oneof(fc.integer({ min: -1_000, max: 1_000 }), fc.integer({ min: -(2 ** 22), max: 2 ** 22 }), fc.integer({ min: -(2 ** 50), max: 2 ** 50 })),
});
const input = fc.record({
  records: fc.array(record, { minLength: 1, maxLength: 20 }),
  baseTimestamp: fc.oneof(fc.constant(T0), fc.integer({ min: 0, max: 2 ** 45 })),
  logAppendTime: fc.boolean(),
  mutations: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
});

describe('RecordCursor fast path vs the strict readers', () => {
  it('shows the same records and throws the same errors', () => {
    let rejected = 0;
    let intact = 0;
    fc.assert(fc.property(input, (inp) => {
      const buf = buildBatch({ records: inp.records, baseTimestamp: inp.baseTimestamp });
      if (inp.logAppendTime) buf.writeInt16BE(buf.readInt16BE(21) | 0x08, 21); // timestamp type bit (CRC not checked here)
      overwriteRecords(buf, inp.mutations);
      const batch = new RecordBatch(buf);
      // One cursor of each kind reused across two batches: state left by the first must not leak.
      const fast = new RecordCursor();
      const strict = new RecordCursor({ fastPath: false });
      const want = walk(batch, strict);
      expect(walk(batch, fast)).toEqual(want);
      expect(walk(batch, fast)).toEqual(walk(batch, strict));
      if (want.at(-1)!['code'] !== undefined) rejected++;
      if (inp.mutations.length === 0) intact++;
    }), { numRuns: 2000, seed: 20260418 });
    expect(intact).toBeGreaterThan(100);
    expect(rejected).toBeGreaterThan(100); // the mutations do reach malformed records
  });

  it('takes an ordinary record on the fast path', () => {
    const batch = new RecordBatch(buildBatch({ records: [{ key: null, value: Buffer.alloc(100, 1) }, { key: Buffer.from('k'), value: null }], baseTimestamp: T0 }));
    const cursor = new RecordCursor().open(batch);
    // The private fast decoder itself (a test reaching in: its answer is otherwise invisible by design).
    const nextFast = (cursor as unknown as { nextFast(): boolean }).nextFast.bind(cursor);
    expect(nextFast()).toBe(true);
    expect(cursor.valueLength).toBe(100);
    expect(nextFast()).toBe(true);
    expect(cursor.keyLength).toBe(1);
    expect(cursor.valueLength).toBe(-1);
    expect(cursor.next()).toBe(false);
  });
});
