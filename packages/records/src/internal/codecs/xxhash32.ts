// xxHash32 (Yann Collet's XXH32, spec: github.com/Cyan4973/xxHash doc/xxhash_spec.md),
// the checksum of the LZ4 frame format: the header checksum byte is
// (xxh32(descriptor, 0) >>> 8) & 0xff, block and content checksums are the full
// 32 bits, little-endian. Pure TypeScript; all arithmetic is on int32 with
// Math.imul, results are returned unsigned.

import { assert } from '@seglog/common';

const PRIME1 = 0x9e3779b1 | 0;
const PRIME2 = 0x85ebca77 | 0;
const PRIME3 = 0xc2b2ae3d | 0;
const PRIME4 = 0x27d4eb2f | 0;
const PRIME5 = 0x165667b1 | 0;

function read32(bytes: Uint8Array, at: number): number {
  return bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24);
}

function round(acc: number, lane: number): number {
  const sum = (acc + Math.imul(lane, PRIME2)) | 0;
  return Math.imul((sum << 13) | (sum >>> 19), PRIME1);
}

/** xxh32 of bytes[start, end) with `seed`; returns an unsigned 32-bit value. */
export function xxh32(bytes: Uint8Array, start: number, end: number, seed: number): number {
  assert(start >= 0 && start <= end, 'xxh32: bad start');
  assert(end <= bytes.length, 'xxh32: end beyond input');
  const length = end - start;
  let at = start;
  let hash: number;
  if (length >= 16) {
    let v1 = (seed + PRIME1 + PRIME2) | 0;
    let v2 = (seed + PRIME2) | 0;
    let v3 = seed | 0;
    let v4 = (seed - PRIME1) | 0;
    const limit = end - 16;
    while (at <= limit) {
      v1 = round(v1, read32(bytes, at));
      v2 = round(v2, read32(bytes, at + 4));
      v3 = round(v3, read32(bytes, at + 8));
      v4 = round(v4, read32(bytes, at + 12));
      at += 16;
    }
    hash = (((v1 << 1) | (v1 >>> 31)) + ((v2 << 7) | (v2 >>> 25)) + ((v3 << 12) | (v3 >>> 20)) + ((v4 << 18) | (v4 >>> 14))) | 0;
  } else {
    hash = (seed + PRIME5) | 0;
  }
  hash = (hash + length) | 0;
  while (at + 4 <= end) {
    hash = (hash + Math.imul(read32(bytes, at), PRIME3)) | 0;
    hash = Math.imul((hash << 17) | (hash >>> 15), PRIME4);
    at += 4;
  }
  while (at < end) {
    hash = (hash + Math.imul(bytes[at]!, PRIME5)) | 0;
    hash = Math.imul((hash << 11) | (hash >>> 21), PRIME1);
    at += 1;
  }
  hash ^= hash >>> 15;
  hash = Math.imul(hash, PRIME2);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, PRIME3);
  hash ^= hash >>> 16;
  return hash >>> 0;
}
