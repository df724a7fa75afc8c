// Producer-snapshot parsing (.snapshot files are untrusted input, reliability
// §4.3): a valid encodeSnapshot() of random entries, then byte edits (half
// the cases re-sign the CRC so the edit reaches the field checks), truncation
// or extension, or random bytes. decodeSnapshot must return entries that
// re-encode to exactly the input bytes, or throw SEGLOG_ERR_SNAPSHOT_CORRUPT —
// nothing else (no RangeError, no assertion, no other code).
import fc from 'fast-check';
import { isSeglogError } from '@seglog/common';
import { decodeSnapshot, encodeSnapshot } from '@seglog/log';
import type { ProducerSnapshotEntry } from '@seglog/log';
import { crc32c } from '@seglog/records';
import type { FuzzTarget } from '../lib/target.js';

const entryArb = fc.record({
  producerId: fc.integer({ min: 0, max: 2 ** 40 }),
  producerEpoch: fc.integer({ min: 0, max: 32767 }),
  lastSequence: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
  lastOffset: fc.integer({ min: 1000, max: 2 ** 40 }),
  offsetDelta: fc.integer({ min: 0, max: 999 }),
  timestamp: fc.integer({ min: 0, max: 2 ** 45 }),
  coordinatorEpoch: fc.integer({ min: -1, max: 1000 }),
  currentTxnFirstOffset: fc.integer({ min: -1, max: 2 ** 40 }),
});
const editArb = fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { maxLength: 6 });

export const target: FuzzTarget = {
  description: 'decodeSnapshot on mutated, resized and random snapshot bytes',
  property: () =>
    fc.property(
      fc.uniqueArray(entryArb, { maxLength: 6, selector: (e) => e.producerId }), editArb, fc.boolean(),
      fc.option(fc.integer({ min: -20, max: 60 }), { nil: null }), fc.option(fc.uint8Array({ maxLength: 300 }), { nil: null, freq: 5 }),
      (entries, edits, resign, resize, garbage) => {
        let bytes: Buffer;
        if (garbage !== null) bytes = Buffer.from(garbage);
        else {
          bytes = Buffer.from(encodeSnapshot(entries as ProducerSnapshotEntry[]));
          for (const e of edits) bytes[e.at % bytes.length] = e.value;
          if (resize !== null) bytes = resize < 0 ? bytes.subarray(0, Math.max(0, bytes.length + resize)) : Buffer.concat([bytes, Buffer.alloc(resize, 0x5a)]);
          if (resign && bytes.length >= 10) bytes.writeUInt32BE(crc32c(bytes.subarray(6)), 2);
        }
        let decoded: ProducerSnapshotEntry[];
        try {
          decoded = decodeSnapshot(bytes, '/fuzz/00000000000000000000.snapshot');
        } catch (error) {
          if (!isSeglogError(error) || error.code !== 'SEGLOG_ERR_SNAPSHOT_CORRUPT') throw error;
          return;
        }
        if (!encodeSnapshot(decoded).equals(bytes)) throw new Error(`decoded ${decoded.length} entries that do not re-encode to the input`);
      }),
};
