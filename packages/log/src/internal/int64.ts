// int64 at the byte boundary as two 32-bit halves (big-endian, two's
// complement), without BigInt. Values are JS numbers; a value read from disk
// may be outside the safe-integer range (corruption, or a producer id Kafka
// never hands out), so readers return the nearest double and callers that
// need an exact value check Number.isSafeInteger.

import { assert } from '@seglog/common';

const TWO_POW_32 = 0x1_0000_0000;

/** Writes `value` (a safe integer) as a big-endian int64 at `at`. */
export function writeInt64BE(buffer: Buffer, value: number, at: number): void {
  assert(Number.isSafeInteger(value), 'writeInt64BE: value must be a safe integer');
  const high = Math.floor(value / TWO_POW_32);
  const low = value - high * TWO_POW_32;
  buffer.writeInt32BE(high, at);
  buffer.writeUInt32BE(low, at + 4);
}

/** Reads a big-endian int64 at `at`; exact when the value is a safe integer, the nearest double otherwise. */
export function readInt64BE(buffer: Buffer, at: number): number {
  return buffer.readInt32BE(at) * TWO_POW_32 + buffer.readUInt32BE(at + 4);
}
