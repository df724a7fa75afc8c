import fc from 'fast-check';
import { SimIo } from '@seglog/io';
import { beforeEach, describe, expect, it } from 'vitest';
import { TimeIndex } from '../src/segment/time-index.js';
import type { TimestampOffset } from '../src/segment/time-index.js';
import { thrown, vector } from './helpers.js';

const DIR = '/data/t-0';
const PATH = `${DIR}/00000000000000000100.timeindex`;
const T0 = 1_700_000_000_000;

async function newIo(): Promise<SimIo> {
  const io = new SimIo();
  await io.mkdir(DIR, { recursive: true });
  return io;
}

describe('TimeIndex', () => {
  let io: SimIo;
  beforeEach(async () => {
    io = await newIo();
  });

  it('reproduces the fixture entry byte for byte (base 100, (T0, offset 105))', async () => {
    const index = await TimeIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 1200 });
    index.maybeAppend(T0, 105);
    await index.close();
    expect((await io.readFile(PATH)).toString('hex')).toBe(vector('.timeindex').hex);
  });

  it('preallocates to segmentIndexBytes rounded down to 12 and keeps one slot for the roll entry', async () => {
    const index = await TimeIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 40 });
    expect(index.maxEntries).toBe(3);
    expect((await io.stat(PATH)).size).toBe(36);
    index.maybeAppend(10, 100);
    expect(index.isFull()).toBe(false);
    index.maybeAppend(20, 101);
    expect(index.isFull()).toBe(true);
    expect(thrown(() => index.maybeAppend(30, 102)).code).toBe('SEGLOG_ERR_INDEX_FULL');
    index.maybeAppend(30, 102, true);
    expect(index.entries).toBe(3);
    // An entry equal to the last is ignored even when no slot is left.
    index.maybeAppend(30, 102, true);
    expect(thrown(() => index.maybeAppend(40, 103, true)).code).toBe('SEGLOG_ERR_INDEX_FULL');
    await index.close();
    expect((await io.stat(PATH)).size).toBe(36);
  });

  it('appends only increasing timestamps with typed errors for going back', async () => {
    const index = await TimeIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 1200 });
    expect(index.lastEntry()).toEqual({ timestamp: -1, offset: 100 });
    index.maybeAppend(-1, 100); // not above the empty index's (-1, base): ignored
    index.maybeAppend(-5, 100);
    expect(index.entries).toBe(0);
    index.maybeAppend(T0, 105);
    index.maybeAppend(T0, 105); // equal to the last entry: ignored
    index.maybeAppend(T0, 107); // same timestamp: ignored
    expect(index.entries).toBe(1);
    expect(thrown(() => index.maybeAppend(T0 + 1, 104)).code).toBe('SEGLOG_ERR_INDEX_INVALID_OFFSET');
    expect(thrown(() => index.maybeAppend(T0 - 1, 106)).code).toBe('SEGLOG_ERR_INDEX_INVALID_TIMESTAMP');
    index.maybeAppend(T0 + 5, 105); // a higher timestamp at the same offset is allowed
    expect(index.lastEntry()).toEqual({ timestamp: T0 + 5, offset: 105 });
    expect(thrown(() => index.maybeAppend(T0 + 10, 100 + 2 ** 31)).code).toBe('SEGLOG_ERR_INDEX_OFFSET_OVERFLOW');
    const fresh = await TimeIndex.open(io, `${DIR}/x.timeindex`, { baseOffset: 100, maxIndexBytes: 1200 });
    expect(thrown(() => fresh.maybeAppend(5, 99)).code).toBe('SEGLOG_ERR_INDEX_OFFSET_OVERFLOW');
  });

  it('looks up the largest entry with timestamp ≤ target, (-1, baseOffset) when none', async () => {
    const index = await TimeIndex.open(io, PATH, { baseOffset: 40, maxIndexBytes: 1200 });
    expect(index.lookup(T0)).toEqual({ timestamp: -1, offset: 40 });
    for (let i = 41; i < 50; i += 2) index.maybeAppend(10 * i, i);
    expect(index.lookup(409)).toEqual({ timestamp: -1, offset: 40 });
    expect(index.lookup(410)).toEqual({ timestamp: 410, offset: 41 });
    expect(index.lookup(429)).toEqual({ timestamp: 410, offset: 41 });
    expect(index.lookup(430)).toEqual({ timestamp: 430, offset: 43 });
    expect(index.lookup(10_000)).toEqual({ timestamp: 490, offset: 49 });
  });

  it('truncates on the offset column', async () => {
    const index = await TimeIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 1200 });
    for (let i = 1; i <= 5; i++) index.maybeAppend(T0 + i, 100 + 10 * i);
    index.truncateTo(130);
    expect(index.lastEntry()).toEqual({ timestamp: T0 + 2, offset: 120 });
    index.truncateTo(115);
    expect(index.entries).toBe(1);
    index.truncateTo(100);
    expect(index.entries).toBe(0);
    expect(index.lastEntry()).toEqual({ timestamp: -1, offset: 100 });
  });

  it('round-trips negative and large timestamps through the two 32-bit halves', async () => {
    const index = await TimeIndex.open(io, PATH, { baseOffset: 0, maxIndexBytes: 1200 });
    index.maybeAppend(0, 0);
    index.maybeAppend(2 ** 32 - 1, 1);
    index.maybeAppend(2 ** 32, 2);
    index.maybeAppend(Number.MAX_SAFE_INTEGER, 3);
    await index.close();
    const bytes = await io.readFile(PATH);
    expect(bytes.subarray(12, 20).toString('hex')).toBe('00000000ffffffff');
    expect(bytes.subarray(24, 32).toString('hex')).toBe('0000000100000000');
    expect(bytes.subarray(36, 44).toString('hex')).toBe('001fffffffffffff');
    const reopened = await TimeIndex.open(io, PATH, { baseOffset: 0, maxIndexBytes: 1200 });
    expect(reopened.entry(3)).toEqual({ timestamp: Number.MAX_SAFE_INTEGER, offset: 3 });
    await reopened.close();
  });

  it('sanity-checks order, base offset, length and unsafe timestamps', async () => {
    const write = async (hex: string): Promise<TimeIndex> => {
      const file = await io.open(PATH, { create: true });
      await file.truncate(0);
      await file.pwrite(Buffer.from(hex, 'hex'), 0);
      await file.close();
      return TimeIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 1200 });
    };
    const ok = await write('000000000000000a00000001' + '000000000000001400000002');
    ok.sanityCheck();
    await ok.close();
    const backwards = await write('000000000000001400000001' + '000000000000000a00000002');
    expect(thrown(() => backwards.sanityCheck()).code).toBe('SEGLOG_ERR_INDEX_CORRUPT');
    await backwards.close();
    const belowBase = await write('000000000000000affffffff');
    expect(thrown(() => belowBase.sanityCheck()).code).toBe('SEGLOG_ERR_INDEX_CORRUPT');
    await belowBase.close();
    const ragged = await write('000000000000000a0000000100');
    expect(ragged.entries).toBe(1);
    expect(thrown(() => ragged.sanityCheck()).code).toBe('SEGLOG_ERR_INDEX_CORRUPT');
    await ragged.close();
    const unsafe = await write('7fffffffffffffff00000001');
    expect(thrown(() => unsafe.sanityCheck()).code).toBe('SEGLOG_ERR_INDEX_CORRUPT');
    expect(thrown(() => unsafe.lastEntry()).code).toBe('SEGLOG_ERR_INDEX_CORRUPT');
    await unsafe.close();
  });

  it('reopens with entries = length / 12 and resizes back', async () => {
    const index = await TimeIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 120 });
    index.maybeAppend(T0, 101);
    index.maybeAppend(T0 + 1, 102);
    await index.close();
    const reopened = await TimeIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 120 });
    expect(reopened.entries).toBe(2);
    expect(reopened.maxEntries).toBe(2);
    expect(reopened.isFull()).toBe(true);
    await reopened.resize(120);
    expect(reopened.maxEntries).toBe(10);
    expect(reopened.isFull()).toBe(false);
    await reopened.close();
  });
});

