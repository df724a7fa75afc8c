// Canary: a varint decoder with a deliberate bug (it accepts a 6-byte
// varint). The property says decoding never reads more than 5 bytes, so this
// target must fail; if it ever passes, the fuzz runner is broken.
import fc from 'fast-check';
import type { FuzzTarget } from '../lib/target.js';

function brokenVarintLength(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length && i < 6 && (bytes[i]! & 0x80) !== 0) i++;
  return i + 1;
}

export const target: FuzzTarget = {
  description: 'canary: a broken varint reader that must be caught',
  canary: true,
  property: () =>
    fc.property(fc.uint8Array({ minLength: 0, maxLength: 8 }), (bytes) => brokenVarintLength(bytes) <= 5),
};
