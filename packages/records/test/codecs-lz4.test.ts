// Our own LZ4 (xxHash32, block decoder and compressor, frame reader and
// writer) against known answers, hand-made frames per the spec, a trivial
// reference decoder, and the reference `lz4` CLI when it is installed.

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Codec, compress, decompress } from '../src/compression.js';
import { LZ4_MALFORMED, LZ4_OUTPUT_LIMIT, Lz4MatchTable, lz4BlockBound, lz4CompressBlock, lz4DecodeBlock } from '../src/internal/codecs/lz4-block.js';
import { xxh32 } from '../src/internal/codecs/xxhash32.js';
import { codecAllocation } from '../src/internal/codecs/output-buffer.js';

const CORRUPT = 'SEGLOG_ERR_RECORDS_CORRUPT_COMPRESSION';

function hex(text: string): Buffer {
  return Buffer.from(text.replace(/[\s|]/g, ''), 'hex');
}

function corruptReason(input: Uint8Array): string {
  try {
    decompress(Codec.lz4, input, 1 << 20);
  } catch (error) {
    expect(error).toMatchObject({ code: CORRUPT, kafka: 'CORRUPT_MESSAGE' });
    return String((error as { context: { reason: string } }).context.reason);
  }
  throw new Error('expected a corrupt-compression error');
}