type Op =
  | { readonly kind: 'append'; readonly timestampDelta: number; readonly offsetDelta: number; readonly skipFullCheck: boolean }
  | { readonly kind: 'truncateTo'; readonly back: number }
  | { readonly kind: 'reopen' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('append' as const), timestampDelta: fc.integer({ min: -3, max: 1000 }), offsetDelta: fc.integer({ min: -2, max: 50 }), skipFullCheck: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncateTo' as const), back: fc.integer({ min: -5, max: 100 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reopen' as const) }) },
);

describe('TimeIndex model', () => {
  it('matches a sorted array under appends (including ignored and rejected ones), truncations and reopens', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 40 }), fc.integer({ min: -1, max: 2 ** 45 }), fc.array(opArb, { maxLength: 60 }), fc.array(fc.integer({ min: -100, max: 20_000 }), { maxLength: 8 }), async (base, t0, ops, probes) => {
        const io = await newIo();
        const maxIndexBytes = 12 * 30;
        let index = await TimeIndex.open(io, PATH, { baseOffset: base, maxIndexBytes });
        let model: TimestampOffset[] = [];
        const lastOf = (): TimestampOffset => model[model.length - 1] ?? { timestamp: -1, offset: base };
        for (const op of ops) {
          if (op.kind === 'append') {
            const last = lastOf();
            const timestamp = (model.length === 0 ? t0 : last.timestamp) + op.timestampDelta;
            const offset = last.offset + op.offsetDelta;
            const full = op.skipFullCheck ? false : model.length >= index.maxEntries - 1;
            const run = (): void => index.maybeAppend(timestamp, offset, op.skipFullCheck);
            if (full) expect(thrown(run).code).toBe('SEGLOG_ERR_INDEX_FULL');
            else if (model.length > 0 && offset < last.offset) expect(thrown(run).code).toBe('SEGLOG_ERR_INDEX_INVALID_OFFSET');
            else if (model.length > 0 && timestamp < last.timestamp) expect(thrown(run).code).toBe('SEGLOG_ERR_INDEX_INVALID_TIMESTAMP');
            else if (timestamp <= last.timestamp) run();
            else if (model.length >= index.maxEntries) expect(thrown(run).code).toBe('SEGLOG_ERR_INDEX_FULL');
            else if (offset < base) expect(thrown(run).code).toBe('SEGLOG_ERR_INDEX_OFFSET_OVERFLOW');
            else {
              run();
              model.push({ timestamp, offset });
            }
          } else if (op.kind === 'truncateTo') {
            const target = lastOf().offset - op.back;
            index.truncateTo(target);
            model = model.filter((e) => e.offset < target);
          } else {
            await index.close();
            index = await TimeIndex.open(io, PATH, { baseOffset: base, maxIndexBytes });
            await index.resize(maxIndexBytes);
          }
          expect(index.entries).toBe(model.length);
          expect(index.lastEntry()).toEqual(lastOf());
          const targets = [-1, ...model.flatMap((e) => [e.timestamp - 1, e.timestamp, e.timestamp + 1]), ...probes.map((p) => t0 + p)];
          for (const target of targets) {
            const floor = [...model].reverse().find((e) => e.timestamp <= target) ?? { timestamp: -1, offset: base };
            expect(index.lookup(target)).toEqual(floor);
          }
        }
        await index.close();
      }),
      { numRuns: 150 },
    );
  });
});
