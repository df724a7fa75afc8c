import fc from 'fast-check';
import { SimIo } from '@seglog/io';
import { beforeEach, describe, expect, it } from 'vitest';
import { OffsetIndex } from '../src/segment/offset-index.js';
import type { OffsetPosition } from '../src/segment/offset-index.js';
import { rejected, thrown, vector } from './helpers.js';

const DIR = '/data/t-0';
const PATH = `${DIR}/00000000000000000100.index`;

async function newIo(): Promise<SimIo> {
  const io = new SimIo();
  await io.mkdir(DIR, { recursive: true });
  return io;
}

describe('OffsetIndex', () => {
  let io: SimIo;
  beforeEach(async () => {
    io = await newIo();
  });

  it('reproduces the fixture entry byte for byte (base 100, offset 105 at position 4096)', async () => {
    const index = await OffsetIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 1024 });
    index.append(105, 4096);
    await index.flush();
    const preallocated = await io.readFile(PATH);
    expect(preallocated.length).toBe(1024);
    expect(preallocated.subarray(0, 8).toString('hex')).toBe(vector('.index').hex);
    expect(preallocated.subarray(8).every((b) => b === 0)).toBe(true);
    await index.close();
    expect((await io.readFile(PATH)).toString('hex')).toBe(vector('.index').hex);
  });

  it('preallocates a new file to segmentIndexBytes rounded down to 8', async () => {
    const index = await OffsetIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 100 });
    expect(index.maxEntries).toBe(12);
    expect(index.fileBytes).toBe(96);
    expect((await io.stat(PATH)).size).toBe(96);
    expect(index.entries).toBe(0);
    await index.close();
    expect((await io.stat(PATH)).size).toBe(0);
  });

  it('rejects an index size below one entry', async () => {
    const error = await rejected(OffsetIndex.open(io, PATH, { baseOffset: 0, maxIndexBytes: 7 }));
    expect(error.code).toBe('SEGLOG_ERR_INDEX_INVALID_SIZE');
  });

  it('looks up the floor entry, (baseOffset, 0) when there is none', async () => {
    const index = await OffsetIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 1024 });
    expect(index.lookup(150)).toEqual({ offset: 100, position: 0 });
    index.append(110, 1000);
    index.append(120, 2000);
    index.append(130, 3000);
    expect(index.lookup(99)).toEqual({ offset: 100, position: 0 });
    expect(index.lookup(109)).toEqual({ offset: 100, position: 0 });
    expect(index.lookup(110)).toEqual({ offset: 110, position: 1000 });
    expect(index.lookup(119)).toEqual({ offset: 110, position: 1000 });
    expect(index.lookup(125)).toEqual({ offset: 120, position: 2000 });
    expect(index.lookup(10_000)).toEqual({ offset: 130, position: 3000 });
    expect(index.lastOffset()).toBe(130);
    expect(index.entry(1)).toEqual({ offset: 120, position: 2000 });
  });

  it('enforces the append rules with typed errors', async () => {
    const index = await OffsetIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 24 });
    expect(thrown(() => index.append(99, 0)).code).toBe('SEGLOG_ERR_INDEX_OFFSET_OVERFLOW');
    expect(thrown(() => index.append(100 + 2 ** 31, 0)).code).toBe('SEGLOG_ERR_INDEX_OFFSET_OVERFLOW');
    index.append(100 + 2 ** 31 - 10, 0);
    expect(thrown(() => index.append(100 + 2 ** 31 - 10, 1)).code).toBe('SEGLOG_ERR_INDEX_INVALID_OFFSET');
    expect(thrown(() => index.append(50, 1)).code).toBe('SEGLOG_ERR_INDEX_INVALID_OFFSET');
    index.append(100 + 2 ** 31 - 1, 10);
    expect(thrown(() => index.append(100 + 2 ** 31, 20)).code).toBe('SEGLOG_ERR_INDEX_OFFSET_OVERFLOW');
    index.truncate();
    index.append(101, 1);
    index.append(102, 2);
    index.append(103, 3);
    expect(index.isFull()).toBe(true);
    expect(thrown(() => index.append(104, 4)).code).toBe('SEGLOG_ERR_INDEX_FULL');
  });

  it("truncates with Kafka's semantics", async () => {
    const index = await OffsetIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 1024 });
    for (let i = 1; i <= 5; i++) index.append(100 + 10 * i, 1000 * i);
    index.truncateTo(130); // exact match: keep the entries before it
    expect(index.entries).toBe(2);
    expect(index.lastOffset()).toBe(120);
    index.append(130, 3000);
    index.truncateTo(125); // between: keep everything up to the floor entry
    expect(index.entries).toBe(2);
    index.truncateTo(105); // below every entry: empty
    expect(index.entries).toBe(0);
    expect(index.lastOffset()).toBe(100);
  });

  it('finds the fetch upper bound by position', async () => {
    const index = await OffsetIndex.open(io, PATH, { baseOffset: 0, maxIndexBytes: 1024 });
    index.append(9, 100);
    index.append(19, 200);
    index.append(29, 300);
    const start: OffsetPosition = { offset: 0, position: 0 };
    expect(index.fetchUpperBoundOffset(start, 50)).toEqual({ offset: 9, position: 100 });
    expect(index.fetchUpperBoundOffset(start, 100)).toEqual({ offset: 9, position: 100 });
    expect(index.fetchUpperBoundOffset(start, 101)).toEqual({ offset: 19, position: 200 });
    expect(index.fetchUpperBoundOffset({ offset: 9, position: 100 }, 150)).toEqual({ offset: 29, position: 300 });
    expect(index.fetchUpperBoundOffset(start, 301)).toBeUndefined();
  });

  it('reopens with entries = length / 8 (trimmed after close, the preallocated size after a crash)', async () => {
    const index = await OffsetIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 80 });
    index.append(110, 1000);
    index.append(120, 2000);
    await index.close();
    const reopened = await OffsetIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 80 });
    expect(reopened.entries).toBe(2);
    expect(reopened.maxEntries).toBe(2);
    expect(reopened.isFull()).toBe(true);
    expect(await reopened.resize(80)).toBe(true);
    expect(reopened.maxEntries).toBe(10);
    expect(await reopened.resize(80)).toBe(false);
    reopened.append(130, 3000);
    expect(reopened.lookup(131)).toEqual({ offset: 130, position: 3000 });
    await reopened.flush();
    // Without close (an unclean stop) the file keeps its preallocated length:
    // all 10 slots count as entries, the zero tail included, as in Kafka.
    const unclean = await OffsetIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 80 });
    expect(unclean.entries).toBe(10);
    expect(unclean.entry(2)).toEqual({ offset: 130, position: 3000 });
    expect(unclean.entry(3)).toEqual({ offset: 100, position: 0 });
    await reopened.close();
    await unclean.close();
  });

  it('sanity-checks the file length and the last offset', async () => {
    const file = await io.open(PATH, { create: true });
    await file.pwrite(Buffer.from('0000000100000010ffffffff00000020', 'hex'), 0);
    await file.close();
    const negative = await OffsetIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 1024 });
    expect(thrown(() => negative.sanityCheck()).code).toBe('SEGLOG_ERR_INDEX_CORRUPT');
    negative.truncate();
    negative.sanityCheck();
    await negative.close();

    const odd = await io.open(PATH, { create: true });
    await odd.truncate(12);
    await odd.close();
    const oddIndex = await OffsetIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 1024 });
    expect(oddIndex.entries).toBe(1);
    expect(thrown(() => oddIndex.sanityCheck()).code).toBe('SEGLOG_ERR_INDEX_CORRUPT');
    await oddIndex.resize(1024);
    oddIndex.sanityCheck();
    await oddIndex.close();
  });

  it('writes back re-appended entries after a truncation correctly', async () => {
    for (const settle of [false, true]) {
      const path = `${DIR}/${settle ? 'settled' : 'queued'}.index`;
      const index = await OffsetIndex.open(io, path, { baseOffset: 0, maxIndexBytes: 1024 });
      index.append(10, 100);
      index.append(20, 200);
      index.append(30, 300);
      // Either the write-back of the three entries is still queued, or it has landed.
      if (settle) await index.flush();
      index.truncateTo(20);
      index.append(25, 250);
      index.append(40, 400);
      await index.close();
      expect((await io.readFile(path)).toString('hex'), path).toBe('0000000a00000064' + '00000019000000fa' + '0000002800000190');
    }
  });

  it('is fail-stop after a failed write-back', async () => {
    const faulty = new SimIo({ faults: { writeEio: { nth: 1, path: PATH } } });
    await faulty.mkdir(DIR, { recursive: true });
    const index = await OffsetIndex.open(faulty, PATH, { baseOffset: 0, maxIndexBytes: 1024 });
    index.append(10, 100);
    const error = await rejected(index.flush());
    expect(error.code).toBe('SEGLOG_ERR_IO_EIO');
    expect(thrown(() => index.append(20, 200))).toBe(error);
    expect(await rejected(index.flush())).toBe(error);
    expect(await rejected(index.close())).toBe(error);
    expect(faulty.openHandles()).toEqual([]);
  });

  it('renames its file and keeps working', async () => {
    const index = await OffsetIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 64 });
    index.append(101, 1);
    await index.renameTo(`${PATH}.deleted`);
    index.append(102, 2);
    await index.close();
    expect(await io.exists(PATH)).toBe(false);
    expect((await io.readFile(`${PATH}.deleted`)).length).toBe(16);
    const other = await OffsetIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 64 });
    await other.delete();
    expect(await io.exists(PATH)).toBe(false);
  });

  it('opens read-only without creating or changing the file', async () => {
    const missing = await OffsetIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 64, readOnly: true });
    expect(missing.entries).toBe(0);
    await missing.close();
    expect(await io.exists(PATH)).toBe(false);
    const writer = await OffsetIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 64 });
    writer.append(101, 1);
    await writer.flush();
    const reader = await OffsetIndex.open(io, PATH, { baseOffset: 100, maxIndexBytes: 64, readOnly: true });
    expect(reader.entries).toBe(8);
    await reader.close();
    expect((await io.stat(PATH)).size).toBe(64);
    await writer.close();
  });
});

