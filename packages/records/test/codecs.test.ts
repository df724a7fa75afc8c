// Round trips, known vectors and bounds for the record-batch codecs
// (src/compression.ts). Hostile-input tests are in codecs-hostile.test.ts;
// LZ4 internals and CLI interop in codecs-lz4.test.ts.

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as zlib from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSeglogError } from '@seglog/common';
import type { CodecId } from '../src/compression.js';
import { Codec, compress, compressBound, compressionLevels, decompress } from '../src/compression.js';
import { readSnappyPreamble } from '../src/internal/codecs/snappy.js';

const CODECS: readonly CodecId[] = [Codec.none, Codec.gzip, Codec.snappy, Codec.lz4, Codec.zstd];
const MiB = 1024 * 1024;

function hasCommand(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Record-like bytes: repeated keys and headers with random values, ~3-4x compressible. */
function semiCompressible(bytes: number, seed: number): Buffer {
  const output = Buffer.alloc(bytes);
  let state = seed >>> 0 || 1;
  const next = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  const words = ['user-', 'order-', 'event:', '"amount":', '"currency":"EUR"', 'timestamp=', 'seglog ', '{"id":'];
  let at = 0;
  while (at < bytes) {
    const roll = next() % 10;
    if (roll < 6) {
      at += output.write(words[next() % words.length]!, at);
    } else {
      const digits = String(next() % 100_000);
      at += output.write(digits, at);
    }
  }
  return output;
}

const arbitraryPayload = fc.oneof(
  fc.uint8Array({ maxLength: 4096 }),
  fc.uint8Array({ minLength: 0, maxLength: 3 }),
  // Highly compressible: a short pattern repeated.
  fc
    .tuple(fc.uint8Array({ minLength: 1, maxLength: 8 }), fc.integer({ min: 1, max: 20_000 }))
    .map(([pattern, repeats]) => Buffer.concat(new Array<Uint8Array>(repeats).fill(pattern))),
  // Mixed runs of random and repeated bytes, spanning block boundaries.
  fc
    .array(fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: 70_000 })).map(([value, count]) => Buffer.alloc(count, value))), { maxLength: 8 })
    .map((parts) => Buffer.concat(parts)),
);

describe('round trip', () => {
  for (const codec of CODECS) {
    it(`codec ${codec}: decompress(compress(x)) = x for arbitrary bytes`, () => {
      fc.assert(
        fc.property(arbitraryPayload, (payload) => {
          const compressed = compress(codec, payload);
          expect(compressed.length).toBeLessThanOrEqual(compressBound(codec, payload.length));
          const restored = decompress(codec, compressed, payload.length);
          expect(Buffer.compare(restored, payload)).toBe(0);
        }),
        { numRuns: 150 },
      );
    });

    it(`codec ${codec}: 1 MiB random, zero and semi-compressible inputs`, () => {
      for (const payload of [randomBytes(MiB), Buffer.alloc(MiB), semiCompressible(MiB, codec + 1)]) {
        const compressed = compress(codec, payload);
        expect(compressed.length).toBeLessThanOrEqual(compressBound(codec, payload.length));
        expect(decompress(codec, compressed, MiB).equals(payload)).toBe(true);
      }
    });

    it(`codec ${codec}: inputs that are views into larger buffers`, () => {
      const backing = semiCompressible(100_000, 7);
      const view = new Uint8Array(backing.buffer, backing.byteOffset + 1234, 50_000);
      const compressed = compress(codec, view);
      const copy = new Uint8Array(compressed.length + 10);
      copy.set(compressed, 5);
      const restored = decompress(codec, copy.subarray(5, 5 + compressed.length), 50_000);
      expect(Buffer.from(view).equals(restored)).toBe(true);
    });

    it(`codec ${codec}: output exactly at the cap is accepted, one byte over is the limit error`, () => {
      const payload = semiCompressible(70_000, 3);
      const compressed = compress(codec, payload);
      expect(decompress(codec, compressed, payload.length).length).toBe(payload.length);
      expect(() => decompress(codec, compressed, payload.length - 1)).toThrowError(
        expect.objectContaining({ code: 'SEGLOG_ERR_RECORDS_DECOMPRESSION_LIMIT', kafka: 'INVALID_RECORD' }),
      );
    });
  }

  it('codec none returns the input memory itself', () => {
    const payload = Buffer.from('records');
    expect(compress(Codec.none, payload)).toBe(payload);
    expect(decompress(Codec.none, payload, 100)).toBe(payload);
  });

  it('levels: every level in range round-trips and changes the output size as expected', () => {
    const payload = semiCompressible(200_000, 11);
    for (const level of [1, 6, 9]) expect(decompress(Codec.gzip, compress(Codec.gzip, payload, { level }), MiB).equals(payload)).toBe(true);
    const fast = compress(Codec.zstd, payload, { level: 1 }).length;
    const strong = compress(Codec.zstd, payload, { level: 19 }).length;
    expect(strong).toBeLessThan(fast);
    expect(decompress(Codec.zstd, compress(Codec.zstd, payload, { level: -5 }), MiB).equals(payload)).toBe(true);
    expect(compressionLevels.zstd?.default).toBe(3);
    expect(() => compress(Codec.gzip, payload, { level: 10 })).toThrow(/level out of range/);
    expect(() => compress(Codec.zstd, payload, { level: 23 })).toThrow(/level out of range/);
  });
});

