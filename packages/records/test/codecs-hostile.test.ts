// Hostile input: decompression bombs must fail with the limit error quickly
// and without allocating beyond the cap; every single-byte change and every
// truncation of a small payload must either decode within the cap or fail
// with a typed SeglogError — never RangeError, TypeError or anything else.

import { randomBytes } from 'node:crypto';
import * as zlib from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSeglogError } from '@seglog/common';
import type { CodecId } from '../src/compression.js';
import { Codec, compress, decompress } from '../src/compression.js';
import { codecAllocation } from '../src/internal/codecs/output-buffer.js';
import { xxh32 } from '../src/internal/codecs/xxhash32.js';

const LIMIT = 'SEGLOG_ERR_RECORDS_DECOMPRESSION_LIMIT';
const CORRUPT = 'SEGLOG_ERR_RECORDS_CORRUPT_COMPRESSION';
const KiB = 1024;
const MiB = 1024 * KiB;
const CAP = MiB;

/** Decodes within the cap or fails with one of our two codes; anything else fails the test. */
function decodeOrTypedError(codec: CodecId, input: Uint8Array, maxOutputBytes: number): Buffer | string {
  try {
    const output = decompress(codec, input, maxOutputBytes);
    expect(Buffer.isBuffer(output)).toBe(true);
    expect(output.length).toBeLessThanOrEqual(maxOutputBytes);
    return output;
  } catch (error) {
    if (!isSeglogError(error) || (error.code !== LIMIT && error.code !== CORRUPT)) {
      throw new Error(`codec ${codec}: untyped failure on ${Buffer.from(input).toString('hex').slice(0, 200)}`, { cause: error });
    }
    expect(error.kafka).toBe(error.code === LIMIT ? 'INVALID_RECORD' : 'CORRUPT_MESSAGE');
    return error.code;
  }
}

interface Cost {
  code: string;
  /** Bytes our codecs allocated for output (counted by allocOutput). */
  allocatedBytes: number;
  /** Growth of Buffer/ArrayBuffer memory across the call, GC or not. */
  arrayBufferGrowth: number;
}

function measureRejection(codec: CodecId, bomb: Uint8Array): Cost {
  const allocatedBefore = codecAllocation.bytes;
  const memoryBefore = process.memoryUsage().arrayBuffers;
  let code = 'none';
  try {
    decompress(codec, bomb, CAP);
  } catch (error) {
    code = isSeglogError(error) ? error.code : String(error);
  }
  return {
    code,
    allocatedBytes: codecAllocation.bytes - allocatedBefore,
    arrayBufferGrowth: process.memoryUsage().arrayBuffers - memoryBefore,
  };
}

function expectCheapRejection(cost: Cost, allocatedBytesMax: number): void {
  expect(cost.code).toBe(LIMIT);
  expect(cost.allocatedBytes).toBeLessThanOrEqual(allocatedBytesMax);
  // Producing 100+ MiB would show up here; the cap is 1 MiB. Time is not
  // asserted: the verdict must not depend on the machine's speed, and the
  // byte counts above already tell a bounded rejection from a bomb.
  expect(cost.arrayBufferGrowth).toBeLessThan(16 * MiB);
}

// --- bombs: small inputs that declare or produce > 100 MiB ------------------

/** zstd frame of `blocks` RLE blocks of 128 KiB each, hand-made per RFC 8878. */
function zstdRleBomb(blocks: number, options: { declareSize: boolean; windowLog: number }): Buffer {
  const contentBytes = blocks * 128 * KiB;
  const parts: Buffer[] = [Buffer.from('28b52ffd', 'hex')];
  // Frame header descriptor: FCS field size flag 3 (8 bytes) or 0 (none); not single-segment.
  parts.push(Buffer.of(options.declareSize ? 0xc0 : 0x00));
  parts.push(Buffer.of((options.windowLog - 10) << 3)); // window descriptor: exponent, mantissa 0
  if (options.declareSize) {
    const size = Buffer.alloc(8);
    size.writeUInt32LE(contentBytes % 2 ** 32, 0);
    size.writeUInt32LE(Math.floor(contentBytes / 2 ** 32), 4);
    parts.push(size);
  }
  for (let index = 0; index < blocks; index++) {
    const last = index === blocks - 1 ? 1 : 0;
    const header = ((128 * KiB) << 3) | (1 << 1) | last; // block type 1 = RLE
    parts.push(Buffer.of(header & 0xff, (header >>> 8) & 0xff, (header >>> 16) & 0xff, 0x61));
  }
  return Buffer.concat(parts);
}

