// Every codec's decompressor on hostile bytes (reliability.md §3.9, §4.3
// "decompression bombs"): a valid stream of random (often very compressible)
// bytes, then byte edits, truncation, random garbage, or a cap below the
// real output. decompress(codec, input, cap) must return exactly the original
// bytes (unedited stream, cap large enough), or some bytes no longer than the
// cap, or throw a typed SeglogError — never RangeError/TypeError/assertion.
// The per-codec targets (decompress-gzip, -snappy, -lz4, -zstd) import
// makeDecompressTarget; this one draws the codec per case.
import fc from 'fast-check';
import { isSeglogError } from '@seglog/common';
import { compress, decompress, Codec, type CodecId } from '@seglog/records';
import type { FuzzTarget } from '../lib/target.js';

const payloadArb = fc.oneof(
  fc.uint8Array({ maxLength: 2048 }),
  // Long runs: a small input that expands a lot (bomb-shaped).
  fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: 1 << 16 })).map(([b, n]) => new Uint8Array(n).fill(b)),
);
const editArb = fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { maxLength: 8 });

function check(codec: CodecId, payload: Uint8Array, edits: readonly { at: number; value: number }[], cut: number | null, cap: number, garbage: Uint8Array | null): void {
  let input: Buffer;
  if (garbage !== null) input = Buffer.from(garbage);
  else {
    input = Buffer.from(compress(codec, payload));
    for (const e of edits) input[e.at % Math.max(1, input.length)] = e.value;
    if (cut !== null) input = input.subarray(0, cut % (input.length + 1));
  }
  const pristine = garbage === null && edits.length === 0 && cut === null;
  let output: Buffer;
  try {
    output = decompress(codec, input, cap);
  } catch (error) {
    if (!isSeglogError(error)) throw error;
    // A pristine stream fails only for the cap.
    if (pristine && payload.length <= cap) throw new Error(`pristine ${payload.length}-byte stream under cap ${cap} rejected: ${(error as Error).message}`);
    return;
  }
  if (output.length > cap) throw new Error(`output ${output.length} bytes exceeds the cap ${cap}`);
  if (pristine && !output.equals(Buffer.from(payload))) throw new Error('pristine stream decompressed to different bytes');
}

export function makeDecompressTarget(codecs: readonly CodecId[], name: string): FuzzTarget {
  return {
    description: `decompress(${name}) on mutated, truncated and random streams, with caps below and above the output`,
    property: () =>
      fc.property(
        fc.constantFrom(...codecs), payloadArb, editArb, fc.option(fc.nat(), { nil: null }),
        fc.oneof(fc.integer({ min: 0, max: 1 << 17 }), fc.constant(1 << 20)),
        fc.option(fc.uint8Array({ maxLength: 512 }), { nil: null, freq: 4 }),
        (codec, payload, edits, cut, cap, garbage) => check(codec, payload, edits, cut, cap, garbage),
      ),
  };
}

export const target: FuzzTarget = makeDecompressTarget([Codec.gzip, Codec.snappy, Codec.lz4, Codec.zstd], 'any codec');