describe('unsupported codec ids', () => {
  for (const id of [5, 6, 7]) {
    it(`id ${id} is UNSUPPORTED_CODEC for decompress and compress`, () => {
      for (const call of [() => decompress(id as CodecId, Buffer.from('x'), 10), () => compress(id as CodecId, Buffer.from('x'))]) {
        let caught: unknown;
        try {
          call();
        } catch (error) {
          caught = error;
        }
        expect(isSeglogError(caught)).toBe(true);
        expect(caught).toMatchObject({ code: 'SEGLOG_ERR_RECORDS_UNSUPPORTED_CODEC', kafka: 'UNSUPPORTED_COMPRESSION_TYPE' });
      }
    });
  }

  it('ids outside the 3 attribute bits are programmer errors', () => {
    expect(() => decompress(8 as CodecId, Buffer.from('x'), 10)).toThrow(/3 attribute bits/);
    expect(() => decompress(Codec.gzip, Buffer.from('x'), -1)).toThrow(/maxOutputBytes/);
  });
});

describe('gzip', () => {
  it('our output decodes with zlib.gunzipSync and zlib output decodes with ours', () => {
    const payload = semiCompressible(100_000, 5);
    expect(zlib.gunzipSync(compress(Codec.gzip, payload)).equals(payload)).toBe(true);
    expect(decompress(Codec.gzip, zlib.gzipSync(payload, { level: 1 }), MiB).equals(payload)).toBe(true);
    // The gzip magic and deflate method.
    expect([...compress(Codec.gzip, payload).subarray(0, 3)]).toEqual([0x1f, 0x8b, 8]);
  });

  it('concatenated members decode to the concatenation', () => {
    const joined = Buffer.concat([zlib.gzipSync(Buffer.from('first ')), zlib.gzipSync(Buffer.from('second'))]);
    expect(decompress(Codec.gzip, joined, 100).toString()).toBe('first second');
  });

  it.skipIf(!hasCommand('gzip'))('decodes the gzip CLI output (skipped when no gzip binary is installed)', () => {
    const payload = semiCompressible(50_000, 9);
    const cli = execFileSync('gzip', ['-c', '-9'], { input: payload });
    expect(decompress(Codec.gzip, cli, MiB).equals(payload)).toBe(true);
  });

  it('empty input is corruption', () => {
    expect(() => decompress(Codec.gzip, Buffer.alloc(0), 10)).toThrowError(expect.objectContaining({ code: 'SEGLOG_ERR_RECORDS_CORRUPT_COMPRESSION' }));
  });
});

describe('snappy (xerial framing)', () => {
  const header = '82534e415050590000000001' + '00000001';

  it('writes exactly the snappy-java bytes for "abc"', () => {
    // header, block length 5, raw block: varint 3, literal tag (3-1)<<2, "abc"
    expect(compress(Codec.snappy, Buffer.from('abc')).toString('hex')).toBe(header + '00000005' + '03' + '08' + '616263');
  });

  it('empty input writes the header alone, and both empty forms read as empty', () => {
    expect(compress(Codec.snappy, Buffer.alloc(0)).toString('hex')).toBe(header);
    expect(decompress(Codec.snappy, Buffer.from(header, 'hex'), 0).length).toBe(0);
    expect(decompress(Codec.snappy, Buffer.alloc(0), 0).length).toBe(0);
  });

  it('splits input into 32 KiB blocks, each a length-prefixed raw block', () => {
    const payload = semiCompressible(70_000, 2);
    const framed = compress(Codec.snappy, payload);
    let at = 16;
    const lengths: number[] = [];
    while (at < framed.length) {
      const blockBytes = framed.readInt32BE(at);
      // The raw preamble states the uncompressed block size.
      lengths.push(readSnappyPreamble(framed, at + 4, at + 4 + blockBytes));
      at += 4 + blockBytes;
    }
    expect(at).toBe(framed.length);
    expect(lengths).toEqual([32768, 32768, 70_000 - 65536]);
  });

  it('reads raw (unframed) snappy', () => {
    expect(decompress(Codec.snappy, Buffer.from('0308616263', 'hex'), 3).toString()).toBe('abc');
  });

  it('reads a concatenated stream (a second header where a block length is due)', () => {
    const one = compress(Codec.snappy, Buffer.from('first '));
    const two = compress(Codec.snappy, Buffer.from('second'));
    expect(decompress(Codec.snappy, Buffer.concat([one, two]), 100).toString()).toBe('first second');
  });

  it('rejects version 0, a zero or negative block length and a truncated block', () => {
    const good = compress(Codec.snappy, Buffer.from('abcdef'));
    const badVersion = Buffer.from(good);
    badVersion.writeInt32BE(0, 8);
    const zeroLength = Buffer.from(header + '00000000', 'hex');
    const negative = Buffer.from(header + 'ffffffff00', 'hex');
    for (const input of [badVersion, zeroLength, negative, good.subarray(0, good.length - 1)]) {
      expect(() => decompress(Codec.snappy, input, 100)).toThrowError(expect.objectContaining({ code: 'SEGLOG_ERR_RECORDS_CORRUPT_COMPRESSION', kafka: 'CORRUPT_MESSAGE' }));
    }
  });
});

