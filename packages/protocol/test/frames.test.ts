// Frame level, against the broker (test-only import): decodeRequest,
// encodeResponse, encodeRequest and decodeResponse of the generic layer give
// the broker's frames and objects for every API and supported version, and
// the same dispatch errors (UNKNOWN_API, UNSUPPORTED_VERSION, the ApiVersions
// handshake fallback).

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  API_DESCRIPTIONS, ProtocolErrorCode, ProtocolWriter, apiCodecs, decodeRequest, decodeResponse, encodeRequest, encodeResponse,
} from '../src/index.js';
import * as broker from '../../broker/src/protocol/index.js';
import { messageArbitrary } from './support/arbitraries.js';
import { concatParts, outcome } from './support/bytes.js';

const header = fc.record({ correlationId: fc.integer(), clientId: fc.option(fc.string({ maxLength: 8 }), { nil: null }) });

/** Metadata v0: the broker's decoder maps the empty topic list to null (see differential.test.ts). */
function brokerShape(api: string, version: number, body: Record<string, unknown>): Record<string, unknown> {
  if (api === 'METADATA' && version === 0 && (body['topics'] as unknown[]).length === 0) return { ...body, topics: null };
  return body;
}

describe('frames = the broker\'s frames', () => {
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
            expect(requestFrame).toEqual(concatParts(broker.encodeRequest(new broker.ProtocolWriter(), target, request as never).parts));
            const ours = decodeRequest(requestFrame.subarray(4));
            const theirs = broker.decodeRequest(requestFrame.subarray(4));
            expect(theirs.header).toEqual(ours.header);
            expect(theirs.body).toEqual(brokerShape(api.name, version, ours.body as Record<string, unknown>));
            expect(ours.body).toEqual(request);

            const responseFrame = concatParts(encodeResponse(new ProtocolWriter(), target, response as never).parts);
            expect(responseFrame).toEqual(concatParts(broker.encodeResponse(new broker.ProtocolWriter(), target, response as never).parts));
            const decoded = decodeResponse(responseFrame.subarray(4), api.name, version);
            expect(decoded).toEqual(broker.decodeResponse(responseFrame.subarray(4), api.name, version));
            expect(decoded).toEqual({ correlationId, body: response });
          },
        ), { numRuns: 20 });
      });
    }
  }

  it('dispatch errors and the ApiVersions fallback match the broker', () => {
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
      expect(outcome(() => broker.decodeRequest(frame(apiKey, apiVersion)))).toBe(code);
    }
    const ours = decodeRequest(frame(18, 4));
    expect(ours).toEqual(broker.decodeRequest(frame(18, 4)));
    expect(ours.api).toBe('API_VERSIONS_UNSUPPORTED');
    for (let length = 0; length < 10; length++) {
      expect(outcome(() => decodeRequest(frame(3, 1).subarray(0, length)))).toBe(ProtocolErrorCode.MALFORMED);
    }
  });
});