function lz4Header(flg: number, bd: number, contentBytes?: number): Buffer {
  const descriptor = contentBytes === undefined ? Buffer.of(flg, bd) : Buffer.concat([Buffer.of(flg, bd), Buffer.alloc(8)]);
  if (contentBytes !== undefined) {
    descriptor.writeUInt32LE(contentBytes % 2 ** 32, 2);
    descriptor.writeUInt32LE(Math.floor(contentBytes / 2 ** 32), 6);
  }
  const checksum = (xxh32(descriptor, 0, descriptor.length, 0) >>> 8) & 0xff;
  return Buffer.concat([Buffer.from('04224d18', 'hex'), descriptor, Buffer.of(checksum)]);
}

/** One 64 KiB-output compressed LZ4 block: 1 literal, a 65535-byte match at offset 1, empty last sequence. */
function lz4ExpandingBlock(): Buffer {
  const extension = 65_535 - 19;
  const lengthBytes = [...new Array<number>(Math.floor(extension / 255)).fill(255), extension % 255];
  const block = Buffer.from([0x1f, 0x61, 0x01, 0x00, ...lengthBytes, 0x00]);
  const size = Buffer.alloc(4);
  size.writeUInt32LE(block.length, 0);
  return Buffer.concat([size, block]);
}

function snappyFramed(blocks: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [Buffer.from('82534e41505059000000000100000001', 'hex')];
  for (const block of blocks) {
    const size = Buffer.alloc(4);
    size.writeInt32BE(block.length, 0);
    parts.push(size, block);
  }
  return Buffer.concat(parts);
}