describe('zstd', () => {
  it('our frame carries the content size; decodes multiple frames and skippable frames', () => {
    const one = compress(Codec.zstd, Buffer.from('first '));
    expect(one.readUInt32LE(0)).toBe(0xfd2fb528);
    const skippable = Buffer.from('502a4d1803000000aabbcc', 'hex');
    const two = compress(Codec.zstd, Buffer.from('second'));
    expect(decompress(Codec.zstd, Buffer.concat([skippable, one, skippable, two, skippable]), 100).toString()).toBe('first second');
    expect(decompress(Codec.zstd, skippable, 0).length).toBe(0);
  });

  it.skipIf(!hasCommand('zstd'))('interop with the zstd CLI both ways (skipped when no zstd binary is installed)', () => {
    const payload = semiCompressible(300_000, 4);
    // From stdin the CLI does not know the size: frames without a content size.
    const cli = execFileSync('zstd', ['-c', '-q', '-19'], { input: payload });
    expect(decompress(Codec.zstd, cli, MiB).equals(payload)).toBe(true);
    expect(decompress(Codec.zstd, Buffer.concat([cli, cli]), MiB).equals(Buffer.concat([payload, payload]))).toBe(true);
    expect(execFileSync('zstd', ['-d', '-c', '-q'], { input: compress(Codec.zstd, payload) }).equals(payload)).toBe(true);
  });

  it('empty input and a trailing partial frame are corruption', () => {
    const frame = compress(Codec.zstd, Buffer.from('abc'));
    for (const input of [Buffer.alloc(0), Buffer.concat([frame, frame.subarray(0, 5)])]) {
      expect(() => decompress(Codec.zstd, input, 100)).toThrowError(expect.objectContaining({ code: 'SEGLOG_ERR_RECORDS_CORRUPT_COMPRESSION' }));
    }
  });
});

describe('compressBound', () => {
  it('matches the libraries and formulas at known points', () => {
    expect(compressBound(Codec.none, 100)).toBe(100);
    // ZSTD_compressBound(1 MiB) from the C library is 1052672.
    expect(compressBound(Codec.zstd, MiB)).toBe(1_052_672);
    expect(compressBound(Codec.zstd, 0)).toBe(64);
    // lz4: 7-byte header, one 4-byte size per 64 KiB block, stored data, end mark.
    expect(compressBound(Codec.lz4, 0)).toBe(11);
    expect(compressBound(Codec.lz4, 65_537)).toBe(7 + 2 * 4 + 65_537 + 4);
    // snappy: 16-byte header, per 32 KiB block a length and 32 bytes, plus n/6.
    expect(compressBound(Codec.snappy, 6)).toBe(16 + 36 + 6 + 1);
    // gzip: zlib's deflateBound with default parameters + 18 bytes of gzip wrapper.
    expect(compressBound(Codec.gzip, MiB)).toBe(MiB + 256 + 64 + 0 + 7 + 18);
  });

  it('holds for incompressible inputs of many sizes at every codec setting', () => {
    for (const bytes of [0, 1, 13, 255, 4096, 16_385, 32_769, 65_535, 65_537, 200_003]) {
      const payload = randomBytes(bytes);
      for (const codec of CODECS) expect(compress(codec, payload).length).toBeLessThanOrEqual(compressBound(codec, bytes));
      for (const level of [0, 1, 9]) expect(compress(Codec.gzip, payload, { level }).length).toBeLessThanOrEqual(compressBound(Codec.gzip, bytes));
      for (const level of [-100, 1, 19]) expect(compress(Codec.zstd, payload, { level }).length).toBeLessThanOrEqual(compressBound(Codec.zstd, bytes));
    }
  });
});
