// BatchWindowIndex (one native call per window: CRCs and record entries)
// against the JavaScript paths it replaces. Differential: for windows of
// several built batches (keys, values, headers, small and huge timestamp
// deltas, some compressed, some with record bytes overwritten, some with the
// CRC refreshed after that), every batch's CRC verdict must be checkCrc's
// and a cursor opened on a batch with the attached entries must show what the
// strict cursor shows, record by record and error by error. Plus: plain
// batches do get entries (or nothing is measured), and a batch the index
// has no entry for falls back to the JavaScript paths.
import { capabilities } from '@seglog/native';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BatchWindowIndex, buildBatch, RecordBatch, RecordCursor } from '../src/index.js';
import type { CodecId } from '../src/index.js';
import { fixCrc, nullablePayload, overwriteRecords, T0, walkCursor } from './helpers.js';

const record = fc.record({
  key: nullablePayload,
  value: nullablePayload,
  headers: fc.oneof({ weight: 30, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(fc.record({ key: fc.string({ maxLength: 8 }), value: nullablePayload }), { maxLength: 2 }) }),
  timestampDelta: fc.oneof({ weight: 12, arbitrary: fc.integer({ min: -1_000, max: 1_000 }) }, { weight: 1, arbitrary: fc.integer({ min: -(2 ** 22), max: 2 ** 22 }) }),
});
const batchInput = fc.record({
  records: fc.array(record, { minLength: 1, maxLength: 12 }),
  compression: fc.constantFrom<CodecId>(0, 0, 0, 0, 1),
  mutations: fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 3 }) }),
  refreshCrc: fc.boolean(),
});
const windowInput = fc.record({ batches: fc.array(batchInput, { minLength: 1, maxLength: 6 }), lead: fc.nat({ max: 9 }), tail: fc.nat({ max: 70 }) });

function crcVerdict(fn: () => void): string {
  try {
    fn();
    return 'ok';
  } catch (error) {
    return `${(error as { code?: string }).code}:${(error as Error).message}`;
  }
}

