// CRC-32C (Castagnoli: reflected polynomial 0x82F63B78, init and final XOR
// 0xFFFFFFFF), the checksum of record batches (bytes [21, end)) and producer
// snapshots. Check value: crc32c('123456789') = 0xE3069283.
//
// One function for every caller. It uses the native addon's (hardware) CRC
// when @seglog/native loaded one, else crc-32's slice-by-16 JavaScript table
// implementation. Both continue from `seed` (a previous unsigned result, 0 for
// a fresh CRC), so crc32c(b, crc32c(a)) === crc32c(a ++ b).
import jsCrc32c from 'crc-32/crc32c.js';
import { crc32c as nativeCrc32c } from '@seglog/native';

export function crc32c(buf: Uint8Array, seed = 0): number {
  // Read the (live) native binding on every call: the loader may install it
  // after this module was evaluated.
  const native = nativeCrc32c;
  if (native !== null) return native(buf, seed);
  // crc-32 works on signed 32-bit values: pass the seed as int32, return unsigned.
  return jsCrc32c.buf(buf, seed | 0) >>> 0;
}
