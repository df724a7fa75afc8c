// The streaming compressors behind BoundedBatchBuilder: their worst-case
// bound holds on incompressible and compressible input, flushed in segments
// of every size, and what they write decodes with our own decompress.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Codec, decompress, type CodecId } from '../src/index.js';
import { createStreamCompressor } from '../src/internal/streaming/create-stream-compressor.js';
import { prng, randomValue, textValue } from './bounded-helpers.js';

const CODECS: readonly CodecId[] = [Codec.none, Codec.gzip, Codec.snappy, Codec.lz4, Codec.zstd];

describe('stream compressors', () => {
  it('property: every flush and the finish stay within the bound, and the stream decodes', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CODECS),
        fc.array(fc.record({ bytes: fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 200_000 })), text: fc.boolean(), seed: fc.integer() }), { minLength: 0, maxLength: 8 }),
        fc.record({ bytes: fc.integer({ min: 0, max: 70_000 }), text: fc.boolean(), seed: fc.integer() }),
        (codec, segments, last) => {
          const stream = createStreamCompressor(codec, undefined);
          const inputs: Buffer[] = [];
          const make = (spec: { bytes: number; text: boolean; seed: number }): Buffer =>
            spec.text ? textValue(prng(spec.seed), spec.bytes) : randomValue(prng(spec.seed), spec.bytes);
          for (const spec of segments) {
            const input = make(spec);
            const bound = stream.bound(input.length);
            stream.flush(input);
            // After a flush the rest of the stream (finish with nothing) must still fit.
            expect(stream.bound(0)).toBeLessThanOrEqual(bound);
            inputs.push(input);
          }
          const input = make(last);
          const bound = stream.bound(input.length);
          const chunks = stream.finish(input);
          inputs.push(input);
          const payload = Buffer.concat(chunks);
          expect(payload.length).toBeLessThanOrEqual(bound);
          const plain = Buffer.concat(inputs);
          expect(decompress(codec, payload, plain.length).equals(plain)).toBe(true);
        },
      ),
      { numRuns: 300, seed: 20260102 },
    );
  });

  it('gzip segments keep matching across flushes (the preset dictionary works)', () => {
    const text = textValue(prng(1), 64 * 1024);
    const whole = createStreamCompressor(Codec.gzip, undefined);
    const wholeBytes = Buffer.concat(whole.finish(text)).length;
    const split = createStreamCompressor(Codec.gzip, undefined);
    for (let at = 0; at < text.length; at += 4096) split.flush(text.subarray(at, at + 4096));
    const splitBytes = Buffer.concat(split.finish(Buffer.alloc(0))).length;
    // 16 segments cost a few Huffman tables, not the matches: within 10 %.
    expect(splitBytes).toBeLessThan(wholeBytes * 1.1);
  });
});
