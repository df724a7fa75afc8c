// (d) Hostile input: random bytes, every truncation and single-byte
// corruptions of valid messages never make the generic decoder throw
// anything but a typed SeglogError (SEGLOG_ERR_PROTOCOL_*), and a huge array
// count is refused before anything is allocated.

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ALL_DESCRIPTIONS, MessageCodec, PRODUCE_REQUEST, ProtocolErrorCode, ProtocolReader, ProtocolWriter } from '../src/index.js';
import { messageArbitrary } from './support/arbitraries.js';
import { concatParts, outcome } from './support/bytes.js';

const TYPED = new Set<string>([ProtocolErrorCode.MALFORMED, ProtocolErrorCode.UNSAFE_INTEGER]);

function decodeAll(codec: MessageCodec, version: number, bytes: Buffer): string {
  return outcome(() => {
    const reader = new ProtocolReader(bytes);
    codec.decode(reader, version);
    reader.expectEnd(codec.description.name);
  });
}

describe('hostile input', () => {
  for (const [description, mode] of ALL_DESCRIPTIONS.flatMap((d) => [[d, 'generated'], [d, 'interpreted']] as const)) {
    const codec = new MessageCodec(description, { mode });
    for (let version = codec.versions.min; version <= codec.versions.max; version++) {
      it(`${description.name} v${version} (${mode}): random bytes, truncations, corruptions`, () => {
        fc.assert(fc.property(fc.uint8Array({ maxLength: 96 }), (bytes) => {
          const result = decodeAll(codec, version, Buffer.from(bytes));
          expect(result === 'ok' || TYPED.has(result), result).toBe(true);
        }), { numRuns: 50 });
        fc.assert(fc.property(messageArbitrary(codec.plan(version)), fc.nat(), fc.nat({ max: 255 }), (value, at, byte) => {
          const writer = new ProtocolWriter(16);
          codec.write(writer, version, value);
          const bytes = concatParts(writer.finish().parts);
          for (let length = 0; length < bytes.length; length++) {
            const result = decodeAll(codec, version, bytes.subarray(0, length));
            expect(TYPED.has(result), `truncated to ${length}: ${result}`).toBe(true);
          }
          if (bytes.length === 0) return;
          const corrupt = Buffer.from(bytes);
          corrupt[at % corrupt.length] = byte;
          const result = decodeAll(codec, version, corrupt);
          expect(result === 'ok' || TYPED.has(result), result).toBe(true);
        }), { numRuns: 20 });
      });
    }
  }

  it('refuses an array count larger than the frame before allocating', () => {
    const codec = new MessageCodec(PRODUCE_REQUEST);
    for (const version of [3, 9]) {
      const writer = new ProtocolWriter();
      writer.nullableString(null, version >= 9);
      writer.int16(-1);
      writer.int32(30000);
      if (version >= 9) writer.uvarint(2 ** 31);
      else writer.int32(2 ** 31 - 1);
      writer.raw(Buffer.alloc(64));
      const bytes = concatParts(writer.finish().parts);
      // The count itself is refused (not the first element that runs out of bytes).
      expect(() => codec.decode(new ProtocolReader(bytes), version)).toThrow(/array count exceeds the frame/);
      expect(decodeAll(codec, version, bytes)).toBe(ProtocolErrorCode.MALFORMED);
    }
  });
});
