// Request decoding on hostile bytes: a valid request frame (a random body of
// a random described API and version, encoded by @seglog/protocol) with
// random byte edits and a truncation must either decode or throw a typed
// SeglogError, never a RangeError, TypeError or assertion. A frame that
// decodes must be stable: re-encoding the decoded request and decoding it
// again gives the same header and body (decode ∘ encode ∘ decode = decode).
import fc from 'fast-check';
import { isSeglogError } from '@seglog/common';
import { API_DESCRIPTIONS, ProtocolWriter, apiCodecs, decodeRequest, encodeRequest } from '@seglog/protocol';
import { messageArbitrary } from '../../packages/protocol/test/support/arbitraries.js';
import type { FuzzTarget } from '../lib/target.js';

const frameArb = fc.constantFrom(...API_DESCRIPTIONS).chain((api) => {
  const codec = apiCodecs(api.apiKey)?.request;
  if (codec === undefined) throw new Error('undescribed API');
  return fc.integer({ min: codec.versions.min, max: codec.versions.max }).chain((version) => fc.record({
    api: fc.constant(api.name), version: fc.constant(version), body: messageArbitrary(codec.plan(version)),
    correlationId: fc.integer(), clientId: fc.option(fc.string({ maxLength: 8 }), { nil: null }),
  }));
});
const editArb = fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { maxLength: 4 });

function frameBytes(parts: readonly unknown[]): Buffer {
  return Buffer.concat(parts as Buffer[]).subarray(4);
}

export const target: FuzzTarget = {
  description: 'request frames (every described API and version) mutated and truncated',
  property: () =>
    fc.property(frameArb, editArb, fc.option(fc.nat(), { nil: null }), (input, edits, cut) => {
      const target = { api: input.api, apiVersion: input.version, correlationId: input.correlationId, clientId: input.clientId };
      const frame = Buffer.from(frameBytes(encodeRequest(new ProtocolWriter(), target, input.body as never).parts));
      for (const edit of edits) if (frame.length > 0) frame[edit.at % frame.length] = edit.value;
      const bytes = cut === null ? frame : frame.subarray(0, cut % (frame.length + 1));
      let decoded;
      try {
        decoded = decodeRequest(bytes);
      } catch (error) {
        if (isSeglogError(error)) return true;
        throw error;
      }
      if (decoded.api === 'API_VERSIONS_UNSUPPORTED') return true;
      const again = decodeRequest(frameBytes(encodeRequest(new ProtocolWriter(), {
        api: decoded.api, apiVersion: decoded.header.apiVersion, correlationId: decoded.header.correlationId, clientId: decoded.header.clientId,
      }, decoded.body as never).parts));
      if (JSON.stringify(again) !== JSON.stringify(decoded)) throw new Error('decode ∘ encode ∘ decode differs from decode');
      return true;
    }),
};