describe('decompression bombs are rejected with the limit error, quickly, within the cap', () => {
  it('none: a payload larger than the cap', () => {
    expectCheapRejection(measureRejection(Codec.none, Buffer.alloc(CAP + 1)), 0);
  });

  it('gzip: 16 members of 8 MiB of zeros (~130 KiB producing 128 MiB)', () => {
    const member = zlib.gzipSync(Buffer.alloc(8 * MiB), { level: 9 });
    const bomb = Buffer.concat(new Array<Buffer>(16).fill(member));
    expect(bomb.length).toBeLessThan(200 * KiB);
    const cost = measureRejection(Codec.gzip, bomb);
    // zlib allocates outside our counter; its memory is bounded by the cap plus one chunk.
    expectCheapRejection(cost, 0);
  });

  it('zstd: a 3 KiB frame declaring 100 MiB is rejected before decoding', () => {
    const bomb = zstdRleBomb(800, { declareSize: true, windowLog: 20 });
    expect(bomb.length).toBeLessThan(4 * KiB);
    expectCheapRejection(measureRejection(Codec.zstd, bomb), 0);
  });

  it('zstd: the same frame without a content size is stopped at the cap', () => {
    const bomb = zstdRleBomb(800, { declareSize: false, windowLog: 20 });
    // Sanity: the frame is valid and really produces 100 MiB when allowed to.
    expect(decompress(Codec.zstd, zstdRleBomb(8, { declareSize: false, windowLog: 20 }), MiB).length).toBe(MiB);
    expectCheapRejection(measureRejection(Codec.zstd, bomb), 2 * CAP);
  });

  it('zstd without content size: output exactly at the cap decodes, one byte less is the limit error', () => {
    const frame = zstdRleBomb(8, { declareSize: false, windowLog: 20 });
    expect(decompress(Codec.zstd, frame, MiB).equals(Buffer.alloc(MiB, 0x61))).toBe(true);
    expect(() => decompress(Codec.zstd, frame, MiB - 1)).toThrowError(expect.objectContaining({ code: LIMIT }));
    // A sized frame followed by an unsized one takes the streaming path too.
    const mixed = Buffer.concat([compress(Codec.zstd, Buffer.from('sized')), zstdRleBomb(1, { declareSize: false, windowLog: 17 })]);
    expect(decompress(Codec.zstd, mixed, 5 + 128 * KiB).length).toBe(5 + 128 * KiB);
    expect(() => decompress(Codec.zstd, mixed, 4 + 128 * KiB)).toThrowError(expect.objectContaining({ code: LIMIT }));
  });

  it('zstd: a frame asking for a 2 GiB window is the limit error, not an allocation', () => {
    const bomb = zstdRleBomb(2, { declareSize: false, windowLog: 31 });
    expectCheapRejection(measureRejection(Codec.zstd, bomb), 2 * CAP);
  });

  it('lz4: a 20-byte frame declaring a 200 MiB content size is rejected before decoding', () => {
    const bomb = Buffer.concat([lz4Header(0x68, 0x40, 200 * MiB), lz4ExpandingBlock(), Buffer.alloc(4)]);
    expectCheapRejection(measureRejection(Codec.lz4, bomb), 0);
  });

  it('lz4: 1600 blocks of 262 bytes each producing 64 KiB (100 MiB) are stopped at the cap', () => {
    const bomb = Buffer.concat([lz4Header(0x60, 0x40), ...new Array<Buffer>(1600).fill(lz4ExpandingBlock()), Buffer.alloc(4)]);
    expect(bomb.length).toBeLessThan(450 * KiB);
    // Sanity: 16 such blocks decode to exactly 1 MiB.
    const small = Buffer.concat([lz4Header(0x60, 0x40), ...new Array<Buffer>(16).fill(lz4ExpandingBlock()), Buffer.alloc(4)]);
    expect(decompress(Codec.lz4, small, MiB).equals(Buffer.alloc(MiB, 0x61))).toBe(true);
    expectCheapRejection(measureRejection(Codec.lz4, bomb), 2 * CAP);
  });

  it('snappy raw: a 6-byte block whose preamble declares 4 GiB - 1', () => {
    expectCheapRejection(measureRejection(Codec.snappy, Buffer.from('ffffffff0f00', 'hex')), 0);
  });

  it('snappy framed: 200 blocks each declaring 1 MiB are rejected before any block is decoded', () => {
    const declaresOneMiB = Buffer.from('808040' + '00', 'hex');
    const bomb = snappyFramed(new Array<Buffer>(200).fill(declaresOneMiB));
    expectCheapRejection(measureRejection(Codec.snappy, bomb), 0);
  });

  it('snappy framed: real blocks of 32 KiB zeros past the cap', () => {
    const block = compress(Codec.snappy, Buffer.alloc(32 * KiB)).subarray(20);
    const bomb = snappyFramed(new Array<Buffer>(64).fill(block));
    expect(decompress(Codec.snappy, snappyFramed(new Array<Buffer>(32).fill(block)), MiB).length).toBe(MiB);
    expectCheapRejection(measureRejection(Codec.snappy, bomb), 0);
  });
});

// --- exhaustive single-byte changes and truncations -------------------------

function recordsLike(): Buffer {
  const parts: string[] = [];
  for (let index = 0; index < 6; index++) parts.push(`key-${index % 3}|{"user":"u${index * 7}","amount":${index * 13},"note":"seglog"}`);
  return Buffer.concat([Buffer.from(parts.join('')), randomBytes(24)]);
}

const MUTATIONS: readonly ((byte: number) => number)[] = [
  (byte) => byte ^ 0x01,
  (byte) => byte ^ 0x80,
  (byte) => byte ^ 0xff,
  () => 0x00,
  () => 0xff,
  (byte) => (byte + 1) & 0xff,
];

function exhaustive(codec: CodecId, payload: Buffer, maxOutputBytes: number): { decoded: number; typed: number } {
  let decoded = 0;
  let typed = 0;
  const count = (result: Buffer | string): void => {
    if (typeof result === 'string') typed++;
    else decoded++;
  };
  for (let at = 0; at < payload.length; at++) {
    for (const mutate of MUTATIONS) {
      const changed = Buffer.from(payload);
      changed[at] = mutate(payload[at]!);
      if (changed[at] === payload[at]) continue;
      count(decodeOrTypedError(codec, changed, maxOutputBytes));
    }
  }
  for (let length = 0; length < payload.length; length++) count(decodeOrTypedError(codec, payload.subarray(0, length), maxOutputBytes));
  return { decoded, typed };
}

