// Frame level: encodeRequest → decodeRequest and encodeResponse →
// decodeResponse give back the header and body for every API and supported
// version, and the dispatch errors (UNKNOWN_API, UNSUPPORTED_VERSION, the
// ApiVersions handshake fallback). Until the broker switched over, this file
// also required byte-equality with the broker's hand-written frames (green on
// 8b8945c, the last commit before they were deleted); vectors.test.ts and the broker's
// own vectors.test.ts pin the bytes now.

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  API_DESCRIPTIONS, ProtocolErrorCode, ProtocolWriter, apiCodecs, decodeRequest, decodeResponse, encodeRequest, encodeResponse,
  requestHeaderVersion,
} from '../src/index.js';
import { messageArbitrary } from './support/arbitraries.js';
import { concatParts, outcome } from './support/bytes.js';

const header = fc.record({ correlationId: fc.integer(), clientId: fc.option(fc.string({ maxLength: 8 }), { nil: null }) });

describe('frames round-trip', () => {
  for (const api of API_DESCRIPTIONS) {
    const codecs = apiCodecs(api.apiKey);
    if (codecs === undefined) throw new Error('undescribed API');
    for (let version = codecs.request.versions.min; version <= codecs.request.versions.max; version++) {
      it(`${api.name} v${version}`, () => {
        fc.assert(fc.property(
          messageArbitrary(codecs.request.plan(version)), messageArbitrary(codecs.response.plan(version)), header,
          (request, response, { correlationId, clientId }) => {
            const target = { api: api.name, apiVersion: version, correlationId, clientId };
            const requestFrame = concatParts(encodeRequest(new ProtocolWriter(), target, request as never).parts);
            expect(requestFrame.readInt32BE(0)).toBe(requestFrame.length - 4);
            const ours = decodeRequest(requestFrame.subarray(4));
            expect(ours.api).toBe(api.name);
            expect(ours.header).toEqual({
              apiKey: api.apiKey, apiVersion: version, correlationId, clientId, headerVersion: requestHeaderVersion(api.apiKey, version),
            });
            expect(ours.body).toEqual(request);

            const responseFrame = concatParts(encodeResponse(new ProtocolWriter(), target, response as never).parts);
            expect(responseFrame.readInt32BE(0)).toBe(responseFrame.length - 4);
            const decoded = decodeResponse(responseFrame.subarray(4), api.name, version);
            expect(decoded).toEqual({ correlationId, body: response });
          },
        ), { numRuns: 20 });
      });
    }
  }

  it('dispatch errors and the ApiVersions fallback', () => {
    const frame = (apiKey: number, apiVersion: number): Buffer => {
      const writer = new ProtocolWriter();
      writer.int16(apiKey); writer.int16(apiVersion); writer.int32(7); writer.nullableString('c', false);
      writer.raw(Buffer.alloc(8));
      return concatParts(writer.finish().parts);
    };
    const cases: readonly [number, number, string][] = [
      [99, 0, ProtocolErrorCode.UNKNOWN_API], [0, 2, ProtocolErrorCode.UNSUPPORTED_VERSION], [0, 10, ProtocolErrorCode.UNSUPPORTED_VERSION],
      [1, 13, ProtocolErrorCode.UNSUPPORTED_VERSION], [2, 8, ProtocolErrorCode.UNSUPPORTED_VERSION],
    ];
    for (const [apiKey, apiVersion, code] of cases) {
      expect(outcome(() => decodeRequest(frame(apiKey, apiVersion)))).toBe(code);
    }
    const ours = decodeRequest(frame(18, 4));
    expect(ours).toEqual({
      api: 'API_VERSIONS_UNSUPPORTED', body: null, header: { apiKey: 18, apiVersion: 4, correlationId: 7, clientId: 'c', headerVersion: 2 },
    });
    for (let length = 0; length < 10; length++) {
      expect(outcome(() => decodeRequest(frame(3, 1).subarray(0, length)))).toBe(ProtocolErrorCode.MALFORMED);
    }
  });
});
