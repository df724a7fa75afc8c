// Hostile bytes: every single-byte change and every truncation of valid
// batches either parses (validate + iterate) to the identical records or
// throws a typed error — never RangeError/TypeError — and no Buffer larger
// than the configured cap is ever requested.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SeglogError } from '@seglog/common';
import {
  buildBatch, Codec, RecordBatch, splitBatches, validateBatch, validateFollowerBatch, type CodecId, type LogRecord,
} from '../src/index.js';
import { fixCrc, T0, vector } from './helpers.js';

const CAP = 64 * 1024;
const opts = { maxMessageBytes: 1_048_588, maxDecompressedBytes: CAP };

// Largest Buffer requested through the allocation APIs while a check runs.
let largestAlloc = 0;
const spies: { mockRestore(): void }[] = [];
beforeAll(() => {
  for (const name of ['alloc', 'allocUnsafe', 'allocUnsafeSlow'] as const) {
    const original = Buffer[name].bind(Buffer) as (size: number, ...rest: unknown[]) => Buffer;
    spies.push(vi.spyOn(Buffer, name).mockImplementation(((size: number, ...rest: unknown[]) => {
      if (size > largestAlloc) largestAlloc = size;
      return original(size, ...rest);
    }) as never));
  }
});
afterAll(() => { for (const s of spies) s.mockRestore(); });

type Outcome = { ok: true; records: string } | { ok: false; code: string };

function show(records: LogRecord[]): string {
  return JSON.stringify(records.map((r) => [r.offset, r.timestamp, r.sequence, r.key?.toString('hex') ?? null,
    r.value?.toString('hex') ?? null, r.headers.map((h) => [h.key, h.value?.toString('hex') ?? null])]));
}

/** validate + iterate; any non-typed error fails the test. */
function leaderOutcome(buf: Buffer): Outcome {
  largestAlloc = 0;
  try {
    const summary = validateBatch(buf, opts);
    return { ok: true, records: show(summary.batch.toRecords(opts)) };
  } catch (e) {
    if (!(e instanceof SeglogError)) throw new Error(`untyped error: ${String(e)}`, { cause: e });
    return { ok: false, code: e.code };
  } finally {
    expect(largestAlloc).toBeLessThanOrEqual(CAP);
  }
}

/** The reader path (file data, no leader rules): frame, iterate without a CRC check. */
function readerOutcome(buf: Buffer): Outcome {
  largestAlloc = 0;
  try {
    const batches = splitBatches(buf);
    return { ok: true, records: batches.map((b) => show(b.toRecords(opts))).join('|') };
  } catch (e) {
    if (!(e instanceof SeglogError)) throw new Error(`untyped error: ${String(e)}`, { cause: e });
    return { ok: false, code: e.code };
  } finally {
    expect(largestAlloc).toBeLessThanOrEqual(CAP);
  }
}

function withByte(buf: Buffer, position: number, value: number): Buffer {
  const copy = Buffer.from(buf);
  copy[position] = value;
  return copy;
}

// PLE bytes 12..15 are outside the CRC and unchecked from producers; every
// other single-byte change must be rejected by the leader.
const PLE = new Set([12, 13, 14, 15]);

const small: [string, Buffer][] = [
  ['single-record', vector('single-record')],
  ['three-records-with-header', vector('three-records-with-header')],
  ['idempotent', vector('idempotent')],
];

describe('every single-byte change (exhaustive)', () => {
  it.each(small)('%s: leader validation rejects it with a typed error or yields identical records', (_n, good) => {
    const original = leaderOutcome(good);
    expect(original.ok).toBe(true);
    let accepted = 0;
    for (let p = 0; p < good.length; p++) {
      for (let v = 0; v < 256; v++) {
        if (v === good[p]) continue;
        const outcome = leaderOutcome(withByte(good, p, v));
        if (outcome.ok) {
          expect(outcome.records).toBe((original as { records: string }).records);
          expect(PLE.has(p), `accepted a change at byte ${p}`).toBe(true);
          accepted++;
        }
      }
    }
    expect(accepted).toBe(4 * 255);
  });

  it.each(small)('%s: with the CRC recomputed, the parser still only throws typed errors', (_n, good) => {
    const codes = new Set<string>();
    for (let p = 0; p < good.length; p++) {
      if (p >= 17 && p < 21) continue; // the CRC itself
      for (let v = 0; v < 256; v++) {
        if (v === good[p]) continue;
        const mutated = fixCrc(withByte(good, p, v));
        const leader = leaderOutcome(mutated);
        const reader = readerOutcome(mutated);
        if (!leader.ok) codes.add(leader.code);
        if (!reader.ok) codes.add(reader.code);
      }
    }
    // The mutations reach deep into the parser, not just the framing.
    expect([...codes].sort()).toEqual(expect.arrayContaining([
      'SEGLOG_ERR_RECORDS_CORRUPT', 'SEGLOG_ERR_RECORDS_INVALID_RECORD', 'SEGLOG_ERR_RECORDS_TOO_LARGE',
    ]));
  });

  it.each(small)('%s: the reader path is unaffected by changes outside the CRC only', (_n, good) => {
    const original = readerOutcome(good);
    for (let p = 0; p < good.length; p++) {
      for (const v of [0x00, 0x01, 0x7f, 0x80, 0xff, good[p]! ^ 0x10]) {
        if (v === good[p]) continue;
        const mutated = withByte(good, p, v);
        readerOutcome(mutated); // typed errors only
        let crcOk = false;
        try { crcOk = validateFollowerBatch(mutated).isValid(); } catch (e) { expect(e).toBeInstanceOf(SeglogError); }
        if (crcOk && p >= 16) expect(readerOutcome(mutated)).toEqual(original);
      }
    }
  });
});

