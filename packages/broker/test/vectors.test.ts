// The broker's own ApiVersions answers against hand-built bytes. The request
// and response vectors of the codec itself live in
// packages/protocol/test/vectors.test.ts (the broker speaks through it).

import { describe, expect, it } from 'vitest';
import { ProtocolWriter, decodeResponse } from '@seglog/protocol';
import { SUPPORTED_APIS, apiVersionsFallback, apiVersionsResponse } from '../src/index.js';
import { concatParts } from './arbitraries.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe("the broker's ApiVersions answers", () => {
  it('ApiVersions fallback: UNSUPPORTED_VERSION, header v0, v0 body, all our ranges', () => {
    const frame = concatParts(apiVersionsFallback(new ProtocolWriter(), 77).parts);
    const entries = SUPPORTED_APIS.map((a) => [a.apiKey, a.minVersion, a.maxVersion]
      .map((n) => n.toString(16).padStart(4, '0')).join('')).join('');
    const body = `0000004d 0023 ${SUPPORTED_APIS.length.toString(16).padStart(8, '0')} ${entries}`;
    expect(frame.toString('hex')).toBe(hex(`${(hex(body).length).toString(16).padStart(8, '0')} ${body}`).toString('hex'));
    expect(decodeResponse(frame.subarray(4), 'API_VERSIONS', 0).body.errorCode).toBe(35);
  });

  it('advertises exactly SUPPORTED_APIS', () => {
    expect(apiVersionsResponse().apiKeys).toEqual(SUPPORTED_APIS.map((a) => ({ apiKey: a.apiKey, minVersion: a.minVersion, maxVersion: a.maxVersion })));
  });
});