describe('every single-byte change and every truncation gives output within the cap or a typed error', () => {
  const original = recordsLike();
  const samples: readonly [string, CodecId, Buffer][] = [
    ['gzip', Codec.gzip, compress(Codec.gzip, original)],
    ['snappy framed', Codec.snappy, compress(Codec.snappy, original)],
    ['snappy raw', Codec.snappy, compress(Codec.snappy, original).subarray(20)],
    ['lz4 (ours)', Codec.lz4, compress(Codec.lz4, original)],
    [
      'lz4 (content size, block and content checksums)',
      Codec.lz4,
      Buffer.from(
        '04224d187c402c00000000000000b91b0000006d68656c6c6f200600932c207365676c6f67211b005068656c6c6f52f5e045000000004fe0701d',
        'hex',
      ),
    ],
    ['lz4 (no checksums, one 64 KiB-expanding block)', Codec.lz4, Buffer.concat([lz4Header(0x60, 0x40), lz4ExpandingBlock(), Buffer.alloc(4)])],
    ['zstd', Codec.zstd, compress(Codec.zstd, original)],
    ['zstd (no content size, RLE)', Codec.zstd, zstdRleBomb(3, { declareSize: false, windowLog: 20 })],
  ];
  for (const [name, codec, payload] of samples) {
    it(`${name}: ${payload.length} bytes, all positions`, () => {
      expect(decompress(codec, payload, MiB).length).toBeGreaterThan(0);
      // Small cap, so that mutations which inflate hit the limit path too.
      const small = exhaustive(codec, payload, 4 * KiB);
      const large = exhaustive(codec, payload, MiB);
      expect(small.typed).toBeGreaterThan(0);
      expect(large.typed + large.decoded).toBe(small.typed + small.decoded);
    });
  }

  it('tiny payloads: all 255 other values at every position (gzip: header and trailer, zlib costs ~0.2 ms a call)', () => {
    const tiny = Buffer.from('key=a value=abcabcabc key=b');
    for (const codec of [Codec.gzip, Codec.snappy, Codec.lz4, Codec.zstd]) {
      const payload = compress(codec, tiny);
      let typed = 0;
      for (let at = 0; at < payload.length; at++) {
        if (codec === Codec.gzip && at >= 10 && at < payload.length - 8) continue;
        for (let value = 0; value < 256; value++) {
          if (value === payload[at]) continue;
          const changed = Buffer.from(payload);
          changed[at] = value;
          if (typeof decodeOrTypedError(codec, changed, 64) === 'string') typed++;
        }
      }
      expect(typed).toBeGreaterThan(0);
    }
  });

  it('random multi-byte damage to larger payloads of every codec (fast-check)', () => {
    const payload = Buffer.concat([recordsLike(), Buffer.from('seglog '.repeat(20_000)), randomBytes(5000)]);
    const compressed = [Codec.gzip, Codec.snappy, Codec.lz4, Codec.zstd].map((codec) => [codec, compress(codec, payload)] as const);
    fc.assert(
      fc.property(
        fc.constantFrom(...compressed),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }),
        fc.option(fc.nat(), { nil: undefined }),
        ([codec, bytes], changes, cut) => {
          const damaged = Buffer.from(bytes);
          for (const [at, value] of changes) damaged[at % damaged.length] = value;
          const input = cut === undefined ? damaged : damaged.subarray(0, cut % damaged.length);
          decodeOrTypedError(codec, input, 64 * KiB);
          decodeOrTypedError(codec, input, MiB);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('arbitrary bytes are never an untyped failure, with or without each codec magic', () => {
    const magics = [Buffer.alloc(0), Buffer.from('1f8b08', 'hex'), Buffer.from('82534e4150505900', 'hex'), Buffer.from('04224d18', 'hex'), Buffer.from('28b52ffd', 'hex')];
    fc.assert(
      fc.property(fc.constantFrom(Codec.gzip, Codec.snappy, Codec.lz4, Codec.zstd), fc.constantFrom(...magics), fc.uint8Array({ maxLength: 300 }), (codec, magic, tail) => {
        decodeOrTypedError(codec, Buffer.concat([magic, tail]), 64 * KiB);
      }),
      { numRuns: 2000 },
    );
  });
});
