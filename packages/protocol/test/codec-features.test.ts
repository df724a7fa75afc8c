// Codec features the eight broker APIs do not exercise (uint16, float64,
// bytes, a single and a nullable struct, primitive arrays of strings and
// int64, tagged primitives, a tagged struct, a tagged field inside an array
// element, field flexibleVersions "none"), on a synthetic description; and
// the documented decisions: unknown tags are skipped and dropped, tagged
// fields are written only when not default, in increasing tag order.

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  DELETE_RECORDS_REQUEST, FETCH_REQUEST, FETCH_RESPONSE, LIST_OFFSETS_REQUEST, MessageCodec, ProtocolErrorCode, ProtocolReader, ProtocolWriter, type MessageDescription,
} from '../src/index.js';
import { messageArbitrary } from './support/arbitraries.js';
import { concatParts, outcome } from './support/bytes.js';

// The cases pick one field out of differently shaped decoded requests.
type Any = any;

const SYNTHETIC: MessageDescription = {
  name: 'SyntheticRequest', kind: 'request', apiKey: 9999, validVersions: '0-3', flexibleVersions: '2+',
  fields: [
    { name: 'small', type: 'int8', versions: '0+' },
    { name: 'port', type: 'uint16', versions: '1+', default: 7 },
    { name: 'ratio', type: 'float64', versions: '0+' },
    { name: 'blob', type: 'bytes', versions: '0+', nullableVersions: '1+' },
    { name: 'id', type: 'uuid', versions: '0+' },
    { name: 'legacyName', type: 'string', versions: '0+', nullableVersions: '0+', flexibleVersions: 'none' },
    { name: 'point', type: 'Point', versions: '0+', nullableVersions: '3+', fields: [
      { name: 'x', type: 'int32', versions: '0+' },
      { name: 'y', type: 'int64', versions: '1+', default: -1 },
    ] },
    { name: 'names', type: '[]string', versions: '0+', nullableVersions: '2+' },
    { name: 'pairs', type: '[]Pair', versions: '0+', fields: [
      { name: 'key', type: 'string', versions: '0+' },
      { name: 'value', type: 'bytes', versions: '0+', nullableVersions: '0+' },
      { name: 'note', type: 'string', versions: '2+', nullableVersions: '2+', taggedVersions: '2+', tag: 0, default: null },
    ] },
    { name: 'count', type: 'int32', versions: '2+', taggedVersions: '2+', tag: 1, default: -1 },
    { name: 'offsets', type: '[]int64', versions: '2+', taggedVersions: '2+', tag: 2 },
    { name: 'extra', type: 'Extra', versions: '3+', taggedVersions: '3+', tag: 5, fields: [
      { name: 'code', type: 'int16', versions: '3+' },
      { name: 'reason', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
    ] },
  ],
};

function encode(codec: MessageCodec, version: number, value: Record<string, unknown>): Buffer {
  const writer = new ProtocolWriter(8);
  codec.write(writer, version, value);
  return concatParts(writer.finish().parts);
}

describe('codec features on a synthetic description', () => {
  for (const mode of ['generated', 'interpreted'] as const) {
    const codec = new MessageCodec(SYNTHETIC, { mode });
    for (let version = 0; version <= 3; version++) {
      it(`round-trips v${version} (${mode})`, () => {
        fc.assert(fc.property(messageArbitrary(codec.plan(version)), (value) => {
          const bytes = encode(codec, version, value);
          const reader = new ProtocolReader(bytes);
          expect(codec.decode(reader, version)).toEqual(value);
          reader.expectEnd('synthetic');
          for (let length = 0; length < bytes.length; length++) {
            const short = new ProtocolReader(bytes.subarray(0, length));
            expect(outcome(() => codec.decode(short, version))).toBe(ProtocolErrorCode.MALFORMED);
          }
        }), { numRuns: 100 });
      });
    }
  }

  it('keeps the int16 string length in flexible versions when the field says flexibleVersions "none"', () => {
    const codec = new MessageCodec(SYNTHETIC);
    const value = codec.decode(new ProtocolReader(encode(codec, 0, {
      small: 1, port: 7, ratio: 0.5, blob: Buffer.from([1]), id: '0'.repeat(32), legacyName: 'ab', point: { x: 1, y: -1 }, names: [], pairs: [],
      count: -1, offsets: [], extra: { code: 0, reason: null },
    })), 0);
    const v2 = encode(codec, 2, { ...value, port: 9 });
    // int8, uint16, float64, compact bytes (2 = length 1 + 1), 1 byte, uuid, then int16 length 2 + "ab".
    expect(v2.subarray(0, 1 + 2 + 8 + 1 + 1 + 16 + 4).subarray(-4)).toEqual(Buffer.from([0, 2, 0x61, 0x62]));
  });
});

describe('tagged-field decisions', () => {
  const codec = new MessageCodec(FETCH_REQUEST);
  const request = {
    clusterId: null, replicaId: -1, maxWaitMs: 500, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0,
    sessionId: 0, sessionEpoch: -1, topics: [], forgottenTopicsData: [], rackId: '',
  };

  it('writes no tag section entries for default values, and the tag when not default', () => {
    const plain = encode(codec, 12, request);
    expect(plain[plain.length - 1]).toBe(0); // empty tag section
    const tagged = encode(codec, 12, { ...request, clusterId: 'c1' });
    // count 1, tag 0, size 3, compact string "c1" (length + 1 = 3).
    expect(tagged.subarray(-6)).toEqual(Buffer.from([1, 0, 3, 3, 0x63, 0x31]));
  });

  it('skips and drops unknown tags, reading the known one among them', () => {
    const plain = encode(codec, 12, request);
    const body = plain.subarray(0, plain.length - 1);
    // Tags 0 (clusterId "c1"), 4 (unknown, 2 bytes), 9 (unknown, 0 bytes).
    const section = Buffer.from([3, 0, 3, 3, 0x63, 0x31, 4, 2, 0xaa, 0xbb, 9, 0]);
    for (const mode of ['generated', 'interpreted'] as const) {
      const reader = new ProtocolReader(Buffer.concat([body, section]));
      const decoded = new MessageCodec(FETCH_REQUEST, { mode }).decode(reader, 12);
      reader.expectEnd('fetch');
      expect(decoded).toEqual({ ...request, clusterId: 'c1' });
      expect(Object.keys(decoded)).toEqual(Object.keys(request));
    }
    expect(encode(codec, 12, { ...request, clusterId: 'c1' })).toEqual(Buffer.concat([body, Buffer.from([1, 0, 3, 3, 0x63, 0x31])]));
  });

  it('refuses tags out of order, and a known tag whose size does not match its value', () => {
    const plain = encode(codec, 12, request);
    const body = plain.subarray(0, plain.length - 1);
    const outOfOrder = Buffer.concat([body, Buffer.from([2, 4, 0, 0, 3, 3, 0x63, 0x31])]);
    const wrongSize = Buffer.concat([body, Buffer.from([1, 0, 4, 3, 0x63, 0x31, 0])]);
    for (const bytes of [outOfOrder, wrongSize]) {
      expect(outcome(() => codec.decode(new ProtocolReader(bytes), 12))).toBe(ProtocolErrorCode.MALFORMED);
    }
  });
});

describe('records', () => {
  it('keeps a RecordsRef (e.g. a fetch plan) as its own part, with only its size prefix inline', () => {
    const plan = { totalBytes: 5 };
    for (const mode of ['generated', 'interpreted'] as const) {
      for (const version of [4, 12]) {
        const writer = new ProtocolWriter();
        new MessageCodec(FETCH_RESPONSE, { mode }).write(writer, version, {
          throttleTimeMs: 0, errorCode: 0, sessionId: 0,
          responses: [{ topic: 't', partitions: [{
            partitionIndex: 0, errorCode: 0, highWatermark: 1, lastStableOffset: 1, logStartOffset: 0,
            abortedTransactions: [], preferredReadReplica: -1, records: plan,
          }] }],
        });
        const finished = writer.finish();
        expect(finished.parts.filter((part) => part === plan)).toHaveLength(1);
        const before = finished.parts[finished.parts.indexOf(plan) - 1] as Buffer;
        // The prefix just before the part: int32 5, or compact uvarint 6.
        expect(version >= 12 ? before.subarray(-1) : before.subarray(-4)).toEqual(version >= 12 ? Buffer.from([6]) : Buffer.from([0, 0, 0, 5]));
        expect(finished.totalBytes).toBe(finished.parts.reduce((sum, part) => sum + (Buffer.isBuffer(part) ? part.length : part.totalBytes), 0));
      }
    }
  });
});

describe('saturating int64 fields (request offsets and timestamps)', () => {
  // Kafka answers a Fetch at 2^62 (OFFSET_OUT_OF_RANGE), a ListOffsets at 2^60
  // and a DeleteRecords beyond 2^53, so these fields decode clamped to
  // ±(2^53 − 1); every other int64 still fails the frame with UNSAFE_INTEGER.
  const MARKER = 0x1234_5678_9abc;
  /** `bytes` with the one big-endian int64 MARKER replaced by high·2^32. */
  function patched(bytes: Buffer, high: number): Buffer {
    const marker = Buffer.alloc(8);
    marker.writeUInt32BE(Math.floor(MARKER / 2 ** 32), 0);
    marker.writeUInt32BE(MARKER % 2 ** 32, 4);
    const at = bytes.indexOf(marker);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(bytes.indexOf(marker, at + 1)).toBe(-1);
    const out = Buffer.from(bytes);
    out.writeInt32BE(high, at);
    out.writeUInt32BE(0, at + 4);
    return out;
  }
  const fetchPartition = { partition: 0, currentLeaderEpoch: -1, fetchOffset: 0, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: 1024 };
  const fetchRequest = (partition: Record<string, unknown>): Record<string, unknown> => ({
    clusterId: null, replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic: 't', partitions: [{ ...fetchPartition, ...partition }] }], forgottenTopicsData: [], rackId: '',
  });
  const cases = [
    { what: 'Fetch fetchOffset', description: FETCH_REQUEST, version: 12, value: fetchRequest({ fetchOffset: MARKER }), pick: (d: Any) => d.topics[0].partitions[0].fetchOffset },
    { what: 'Fetch logStartOffset', description: FETCH_REQUEST, version: 5, value: fetchRequest({ logStartOffset: MARKER }), pick: (d: Any) => d.topics[0].partitions[0].logStartOffset },
    {
      what: 'ListOffsets timestamp', description: LIST_OFFSETS_REQUEST, version: 7,
      value: { replicaId: -1, isolationLevel: 0, topics: [{ name: 't', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: MARKER, maxNumOffsets: 1 }] }] },
      pick: (d: Any) => d.topics[0].partitions[0].timestamp,
    },
    {
      what: 'DeleteRecords offset', description: DELETE_RECORDS_REQUEST, version: 2,
      value: { topics: [{ name: 't', partitions: [{ partitionIndex: 0, offset: MARKER }] }], timeoutMs: 100 },
      pick: (d: Any) => d.topics[0].partitions[0].offset,
    },
  ];
  for (const mode of ['generated', 'interpreted'] as const) {
    for (const { what, description, version, value, pick } of cases) {
      it(`${what} (${mode})`, () => {
        const codec = new MessageCodec(description, { mode });
        const bytes = encode(codec, version, value);
        expect(pick(codec.decode(new ProtocolReader(bytes), version) as Any)).toBe(MARKER);
        for (const [high, expected] of [[2 ** 30, Number.MAX_SAFE_INTEGER], [-(2 ** 31), Number.MIN_SAFE_INTEGER], [0x1fffff, 0x1fffff * 2 ** 32]] as const) {
          const reader = new ProtocolReader(patched(bytes, high));
          expect(pick(codec.decode(reader, version) as Any)).toBe(expected);
          reader.expectEnd(what);
        }
      });
    }
    it(`an int64 without saturate still fails the frame (${mode})`, () => {
      const codec = new MessageCodec({
        name: 'SaturateRequest', kind: 'request', apiKey: 9998, validVersions: '0', flexibleVersions: 'none',
        fields: [{ name: 'plain', type: 'int64', versions: '0+' }, { name: 'clamped', type: 'int64', versions: '0+', saturate: true }],
      }, { mode });
      const bytes = encode(codec, 0, { plain: 0, clamped: 0 });
      const high = Buffer.from(bytes);
      high.writeInt32BE(2 ** 30, 8);
      expect(codec.decode(new ProtocolReader(high), 0)).toEqual({ plain: 0, clamped: Number.MAX_SAFE_INTEGER });
      high.writeInt32BE(2 ** 30, 0);
      expect(outcome(() => codec.decode(new ProtocolReader(high), 0))).toBe(ProtocolErrorCode.UNSAFE_INTEGER);
      // Truncated: MALFORMED, as for any int64.
      expect(outcome(() => codec.decode(new ProtocolReader(bytes.subarray(0, 12)), 0))).toBe(ProtocolErrorCode.MALFORMED);
    });
  }
});