// Model-based: the index against a sorted array of entries.
type Op =
  | { readonly kind: 'append'; readonly offsetGap: number; readonly positionGap: number }
  | { readonly kind: 'truncateTo'; readonly back: number }
  | { readonly kind: 'reopen' }
  | { readonly kind: 'flush' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('append' as const), offsetGap: fc.integer({ min: 1, max: 50 }), positionGap: fc.integer({ min: 1, max: 5000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncateTo' as const), back: fc.integer({ min: -5, max: 200 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reopen' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('flush' as const) }) },
);

function modelFloor(model: readonly OffsetPosition[], base: number, target: number): OffsetPosition {
  let found: OffsetPosition = { offset: base, position: 0 };
  for (const e of model) if (e.offset <= target) found = e;
  return found;
}

function modelUpperBound(model: readonly OffsetPosition[], position: number): OffsetPosition | undefined {
  return model.find((e) => e.position >= position);
}

describe('OffsetIndex model', () => {
  it('matches a sorted array under appends, truncations, flushes and reopens', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 40 }), fc.array(opArb, { maxLength: 60 }), fc.array(fc.integer({ min: -10, max: 3000 }), { maxLength: 8 }), async (base, ops, probes) => {
        const io = await newIo();
        const maxIndexBytes = 8 * 40;
        let index = await OffsetIndex.open(io, PATH, { baseOffset: base, maxIndexBytes });
        let model: OffsetPosition[] = [];
        for (const op of ops) {
          const last = model[model.length - 1] ?? { offset: base - 1, position: 0 };
          if (op.kind === 'append') {
            if (model.length === index.maxEntries) {
              expect(thrown(() => index.append(last.offset + op.offsetGap, last.position + op.positionGap)).code).toBe('SEGLOG_ERR_INDEX_FULL');
              continue;
            }
            const entry = { offset: last.offset + op.offsetGap, position: last.position + op.positionGap };
            index.append(entry.offset, entry.position);
            model.push(entry);
          } else if (op.kind === 'truncateTo') {
            const target = last.offset - op.back;
            index.truncateTo(target);
            model = model.filter((e) => e.offset < target);
          } else if (op.kind === 'flush') {
            await index.flush();
          } else {
            await index.close();
            index = await OffsetIndex.open(io, PATH, { baseOffset: base, maxIndexBytes });
            expect(index.entries).toBe(model.length);
            await index.resize(maxIndexBytes);
          }
          expect(index.entries).toBe(model.length);
          const targets = [base - 1, base, ...model.flatMap((e) => [e.offset - 1, e.offset, e.offset + 1]), ...probes.map((p) => base + p)];
          for (const t of targets) expect(index.lookup(t)).toEqual(modelFloor(model, base, t));
          for (const p of probes) expect(index.fetchUpperBoundOffset({ offset: base, position: 0 }, p * 10)).toEqual(modelUpperBound(model, p * 10));
        }
        await index.close();
        // The trimmed file is exactly the model, encoded.
        const expected = Buffer.alloc(model.length * 8);
        model.forEach((e, i) => {
          expected.writeInt32BE(e.offset - base, i * 8);
          expected.writeInt32BE(e.position, i * 8 + 4);
        });
        expect((await io.readFile(PATH)).equals(expected)).toBe(true);
      }),
      { numRuns: 150 },
    );
  });
});
