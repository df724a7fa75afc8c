// RecordCursor alone on hostile record payloads: a valid batch (any codec)
// whose record area — or, for compressed batches, whose compressed stream —
// is edited and truncated, WITHOUT validating the batch first (no CRC, no
// header rules: the cursor is what read paths and tools run on batches that
// were checked once, long ago, or never). open() + next() + key/value/
// headers() must iterate, or throw a typed SeglogError; never RangeError,
// TypeError or an assertion, never more iterations than recordsCount, and
// never a key/value view outside the payload.
import fc from 'fast-check';
import { isSeglogError } from '@seglog/common';
import { buildBatch, RecordBatch, RecordCursor, Codec, type CodecId } from '@seglog/records';
import type { FuzzTarget } from '../lib/target.js';

const RECORDS_OFFSET = 61;
const recordArb = fc.record({
  key: fc.option(fc.uint8Array({ maxLength: 24 }), { nil: null }),
  value: fc.option(fc.uint8Array({ maxLength: 64 }), { nil: null }),
  headers: fc.array(fc.record({ key: fc.string({ maxLength: 6 }), value: fc.option(fc.uint8Array({ maxLength: 8 }), { nil: null }) }), { maxLength: 3 }),
});
const codecArb = fc.constantFrom<CodecId>(Codec.none, Codec.gzip, Codec.snappy, Codec.lz4, Codec.zstd);
const editArb = fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 6 });

export const target: FuzzTarget = {
  description: 'RecordCursor iteration of unvalidated batches with edited record bytes',
  property: () =>
    fc.property(fc.array(recordArb, { minLength: 1, maxLength: 10 }), codecArb, editArb, fc.option(fc.nat(), { nil: null }), fc.integer({ min: 0, max: 1 << 16 }),
      (records, compression, edits, cut, cap) => {
        const bytes = Buffer.from(buildBatch({ records, compression, baseTimestamp: 1_700_000_000_000 }));
        const area = bytes.length - RECORDS_OFFSET;
        if (area > 0) for (const e of edits) bytes[RECORDS_OFFSET + (e.at % area)] = e.value;
        // A cut keeps the header (the cursor trusts the frame) but shortens the declared length.
        if (cut !== null) bytes.writeInt32BE(Math.max(49, (cut % (bytes.length - 12 + 1))), 8);
        const frameEnd = Math.min(bytes.length, 12 + bytes.readInt32BE(8));
        const batch = new RecordBatch(bytes.subarray(0, frameEnd));
        const cursor = new RecordCursor();
        try {
          cursor.open(batch, { maxDecompressedBytes: cap });
          let seen = 0;
          while (cursor.next()) {
            seen++;
            if (seen > Math.max(0, batch.recordsCount)) throw new Error(`iterated ${seen} records, recordsCount ${batch.recordsCount}`);
            void cursor.key;
            void cursor.value;
            cursor.headers();
          }
        } catch (error) {
          if (!isSeglogError(error)) throw error;
        } finally {
          cursor.close();
        }
      }),
};