describe('BatchWindowIndex', () => {
  it('gives the CRC verdicts and the records of the JavaScript paths', () => {
    let indexed = 0;
    let mismatches = 0;
    let rejected = 0;
    fc.assert(fc.property(windowInput, (inp) => {
      const parts = inp.batches.map((b, i) => {
        const buf = buildBatch({ baseOffset: i * 100, records: b.records, baseTimestamp: T0, compression: b.compression });
        overwriteRecords(buf, b.mutations);
        return b.refreshCrc ? fixCrc(buf) : buf;
      });
      // The window is a view with a byte offset, some junk before it and a partial batch after it.
      const whole = Buffer.concat([Buffer.alloc(3 + inp.lead, 0xee), ...parts, parts[0]!.subarray(0, inp.tail)]);
      const window = whole.subarray(3);
      const from = inp.lead;
      const to = window.length;
      const index = new BatchWindowIndex();
      // Without the addon index() does nothing and every answer below comes from the JavaScript paths.
      expect(index.index(window, from, to)).toBe(capabilities.loaded ? parts.length : 0);
      const plain = new RecordCursor({ fastPath: false });
      const fast = new RecordCursor();
      let at = from;
      for (const part of parts) {
        const batch = new RecordBatch(window, at);
        // A batch of another buffer has no entry: apply() runs checkCrc itself, which gives the expected verdict.
        const expectedCrc = crcVerdict(() => index.apply(new RecordBatch(Buffer.from(part)), true, false));
        expect(expectedCrc === 'ok').toBe(batch.isValid());
        expect(crcVerdict(() => index.apply(batch, true, true))).toBe(expectedCrc);
        if (expectedCrc !== 'ok') mismatches++;
        if (batch.recordIndex !== null) indexed++;
        // The indexed cursor (twice: state must not leak) against the strict one on the same bytes.
        // (A compressed batch never gets entries; its records are the codecs' tests.)
        if ((part.readInt16BE(21) & 7) !== 0) expect(batch.recordIndex).toBeNull();
        else {
          const strict = walkCursor(new RecordBatch(window, at), plain);
          expect(walkCursor(batch, fast)).toEqual(strict);
          if (batch.recordIndex !== null) expect(walkCursor(batch, fast)).toEqual(strict);
          if (strict.at(-1)!['code'] !== undefined) rejected++;
        }
        at += part.length;
      }
    }), { numRuns: 400, seed: 20261205 });
    if (capabilities.loaded) expect(indexed).toBeGreaterThan(200);
    else expect(indexed).toBe(0);
    expect(mismatches).toBeGreaterThan(50);
    expect(rejected).toBeGreaterThan(10);
  });

  // Each test below also runs without the addon (CI's native-off pass): then nothing is indexed and the answers are the same.
  const on = capabilities.loaded;

  it('attaches entries that the cursor steps through, and none for a batch it did not index', () => {
    const a = buildBatch({ baseOffset: 0, records: [{ key: null, value: Buffer.alloc(100, 1) }, { key: Buffer.from('k'), value: null }], baseTimestamp: T0 });
    const b = buildBatch({ baseOffset: 2, records: [{ key: null, value: Buffer.from('v'), headers: [{ key: 'h', value: null }] }], baseTimestamp: T0 });
    const window = Buffer.concat([a, b]);
    const index = new BatchWindowIndex();
    expect(index.index(window, 0, window.length)).toBe(on ? 2 : 0);
    const first = new RecordBatch(window, 0);
    index.apply(first, true, true);
    expect(first.recordIndex !== null).toBe(on);
    const cursor = new RecordCursor().open(first);
    // The entries are used: the fast decoder is never asked.
    if (on) (cursor as unknown as { nextFast(): boolean }).nextFast = () => { throw new Error('decoded'); };
    expect(cursor.next()).toBe(true);
    expect(cursor.value).toEqual(Buffer.alloc(100, 1));
    expect(cursor.next()).toBe(true);
    expect(cursor.key?.toString()).toBe('k');
    expect(cursor.value).toBeNull();
    expect(cursor.next()).toBe(false);
    const second = new RecordBatch(window, a.length);
    index.apply(second, true, true);
    expect(second.recordIndex).toBeNull(); // a header: not the plain form
    expect(second.toRecords()[0]!.headers).toEqual([{ key: 'h', value: null }]);
    // reset() drops the entries.
    first.reset(window, 0);
    expect(first.recordIndex).toBeNull();
  });

  it('stops at a full table and leaves the rest to the JavaScript paths', () => {
    const batches = Array.from({ length: 4 }, (_, i) => buildBatch({ baseOffset: i * 3, records: [1, 2, 3].map((n) => ({ key: null, value: Buffer.alloc(n, n) })), baseTimestamp: T0 }));
    const window = Buffer.concat(batches);
    const small = new BatchWindowIndex({ maxBatches: 3, maxRecords: 7 });
    expect(small.index(window, 0, window.length)).toBe(on ? 3 : 0);
    let at = 0;
    const attached: boolean[] = [];
    for (const part of batches) {
      const batch = new RecordBatch(window, at);
      small.apply(batch, true, true);
      attached.push(batch.recordIndex !== null);
      expect(batch.toRecords().map((r) => r.value!.length)).toEqual([1, 2, 3]);
      at += part.length;
    }
    expect(attached).toEqual([on, on, false, false]); // 3 + 3 records fit 7, the third batch's do not
    window[batches[0]!.length * 3 + 70] = window[batches[0]!.length * 3 + 70]! ^ 1; // the fourth batch (no entry): its CRC is computed by checkCrc
    expect(() => small.apply(new RecordBatch(window, batches[0]!.length * 3), true, false)).toThrow(/stored CRC/);
  });

  it('indexAsync gives what index gives, and guards its tables while it runs', async () => {
    const window = Buffer.concat(Array.from({ length: 20 }, (_, i) => buildBatch({ baseOffset: i * 10, records: Array.from({ length: 10 }, (_, r) => ({ key: null, value: Buffer.alloc(20, r) })), baseTimestamp: T0 })));
    const sync = new BatchWindowIndex();
    const async = new BatchWindowIndex();
    expect(sync.index(window, 0, window.length)).toBe(on ? 20 : 0);
    const pending = async.indexAsync(window, 0, window.length);
    if (on) expect(() => async.index(window, 0, window.length)).toThrow(/in flight/);
    expect(await pending).toBe(on ? 20 : 0);
    expect(async.covers(window, 0, window.length)).toBe(true);
    const tables = (ix: BatchWindowIndex) => ix as unknown as { batches: Int32Array; records: Int32Array };
    expect(tables(async).batches.subarray(0, 80)).toEqual(tables(sync).batches.subarray(0, 80));
    expect(tables(async).records.subarray(0, 1600)).toEqual(tables(sync).records.subarray(0, 1600));
    // A corrupt batch of the window: the verdict is the same either way (from the entry, or from checkCrc).
    const copy = Buffer.from(window);
    copy[100] = copy[100]! ^ 1;
    await async.indexAsync(copy, 0, copy.length);
    expect(() => async.apply(new RecordBatch(copy, 0), true, true)).toThrow(/stored CRC/);
  });
});
