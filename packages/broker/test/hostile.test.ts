// Hostile input: every truncation and random byte edits of valid requests of
// every API and version must end in a typed SEGLOG_ERR_PROTOCOL_* error (or a
// successful decode, for edits that happen to stay valid), never a RangeError,
// TypeError or assertion, and never a decoded value that points outside the frame.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSeglogError } from '@seglog/common';
import { ProtocolWriter, decodeRequest, encodeRequest, type RequestBodies } from '@seglog/protocol';
import { SUPPORTED_APIS } from '../src/index.js';
import { MESSAGE_CASES, concatParts } from './arbitraries.js';

type Api = keyof RequestBodies;

function validFrame<N extends Api>(api: N, version: number, body: RequestBodies[N]): Buffer {
  const message = encodeRequest(new ProtocolWriter(), { api, apiVersion: version, correlationId: 42, clientId: 'hostile' }, body);
  return concatParts(message.parts).subarray(4);
}

/** Decodes; returns 'ok' or the typed error code. Anything else fails the test. */
function outcome(frame: Buffer): string {
  try {
    decodeRequest(frame);
    return 'ok';
  } catch (error) {
    if (isSeglogError(error) && error.code.startsWith('SEGLOG_ERR_PROTOCOL_')) return error.code;
    throw error;
  }
}

function sample<N extends Api>(api: N, version: number, seed: number): RequestBodies[N] {
  const c = MESSAGE_CASES[api];
  const [raw] = fc.sample(c.request, { numRuns: 1, seed });
  if (raw === undefined) throw new Error('no sample');
  return c.normalizeRequest(version, raw);
}

describe('hostile requests', () => {
  for (const entry of SUPPORTED_APIS) {
    for (let version = entry.minVersion; version <= entry.maxVersion; version++) {
      it(`${entry.name} v${version}: every truncation is MALFORMED`, () => {
        for (let seed = 1; seed <= 3; seed++) {
          const frame = validFrame(entry.name, version, sample(entry.name, version, seed * 7919 + version));
          expect(outcome(frame)).toBe('ok');
          for (let n = 0; n < frame.length; n++) {
            // A copy of exactly n bytes, so a read past n could not find stray bytes behind it.
            expect(outcome(Buffer.from(frame.subarray(0, n)))).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
          }
        }
      });

      it(`${entry.name} v${version}: random byte edits give typed errors only`, () => {
        const frame = validFrame(entry.name, version, sample(entry.name, version, version + 1));
        const edit = fc.array(fc.tuple(fc.nat({ max: frame.length - 1 }), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 });
        fc.assert(fc.property(edit, (edits) => {
          const copy = Buffer.from(frame);
          for (const [position, value] of edits) copy[position] = value;
          outcome(copy);
        }), { numRuns: 150 });
      });
    }
  }

  it('appended bytes are rejected (a request must be consumed exactly)', () => {
    const frame = validFrame('METADATA', 12, { topics: null, allowAutoTopicCreation: true, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });
    expect(outcome(Buffer.concat([frame, Buffer.from([0])]))).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
  });

  it('unknown APIs and unsupported versions are typed; unsupported ApiVersions is answered', () => {
    const header = (key: number, version: number): Buffer => {
      const b = Buffer.alloc(10);
      b.writeInt16BE(key, 0); b.writeInt16BE(version, 2); b.writeInt32BE(5, 4); b.writeInt16BE(-1, 8);
      return b;
    };
    expect(outcome(header(999, 0))).toBe('SEGLOG_ERR_PROTOCOL_UNKNOWN_API');
    expect(outcome(header(0, 2))).toBe('SEGLOG_ERR_PROTOCOL_UNSUPPORTED_VERSION'); // Produce v2: legacy message sets
    expect(outcome(Buffer.concat([header(1, 13), Buffer.from('00', 'hex')]))).toBe('SEGLOG_ERR_PROTOCOL_UNSUPPORTED_VERSION'); // Fetch v13: topic ids
    const v4 = Buffer.concat([header(18, 4), Buffer.from('00', 'hex'), Buffer.from('whatever body')]);
    const decoded = decodeRequest(v4);
    expect(decoded.api).toBe('API_VERSIONS_UNSUPPORTED');
    expect(decoded.header).toMatchObject({ apiVersion: 4, correlationId: 5, clientId: null, headerVersion: 2 });
  });

  it('a huge array count in a tiny request fails fast with MALFORMED', () => {
    // DeleteRecords v0: topics count 0x7fffffff, then 4 bytes.
    const frame = Buffer.concat([Buffer.from('0015000000000001ffff', 'hex'), Buffer.from('7fffffff00000000', 'hex')]);
    // The verdict is the error, not the time: a decoder that allocated or
    // looped per declared element would take 2³¹ steps and hit the test's
    // hang guard instead of answering MALFORMED.
    const arrayBuffersBefore = process.memoryUsage().arrayBuffers;
    expect(outcome(frame)).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
    expect(process.memoryUsage().arrayBuffers - arrayBuffersBefore).toBeLessThan(16 * 1024 * 1024);
  });
});