const hasLz4 = ((): boolean => {
  try {
    execFileSync('lz4', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe('xxh32', () => {
  it('matches the reference known answers', () => {
    const of = (text: string, seed = 0): number => xxh32(Buffer.from(text), 0, Buffer.byteLength(text), seed);
    expect(of('')).toBe(0x02cc5d05);
    expect(of('abc')).toBe(0x32d153ff);
    // Values the lz4 CLI (v1.9.4) writes as content checksums.
    expect(of('Nobody inspects the spammish repetition')).toBe(0xe2293b2f);
    expect(of('hello hello hello hello, seglog! hello hello')).toBe(0x1d70e04f);
    // Kafka's frame descriptor FLG 0x60 BD 0x40 has header checksum 0x82.
    expect((xxh32(hex('6040'), 0, 2, 0) >>> 8) & 0xff).toBe(0x82);
  });

  it('respects the start/end window and the seed', () => {
    const bytes = Buffer.from('xxabcxx');
    expect(xxh32(bytes, 2, 5, 0)).toBe(0x32d153ff);
    expect(xxh32(bytes, 2, 5, 1)).not.toBe(0x32d153ff);
  });
});

describe('lz4 frames crafted per the spec', () => {
  it('an empty Kafka-style frame (FLG 0x60, BD 0x40, HC 0x82) is empty', () => {
    expect(decompress(Codec.lz4, hex('04224d18 604082 00000000'), 0).length).toBe(0);
    // And that is exactly what we write for an empty input.
    expect(compress(Codec.lz4, Buffer.alloc(0)).toString('hex')).toBe('04224d1860408200000000');
  });

  it('a stored block (size high bit set) is copied', () => {
    expect(decompress(Codec.lz4, hex('04224d18 604082 05000080 68656c6c6f 00000000'), 5).toString()).toBe('hello');
  });

  it('a compressed block with an overlapping match', () => {
    // token 0x3b: 3 literals "abc", match length 11+4 at offset 3; then a
    // literals-only last sequence with 0 literals.
    const frame = hex('04224d18 604082 07000000 3b616263 0300 00 00000000');
    expect(decompress(Codec.lz4, frame, 18).toString()).toBe('abc'.repeat(6));
  });

  it('the lz4 CLI frame with content size, block checksum and content checksum', () => {
    // `lz4 -B4 -BX --content-size` of the 44 bytes below: FLG 0x7c, BD 0x40,
    // content size 44, HC 0xb9, one block (27 bytes) + xxh32, end mark, xxh32.
    const frame = hex(
      '04224d18 7c40 2c00000000000000 b9' +
        '1b000000 6d68656c6c6f200600932c207365676c6f67211b005068656c6c6f 52f5e045' +
        '00000000 4fe0701d',
    );
    expect(decompress(Codec.lz4, frame, 44).toString()).toBe('hello hello hello hello, seglog! hello hello');
    const flip = (at: number): Buffer => {
      const copy = Buffer.from(frame);
      copy[at]! ^= 1;
      return copy;
    };
    expect(corruptReason(flip(14))).toBe('header checksum mismatch');
    expect(corruptReason(flip(20))).toBe('block checksum mismatch'); // data, checked before decoding
    expect(corruptReason(flip(49))).toBe('block checksum mismatch'); // the checksum itself
    expect(corruptReason(flip(frame.length - 1))).toBe('content checksum mismatch');
    // A wrong content size (still within the cap) is corruption, not silently accepted.
    const size = Buffer.from(frame);
    size[6] = 45;
    size[14] = (xxh32(size, 4, 14, 0) >>> 8) & 0xff;
    expect(corruptReason(size)).toBe('content size mismatch');
  });

  it('concatenated frames and skippable frames', () => {
    const one = compress(Codec.lz4, Buffer.from('first '));
    const two = compress(Codec.lz4, Buffer.from('second'));
    const skippable = hex('5f2a4d18 02000000 abcd');
    expect(decompress(Codec.lz4, Buffer.concat([skippable, one, skippable, two]), 100).toString()).toBe('first second');
  });

  it('rejects what Kafka rejects and what the spec forbids', () => {
    const descriptor = (flg: number, bd: number): Buffer => {
      const frame = hex('04224d18 0000 00 00000000');
      frame[4] = flg;
      frame[5] = bd;
      frame[6] = (xxh32(frame, 4, 6, 0) >>> 8) & 0xff;
      return frame;
    };
    expect(corruptReason(descriptor(0x40, 0x40))).toMatch(/dependent blocks/);
    expect(corruptReason(descriptor(0x61, 0x40))).toMatch(/dictionary id/);
    expect(corruptReason(descriptor(0x62, 0x40))).toMatch(/reserved FLG/);
    expect(corruptReason(descriptor(0xa0, 0x40))).toMatch(/version/);
    expect(corruptReason(descriptor(0x60, 0x30))).toMatch(/block max size id/);
    expect(corruptReason(descriptor(0x60, 0x41))).toMatch(/reserved BD/);
    expect(corruptReason(hex('04224d18 604083 00000000'))).toBe('header checksum mismatch');
    expect(corruptReason(hex('04224d18 604082 01000100 00 00000000'))).toMatch(/larger than the block max/);
    expect(corruptReason(hex('04224d18 604082'))).toMatch(/truncated block size/);
    expect(corruptReason(hex('04224d18 604082 00000000 04'))).toMatch(/truncated magic/);
    expect(corruptReason(hex('05224d18 604082 00000000'))).toMatch(/bad frame magic/);
    expect(corruptReason(Buffer.alloc(0))).toMatch(/empty/);
  });
});

/** A deliberately simple LZ4 block decoder: byte at a time, no cleverness. */
function referenceDecode(block: Uint8Array): number[] {
  return referenceParse(block).out;
}

/** Decodes and reports where the last match started and how many literals end the block. */
function referenceParse(block: Uint8Array): { out: number[]; lastMatchStart: number; lastLiterals: number } {
  const out: number[] = [];
  let ip = 0;
  let lastMatchStart = -1;
  for (;;) {
    const token = block[ip++]!;
    let literals = token >> 4;
    if (literals === 15) for (let b = 255; b === 255; literals += b) b = block[ip++]!;
    for (let i = 0; i < literals; i++) out.push(block[ip++]!);
    if (ip === block.length) return { out, lastMatchStart, lastLiterals: literals };
    lastMatchStart = out.length;
    const offset = block[ip]! + block[ip + 1]! * 256;
    ip += 2;
    let match = (token & 15) + 4;
    if ((token & 15) === 15) for (let b = 255; b === 255; match += b) b = block[ip++]!;
    for (let i = 0; i < match; i++) out.push(out[out.length - offset]!);
  }
}

/** Encodes sequences by hand; the arbitrary picks offsets within what is produced. */
const arbitraryBlock = fc
  .array(
    fc.record({
      literals: fc.uint8Array({ maxLength: 40 }),
      offsetSeed: fc.nat(),
      match: fc.oneof(fc.integer({ min: 4, max: 40 }), fc.integer({ min: 4, max: 700 })),
    }),
    { minLength: 1, maxLength: 12 },
  )
  .chain((sequences) => fc.uint8Array({ maxLength: 30 }).map((tail) => ({ sequences, tail })))
  .map(({ sequences, tail }) => {
    const bytes: number[] = [];
    let produced = 0;
    const length = (value: number): void => {
      let rest = value;
      while (rest >= 255) {
        bytes.push(255);
        rest -= 255;
      }
      bytes.push(rest);
    };
    for (const { literals, offsetSeed, match } of sequences) {
      const lits = produced + literals.length === 0 ? Uint8Array.of(7) : literals;
      const available = produced + lits.length;
      const offset = 1 + (offsetSeed % Math.min(available, 65_535));
      bytes.push((Math.min(lits.length, 15) << 4) | Math.min(match - 4, 15));
      if (lits.length >= 15) length(lits.length - 15);
      bytes.push(...lits, offset & 0xff, offset >> 8);
      if (match - 4 >= 15) length(match - 4 - 15);
      produced = available + match;
    }
    bytes.push(Math.min(tail.length, 15) << 4);
    if (tail.length >= 15) length(tail.length - 15);
    bytes.push(...tail);
    return Uint8Array.from(bytes);
  });

describe('lz4 block decoder', () => {
  it('agrees with the reference decoder on arbitrary valid blocks (overlapping and long matches)', () => {
    fc.assert(
      fc.property(arbitraryBlock, (block) => {
        const expected = referenceDecode(block);
        const output = new Uint8Array(expected.length + 8);
        const end = lz4DecodeBlock(block, 0, block.length, output, 0, output.length, 0);
        expect(end).toBe(expected.length);
        expect(Array.from(output.subarray(0, end))).toEqual(expected);
        // One byte less room: the output limit, never a write past it.
        if (expected.length > 0) {
          const tight = new Uint8Array(expected.length + 8).fill(0xee);
          expect(lz4DecodeBlock(block, 0, block.length, tight, 0, expected.length - 1, 0)).toBe(LZ4_OUTPUT_LIMIT);
          expect(tight.subarray(expected.length - 1).every((byte) => byte === 0xee)).toBe(true);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('rejects offset 0, offsets before the block start, and blocks ending after a match', () => {
    const output = new Uint8Array(64);
    expect(lz4DecodeBlock(hex('10 61 0000 00'), 0, 5, output, 0, 64, 0)).toBe(LZ4_MALFORMED);
    expect(lz4DecodeBlock(hex('10 61 0200 00'), 0, 5, output, 0, 64, 0)).toBe(LZ4_MALFORMED);
    // The same offset is fine when the floor allows reaching back into earlier output.
    expect(lz4DecodeBlock(hex('10 61 0200 00'), 0, 5, output, 4, 64, 0)).toBe(4 + 1 + 4);
    expect(lz4DecodeBlock(hex('10 61 0100'), 0, 4, output, 0, 64, 0)).toBe(LZ4_MALFORMED);
    expect(lz4DecodeBlock(hex('f0 ff'), 0, 2, output, 0, 64, 0)).toBe(LZ4_MALFORMED);
    expect(lz4DecodeBlock(hex('20 61'), 0, 2, output, 0, 64, 0)).toBe(LZ4_MALFORMED);
    expect(lz4DecodeBlock(hex(''), 0, 0, output, 0, 64, 0)).toBe(LZ4_MALFORMED);
  });
});

describe('lz4 block compressor', () => {
  it('round-trips through the decoder and follows the end-of-block rules', () => {
    const table = new Lz4MatchTable();
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 3000 }),
          fc.array(fc.constantFrom('abc', 'abcd', 'xyzxyzxyz', '\u0000', 'hello '), { maxLength: 2000 }).map((parts) => Buffer.from(parts.join(''))),
        ),
        (input) => {
          const block = new Uint8Array(lz4BlockBound(input.length) + 16);
          const end = lz4CompressBlock(input, 0, input.length, block, 0, table);
          expect(end).toBeLessThanOrEqual(lz4BlockBound(input.length));
          const output = new Uint8Array(input.length);
          expect(lz4DecodeBlock(block, 0, end, output, 0, output.length, 0)).toBe(input.length);
          expect(Buffer.from(output).equals(Buffer.from(input))).toBe(true);
          // The spec's end-of-block rules, which strict decoders rely on: the
          // last match starts at least 12 bytes before the end, and at least
          // 5 literals end the block (or the input is all literals).
          const parsed = referenceParse(block.subarray(0, end));
          expect(parsed.out.length).toBe(input.length);
          if (parsed.lastMatchStart >= 0) {
            expect(parsed.lastMatchStart).toBeLessThanOrEqual(input.length - 12);
            expect(parsed.lastLiterals).toBeGreaterThanOrEqual(5);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('compresses repetitive input well and does not expand random input past the bound', () => {
    const table = new Lz4MatchTable();
    const repetitive = Buffer.from('seglog '.repeat(9000));
    const block = new Uint8Array(lz4BlockBound(repetitive.length));
    expect(lz4CompressBlock(repetitive, 0, repetitive.length, block, 0, table)).toBeLessThan(repetitive.length / 50);
    const random = randomBytes(65_536);
    const room = new Uint8Array(lz4BlockBound(random.length));
    expect(lz4CompressBlock(random, 0, random.length, room, 0, table)).toBeLessThanOrEqual(lz4BlockBound(random.length));
  });
});

describe.skipIf(!hasLz4)('interop with the reference lz4 CLI (skipped: no `lz4` binary on this machine)', () => {
  const payloads = [Buffer.alloc(0), Buffer.from('x'), Buffer.from('seglog '.repeat(30_000)), randomBytes(200_000), Buffer.concat([randomBytes(70_000), Buffer.alloc(300_000, 1)])];

  it('the CLI decodes our frames', () => {
    for (const payload of payloads) {
      expect(execFileSync('lz4', ['-d', '-c', '-q'], { input: compress(Codec.lz4, payload) }).equals(payload)).toBe(true);
    }
  });

  it('the CLI decodes our frames for arbitrary inputs', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 5000 }), fc.array(fc.constantFrom('ab', 'abcabc', 'q', '1234567890'), { maxLength: 3000 }).map((parts) => Buffer.from(parts.join('')))), (payload) => {
        expect(execFileSync('lz4', ['-d', '-c', '-q'], { input: compress(Codec.lz4, payload) }).equals(Buffer.from(payload))).toBe(true);
      }),
      { numRuns: 25 },
    );
  });

  it('we decode the CLI frames for every block size and checksum option', () => {
    const options = [[], ['-B4'], ['-B5', '-BX'], ['-B6', '--no-frame-crc'], ['-B7', '-BX'], ['-1'], ['-9'], ['-12']];
    for (const flags of options) {
      for (const payload of payloads) {
        const frame = execFileSync('lz4', ['-c', '-q', ...flags], { input: payload });
        expect(decompress(Codec.lz4, frame, 1 << 20).equals(payload)).toBe(true);
      }
    }
  });

  it('we reject the CLI dependent-block frames, as Kafka does', () => {
    const frame = execFileSync('lz4', ['-c', '-q', '-B4', '-BD'], { input: Buffer.from('seglog '.repeat(30_000)) });
    expect(corruptReason(frame)).toMatch(/dependent blocks/);
  });
});

describe('lz4 frame decoding presizes its output from the block count', () => {
  // Text that compresses about 2-3x, like the load client's payloads.
  function text(bytes: number, seed: number): Buffer {
    const out = Buffer.allocUnsafe(bytes);
    let x = seed | 1;
    for (let i = 0; i < bytes; i++) {
      x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
      out[i] = 97 + ((x >>> 0) % 8 === 0 ? 26 : (x >>> 0) % 12);
    }
    return out;
  }

  it('a frame of many blocks without a content size decodes into one allocation, exactly sized', () => {
    const input = text(40 * 64 * 1024 - 1234, 7); // 40 blocks, the last partial
    const frame = compress(Codec.lz4, input);
    const before = { ...codecAllocation };
    const output = decompress(Codec.lz4, frame, 64 * 1024 * 1024);
    expect(output.equals(input)).toBe(true);
    expect(codecAllocation.count - before.count).toBe(1);
    expect(codecAllocation.bytes - before.bytes).toBeLessThanOrEqual(input.length + 64 * 1024);
  });

  it('a hostile frame of many tiny blocks cannot make it allocate much more than 8x its input up front', () => {
    // 2000 one-byte compressed blocks (a lone literal each): 10 kB of input claiming 2000 x 64 KiB of blocks.
    const blocks = 2000;
    const frame = Buffer.alloc(7 + blocks * 5 + 4);
    compress(Codec.lz4, Buffer.alloc(0)).copy(frame, 0, 0, 7); // our frame header
    for (let i = 0; i < blocks; i++) {
      frame.writeUInt32LE(1, 7 + i * 5);
      frame[7 + i * 5 + 4] = 0x10; // token: 1 literal, and no literal byte left: malformed
    }
    const before = { ...codecAllocation };
    expect(() => decompress(Codec.lz4, frame, 64 * 1024 * 1024)).toThrow();
    expect(codecAllocation.bytes - before.bytes).toBeLessThanOrEqual(frame.length * 8 + 64 * 1024);
  });
});
