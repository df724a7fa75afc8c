// Batch parser and record iteration on hostile bytes: a valid batch (random
// records, any codec) with random byte edits and truncation must either
// validate and iterate, or throw a typed SeglogError — never a RangeError,
// TypeError or any other exception. Half the cases recompute the CRC after
// editing, so the edits reach the header rules, codecs and varint decoding.
import fc from 'fast-check';
import { isSeglogError } from '@seglog/common';
import { buildBatch, crc32c, validateBatch, RecordBatch, RecordCursor, Codec, type CodecId } from '@seglog/records';
import type { FuzzTarget } from '../lib/target.js';

const recordArb = fc.record({
  key: fc.option(fc.uint8Array({ maxLength: 24 }), { nil: null }),
  value: fc.option(fc.uint8Array({ maxLength: 64 }), { nil: null }),
  timestampDelta: fc.integer({ min: -1000, max: 1000 }),
});
const codecArb = fc.constantFrom<CodecId>(Codec.none, Codec.gzip, Codec.snappy, Codec.lz4, Codec.zstd);
const editArb = fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { maxLength: 6 });

function parse(buf: Buffer): void {
  const summary = validateBatch(buf, { maxMessageBytes: 1 << 20, maxDecompressedBytes: 1 << 16 });
  const cursor = new RecordCursor();
  cursor.open(summary.batch, { maxDecompressedBytes: 1 << 16 });
  while (cursor.next()) void cursor.value;
  cursor.close();
  // A follower-style view must agree on the frame.
  void new RecordBatch(buf).lastOffset;
}

export const target: FuzzTarget = {
  description: 'record batch validation and iteration on mutated and truncated batches',
  property: () =>
    fc.property(fc.array(recordArb, { minLength: 1, maxLength: 12 }), codecArb, editArb, fc.option(fc.nat(), { nil: null }), fc.boolean(), (records, compression, edits, cut, fixCrc) => {
      const valid = buildBatch({ records, compression, baseTimestamp: 1_700_000_000_000 });
      const mutated = Buffer.from(valid);
      for (const e of edits) mutated[e.at % mutated.length] = e.value;
      // Half the cases re-sign the edit so it gets past the CRC into the decoders.
      if (fixCrc) mutated.writeUInt32BE(crc32c(mutated.subarray(21)), 17);
      const input = cut === null ? mutated : mutated.subarray(0, cut % (mutated.length + 1));
      try {
        parse(input);
      } catch (error) {
        if (!isSeglogError(error)) throw error;
      }
    }),
};
