// (a) Round trip of the generic codec: for every described message and every
// valid version, decode(encode(value)) equals value, the decoder consumes
// exactly the encoded bytes, and re-encoding the decoded value gives the same
// bytes. Values come from the plan itself (support/arbitraries.ts). The
// generated functions (the default) and the reference interpreter must give
// the same bytes and the same objects.

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ALL_DESCRIPTIONS, MessageCodec, ProtocolReader, ProtocolWriter } from '../src/index.js';
import { messageArbitrary } from './support/arbitraries.js';
import { concatParts } from './support/bytes.js';

const NUM_RUNS = 50;

function encode(codec: MessageCodec, version: number, value: Record<string, unknown>): Buffer {
  const writer = new ProtocolWriter(16);
  codec.write(writer, version, value);
  return concatParts(writer.finish().parts);
}

describe('generic codec round trip', () => {
  for (const description of ALL_DESCRIPTIONS) {
    const codec = new MessageCodec(description);
    const reference = new MessageCodec(description, { mode: 'interpreted' });
    for (let version = codec.versions.min; version <= codec.versions.max; version++) {
      it(`${description.name} v${version}`, () => {
        fc.assert(fc.property(messageArbitrary(codec.plan(version)), (value) => {
          const bytes = encode(codec, version, value);
          expect(encode(reference, version, value)).toEqual(bytes);
          const reader = new ProtocolReader(bytes);
          const decoded = codec.decode(reader, version);
          reader.expectEnd(description.name);
          expect(decoded).toEqual(value);
          const referenceReader = new ProtocolReader(bytes);
          expect(reference.decode(referenceReader, version)).toEqual(decoded);
          referenceReader.expectEnd(description.name);
          expect(encode(codec, version, decoded)).toEqual(bytes);
        }), { numRuns: NUM_RUNS });
      });
    }
  }
});
