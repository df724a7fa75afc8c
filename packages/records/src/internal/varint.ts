// Zig-zag varints as Kafka writes them inside records (reference/kafka-storage.md §3):
// zig-zag, then unsigned LEB128 (7 bits per byte, least significant first,
// 0x80 = more bytes follow). varint: int32, at most 5 bytes. varlong: int64,
// at most 10 bytes; seglog keeps numbers safe integers, so a varlong is
// encoded from and decoded to a JS number with |n| <= 2^53 - 1, without BigInt.
//
// Writers are used by the builder (trusted input, asserted). Strict decoding
// lives in byte-reader.ts.
import { assert } from '@seglog/common';

export function varintSize(n: number): number {
  // Zig-zag as uint32; (n << 1) ^ (n >> 31) wraps exactly like Java's int.
  const u = ((n << 1) ^ (n >> 31)) >>> 0;
  if (u < 0x80) return 1;
  if (u < 0x4000) return 2;
  if (u < 0x200000) return 3;
  if (u < 0x10000000) return 4;
  return 5;
}

export function writeVarint(buf: Uint8Array, position: number, n: number): number {
  assert(Number.isInteger(n) && n >= -0x80000000 && n <= 0x7fffffff, 'varint out of int32 range');
  let u = ((n << 1) ^ (n >> 31)) >>> 0;
  let p = position;
  while (u >= 0x80) {
    buf[p++] = (u & 0x7f) | 0x80;
    u >>>= 7;
  }
  buf[p++] = u;
  return p;
}

/**
 * writeVarint without the range assert, for values the caller has already
 * checked (the builder's sizing pass) or that are int32 by construction
 * (lengths of buffers under 2 GiB). The writing pass of a 100-record batch
 * calls it ~400 times.
 */
export function putVarint(buf: Uint8Array, position: number, n: number): number {
  let u = ((n << 1) ^ (n >> 31)) >>> 0;
  let p = position;
  while (u >= 0x80) {
    buf[p++] = (u & 0x7f) | 0x80;
    u >>>= 7;
  }
  buf[p++] = u;
  return p;
}

// A varlong of a safe integer n: zig-zag u = 2v + s where s = sign bit and
// v = n (n >= 0) or -n - 1 (n < 0). v < 2^53 is exact in a double, while u
// may need 54 bits, so u is emitted as (s, then v in 6-bit + 7-bit groups).

export function varlongSize(n: number): number {
  assert(Number.isSafeInteger(n), 'varlong must be a safe integer');
  let v = n >= 0 ? n : -n - 1;
  let size = 1;
  if (v < 64) return size;
  v = Math.floor(v / 64);
  while (v > 0) {
    size++;
    v = Math.floor(v / 128);
  }
  return size;
}

export function writeVarlong(buf: Uint8Array, position: number, n: number): number {
  assert(Number.isSafeInteger(n), 'varlong must be a safe integer');
  // The common case, |n| < 64 (timestamp deltas of one batch): one byte.
  if (n >= 0 && n < 64) {
    buf[position] = n * 2;
    return position + 1;
  }
  const sign = n < 0 ? 1 : 0;
  let v = n >= 0 ? n : -n - 1;
  let p = position;
  const first = ((v % 64) * 2) + sign;
  v = Math.floor(v / 64);
  if (v === 0) {
    buf[p++] = first;
    return p;
  }
  buf[p++] = first | 0x80;
  while (v >= 128) {
    buf[p++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  buf[p++] = v;
  return p;
}
