// int64 fields at the byte boundary, as two 32-bit halves (no BigInt on hot
// paths). seglog keeps offsets, timestamps and producer ids as safe integers:
// a stored value outside ±(2^53 - 1) is rejected with a typed error, never
// rounded.
import { assert } from '@seglog/common';
import { RecordsError } from '../records-error.js';

const TWO_POW_32 = 0x1_0000_0000;

/** Reads the big-endian int64 at `position`; throws if it is not a safe integer. */
export function readInt64(buf: Buffer, position: number, field: string): number {
  const hi = buf.readInt32BE(position);
  const lo = buf.readUInt32BE(position + 4);
  const value = hi * TWO_POW_32 + lo;
  if (!Number.isSafeInteger(value)) throw unsafeInt64(field, position, hi, lo);
  return value;
}

/** Writes a safe integer as a big-endian int64 (two's complement). */
export function writeInt64(buf: Buffer, position: number, value: number): void {
  assert(Number.isSafeInteger(value), 'int64 value must be a safe integer');
  const hi = Math.floor(value / TWO_POW_32);
  const lo = value - hi * TWO_POW_32;
  buf.writeInt32BE(hi, position);
  buf.writeUInt32BE(lo, position + 4);
}

function unsafeInt64(field: string, position: number, hi: number, lo: number): RecordsError {
  const hex = (hi >>> 0).toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
  return new RecordsError('SEGLOG_ERR_RECORDS_INVALID_RECORD', 'unsafe-integer',
    `${field} 0x${hex} is outside the safe integer range`, { field, position, actual: `0x${hex}` });
}
