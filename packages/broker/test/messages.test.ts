// Round trips of every request and response type at every supported version:
// a random body, normalised to the version, encoded and decoded must come back
// equal. Requests go through the full path the broker uses (frame → header →
// dispatch → body); responses through the client-side decoder.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ProtocolWriter, decodeRequest, decodeResponse, encodeRequest, encodeResponse, type RequestBodies,
} from '@seglog/protocol';
import { SUPPORTED_APIS } from '../src/index.js';
import { MESSAGE_CASES, concatParts, int32, nstr } from './arbitraries.js';

type Api = keyof RequestBodies;
const RUNS = 40;

function versionsOf(api: Api): number[] {
  const entry = SUPPORTED_APIS.find((a) => a.name === api);
  if (entry === undefined) throw new Error(`no SUPPORTED_APIS entry for ${api}`);
  const out: number[] = [];
  for (let v = entry.minVersion; v <= entry.maxVersion; v++) out.push(v);
  return out;
}

function roundTripRequest<N extends Api>(api: N, version: number): void {
  const c = MESSAGE_CASES[api];
  fc.assert(fc.property(c.request, int32, nstr, (raw, correlationId, clientId) => {
    const body = c.normalizeRequest(version, raw);
    const message = encodeRequest(new ProtocolWriter(64), { api, apiVersion: version, correlationId, clientId }, body);
    const frame = concatParts(message.parts);
    expect(frame.length).toBe(message.totalBytes);
    expect(frame.readInt32BE(0)).toBe(frame.length - 4);
    const decoded = decodeRequest(frame.subarray(4));
    expect(decoded.api).toBe(api);
    expect(decoded.header).toMatchObject({ apiVersion: version, correlationId, clientId });
    expect(decoded.body).toEqual(body);
  }), { numRuns: RUNS });
}

function roundTripResponse<N extends Api>(api: N, version: number): void {
  const c = MESSAGE_CASES[api];
  fc.assert(fc.property(c.response, int32, (raw, correlationId) => {
    const body = c.normalizeResponse(version, raw);
    const message = encodeResponse(new ProtocolWriter(64), { api, apiVersion: version, correlationId }, body);
    const frame = concatParts(message.parts);
    expect(frame.readInt32BE(0)).toBe(frame.length - 4);
    const decoded = decodeResponse(frame.subarray(4), api, version);
    expect(decoded.correlationId).toBe(correlationId);
    expect(decoded.body).toEqual(body);
  }), { numRuns: RUNS });
}

describe('every supported version round-trips', () => {
  for (const entry of SUPPORTED_APIS) {
    for (const version of versionsOf(entry.name)) {
      it(`${entry.name} v${version} request`, () => roundTripRequest(entry.name, version));
      it(`${entry.name} v${version} response`, () => roundTripResponse(entry.name, version));
    }
  }
});

describe('normalisation is not vacuous', () => {
  it('a field a version lacks does not survive the round trip', () => {
    // Metadata v0 has no controller id: an un-normalised body must differ after decoding.
    const body = { throttleTimeMs: 0, brokers: [], clusterId: null, controllerId: 7, topics: [], clusterAuthorizedOperations: -2147483648 };
    const message = encodeResponse(new ProtocolWriter(), { api: 'METADATA', apiVersion: 0, correlationId: 1 }, body);
    const decoded = decodeResponse(concatParts(message.parts).subarray(4), 'METADATA', 0);
    expect(decoded.body.controllerId).toBe(-1);
    expect(decoded.body).not.toEqual(body);
  });
});

describe('record batches stay zero-copy', () => {
  it('produce request records are slices of the frame', () => {
    const records = Buffer.from('0123456789abcdef', 'utf8');
    for (const version of versionsOf('PRODUCE')) {
      const message = encodeRequest(new ProtocolWriter(), { api: 'PRODUCE', apiVersion: version, correlationId: 1, clientId: 'c' }, {
        transactionalId: null, acks: -1, timeoutMs: 1000, topicData: [{ name: 't', partitionData: [{ index: 0, records }] }],
      });
      // The writer keeps the batch as its own part (no copy on the way out)...
      expect(message.parts.some((part) => part === records)).toBe(true);
      const frame = concatParts(message.parts);
      const decoded = decodeRequest(frame.subarray(4));
      if (decoded.api !== 'PRODUCE') throw new Error('expected PRODUCE');
      const got = decoded.body.topicData[0]?.partitionData[0]?.records;
      // ...and the reader returns a view into the frame (no copy on the way in).
      expect(got?.equals(records)).toBe(true);
      frame.fill(0x7a); // a view of the frame sees the write; a copy would not
      expect(got?.toString()).toBe('z'.repeat(records.length));
    }
  });

  it('a fetch response carries a RecordsRef as its own part with the right length prefix', () => {
    const ref = { totalBytes: 1000 };
    const message = encodeResponse(new ProtocolWriter(), { api: 'FETCH', apiVersion: 12, correlationId: 9 }, {
      throttleTimeMs: 0, errorCode: 0, sessionId: 0,
      responses: [{ topic: 't', partitions: [{
        partitionIndex: 0, errorCode: 0, highWatermark: 10, lastStableOffset: 10, logStartOffset: 0,
        abortedTransactions: null, preferredReadReplica: -1, records: ref,
      }] }],
    });
    expect(message.parts.length).toBe(3);
    expect(message.parts[1]).toBe(ref);
    const head = message.parts[0] as Buffer;
    expect(head.readInt32BE(0)).toBe(message.totalBytes - 4);
    // compact length prefix of 1000 bytes = uvarint(1001) = e9 07, right before the ref.
    expect(head.subarray(head.length - 2).toString('hex')).toBe('e907');
  });
});