describe('every truncation (exhaustive)', () => {
  it.each(small)('%s: every prefix is rejected by the leader and is end-of-data to a file reader', (_n, good) => {
    for (let length = 0; length < good.length; length++) {
      const prefix = Buffer.from(good.subarray(0, length));
      const leader = leaderOutcome(prefix);
      expect(leader.ok).toBe(false);
      expect(readerOutcome(prefix)).toEqual({ ok: true, records: '' });
    }
  });
  it.each(small)('%s: a batch whose length field shrinks (CRC fixed) is rejected with a typed error', (_n, good) => {
    for (let length = 14; length < good.length - 12; length++) {
      const cut = Buffer.from(good.subarray(0, length + 12));
      cut.writeInt32BE(length, 8);
      if (length + 12 >= 61) fixCrc(cut);
      const outcome = leaderOutcome(cut);
      expect(outcome.ok).toBe(false);
      const read = readerOutcome(cut);
      if (length + 12 < 61) expect(read).toEqual({ ok: false, code: 'SEGLOG_ERR_RECORDS_CORRUPT' });
    }
  });
});

const codecsImplemented = ((): boolean => {
  try {
    buildBatch({ compression: Codec.gzip, records: [{ value: 'x', timestamp: T0 }] });
    return true;
  } catch (e) {
    if (String(e).includes('not implemented')) return false;
    throw e;
  }
})();

const arbBatch = (codec: CodecId): fc.Arbitrary<Buffer> => fc.record({
  records: fc.array(fc.record({
    key: fc.option(fc.uint8Array({ maxLength: 12 }).map((u) => Buffer.from(u)), { nil: null }),
    value: fc.option(fc.uint8Array({ maxLength: 60 }).map((u) => Buffer.from(u)), { nil: null }),
    headers: fc.array(fc.record({ key: fc.string({ maxLength: 4 }), value: fc.option(fc.uint8Array({ maxLength: 6 }).map((u) => Buffer.from(u)), { nil: null }) }), { maxLength: 2 }),
    timestampDelta: fc.integer({ min: -100_000, max: 100_000 }),
  }), { minLength: 1, maxLength: 6 }),
  producerId: fc.integer({ min: -1, max: 1000 }),
}).map(({ records, producerId }) => buildBatch({
  records, baseTimestamp: T0, compression: codec, producerId, producerEpoch: producerId < 0 ? -1 : 0, baseSequence: producerId < 0 ? -1 : 5,
}));

const mutation = fc.record({
  edits: fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 4 }),
  cut: fc.option(fc.nat(), { nil: undefined }),
  fixCrc: fc.boolean(),
});

describe('random batches, random mutations', () => {
  const codecs = Object.entries(Codec) as [string, CodecId][];
  it.each(codecs)('codec %s', (_name, codec) => {
    if (codec !== Codec.none && !codecsImplemented) return; // runs once compress/decompress land
    fc.assert(fc.property(arbBatch(codec), mutation, (good, m) => {
      const original = leaderOutcome(good);
      expect(original.ok).toBe(true);
      let bad = Buffer.from(good);
      for (const e of m.edits) bad[e.at % bad.length] = e.value;
      if (m.cut !== undefined) bad = bad.subarray(0, m.cut % (bad.length + 1));
      if (m.fixCrc && bad.length >= 61) {
        const declared = bad.readInt32BE(8) + 12;
        if (declared >= 61 && declared <= bad.length) fixCrc(bad);
      }
      const leader = leaderOutcome(bad);
      readerOutcome(bad);
      if (leader.ok && !m.fixCrc) {
        // Without a CRC fix-up only leader-epoch edits can pass.
        expect(leader.records).toBe((original as { records: string }).records);
      }
    }), { numRuns: codec === Codec.none ? 2000 : 400 });
  });
});

describe('decompression bombs', () => {
  it('a compressed batch whose records exceed the cap is rejected without allocating past it', () => {
    if (!codecsImplemented) return; // runs once compress/decompress land
    for (const codec of [Codec.gzip, Codec.snappy, Codec.lz4, Codec.zstd]) {
      const bomb = buildBatch({ compression: codec, records: [{ value: Buffer.alloc(4 * CAP), timestamp: T0 }] });
      const outcome = leaderOutcome(bomb);
      expect(outcome).toEqual({ ok: false, code: 'SEGLOG_ERR_RECORDS_DECOMPRESSION_LIMIT' });
      expect(readerOutcome(bomb)).toEqual({ ok: false, code: 'SEGLOG_ERR_RECORDS_DECOMPRESSION_LIMIT' });
      const fits = new RecordBatch(bomb).toRecords({ maxDecompressedBytes: 8 * CAP });
      expect(fits[0]!.value!.length).toBe(4 * CAP);
    }
  });
});
