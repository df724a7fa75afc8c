// CRC-32C: the addon against crc-32/crc32c.js (the reference the records
// package falls back to), known vectors, hardware/software agreement and seed
// chaining, over random sizes up to 1 MiB, random seeds and alignments.
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capabilities, crc32c } from '../src/index.js';
import { loadNative } from '../src/internal/loader.js';
import { patternBytes } from './helpers.js';

// crc-32 is a dependency of @seglog/records; resolve it from there.
const requireFromRecords = createRequire(new URL('../../records/package.json', import.meta.url));
const reference = requireFromRecords('crc-32/crc32c') as { buf(data: Uint8Array, seed?: number): number };
const referenceCrc = (data: Uint8Array, seed: number): number => reference.buf(data, seed | 0) >>> 0;

const raw = loadNative({ env: {} }).binding;
const native = process.env['SEGLOG_NATIVE'] === '0' ? describe.skip : describe;

// Check values: "123456789" and RFC 3720 B.4 (iSCSI) patterns.
const VECTORS: readonly (readonly [string, Uint8Array, number])[] = [
  ['123456789', Buffer.from('123456789'), 0xe3069283],
  ['empty', new Uint8Array(0), 0],
  ['32 x 0x00', new Uint8Array(32), 0x8a9136aa],
  ['32 x 0xff', new Uint8Array(32).fill(0xff), 0x62a8ab43],
  ['0..31', Uint8Array.from({ length: 32 }, (_, i) => i), 0x46dd794e],
  ['31..0', Uint8Array.from({ length: 32 }, (_, i) => 31 - i), 0x113fdb5c],
  ['"a"', Buffer.from('a'), 0xc1d04330],
];

// One 1 MiB + 64 pool; properties take views of it (sizes 0..1 MiB, start 0..63).
const POOL = patternBytes((1 << 20) + 64, 0xc0ffee);

const regionArb = fc.record({
  size: fc.oneof(fc.integer({ min: 0, max: 1 << 20 }), fc.integer({ min: 0, max: 2048 })),
  start: fc.integer({ min: 0, max: 63 }),
  seed: fc.integer({ min: 0, max: 0xffffffff }),
});

native('crc32c (native addon)', () => {
  it('is loaded (build the addon: node scripts/install.cjs)', () => {
    expect(capabilities.reason).toBeNull();
    expect(crc32c).not.toBeNull();
    expect(raw).not.toBeNull();
  });

  it.each(VECTORS)('matches the check value for %s', (_name, input, expected) => {
    expect(crc32c!(input, 0)).toBe(expected);
    expect(raw!.crc32cSoftware(input, 0)).toBe(expected);
    if (raw!.crc32cHardwareAvailable) expect(raw!.crc32cHardware(input, 0)).toBe(expected);
    expect(referenceCrc(input, 0)).toBe(expected);
  });

  it('equals crc-32/crc32c.js over random regions, seeds and alignments', () => {
    fc.assert(fc.property(regionArb, ({ size, start, seed }) => {
      const view = POOL.subarray(start, start + size);
      expect(crc32c!(view, seed)).toBe(referenceCrc(view, seed));
    }), { numRuns: 60 });
  });

  it('hardware and software paths agree on every size around the interleave block boundaries', () => {
    if (!raw!.crc32cHardwareAvailable) return; // the CPU has no SSE4.2: software is the only path
    expect(capabilities.crc32cHardware).toBe(true);
    const edges = [0, 1, 7, 8, 9, 767, 768, 769, 24575, 24576, 24577, 2 * 24576 + 768 + 5];
    for (const size of edges) {
      for (let start = 0; start < 8; start++) {
        const view = POOL.subarray(start, start + size);
        expect(raw!.crc32cHardware(view, 0xdeadbeef)).toBe(raw!.crc32cSoftware(view, 0xdeadbeef));
      }
    }
    fc.assert(fc.property(regionArb, ({ size, start, seed }) => {
      const view = POOL.subarray(start, start + size);
      expect(raw!.crc32cHardware(view, seed)).toBe(raw!.crc32cSoftware(view, seed));
    }), { numRuns: 60 });
  });

  it('chains through the seed: crc(b, crc(a)) == crc(a ++ b)', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 200_000 }), fc.integer({ min: 0, max: 200_000 }), (a, b) => {
      const [lo, hi] = a <= b ? [a, b] : [b, a];
      const whole = POOL.subarray(0, hi);
      expect(crc32c!(whole.subarray(lo), crc32c!(whole.subarray(0, lo), 0))).toBe(crc32c!(whole, 0));
      expect(raw!.crc32cSoftware(whole.subarray(lo), raw!.crc32cSoftware(whole.subarray(0, lo), 0)))
        .toBe(crc32c!(whole, 0));
    }), { numRuns: 40 });
  });

  it('returns unsigned values and accepts the signed results of crc-32 as seeds', () => {
    const input = Buffer.from('123456789');
    const signed = reference.buf(input.subarray(0, 4), 0); // crc-32 returns int32
    const fromSigned = crc32c!(input.subarray(4), signed);
    expect(fromSigned).toBe(0xe3069283);
    for (let i = 0; i < 200; i++) {
      const value = crc32c!(POOL.subarray(i, i + 100), i * 0x01010101);
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThanOrEqual(0xffffffff);
      expect(Number.isInteger(value)).toBe(true);
    }
  });

  it('hashes exactly the view of a Uint8Array, not its whole ArrayBuffer', () => {
    const backing = new Uint8Array(64).fill(0x55);
    backing.set(Buffer.from('123456789'), 10);
    expect(crc32c!(backing.subarray(10, 19), 0)).toBe(0xe3069283);
  });

  it('rejects non-Uint8Array input and a missing seed with a TypeError, without crashing', () => {
    const fn = crc32c! as unknown as (...args: unknown[]) => number;
    expect(() => fn('123456789', 0)).toThrow(TypeError);
    expect(() => fn(new Uint16Array(4), 0)).toThrow(TypeError);
    expect(() => fn(new ArrayBuffer(4), 0)).toThrow(TypeError);
    expect(() => fn(Buffer.from('x'))).toThrow(TypeError);
    expect(() => fn(Buffer.from('x'), '0')).toThrow(TypeError);
  });
});
