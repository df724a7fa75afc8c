import fc from 'fast-check';
import { CrashMode, SimIo } from '@seglog/io';
import { describe, expect, it } from 'vitest';
import { LeaderEpochCache } from '../src/checkpoint/leader-epoch-cache.js';
import type { EpochEndOffset, EpochEntry } from '../src/checkpoint/leader-epoch-cache.js';
import { LeaderEpochCheckpoint } from '../src/checkpoint/leader-epoch-checkpoint.js';
import { rejected } from './helpers.js';

const DIR = '/data/t-0';
const PATH = `${DIR}/leader-epoch-checkpoint`;

async function newIo(options: ConstructorParameters<typeof SimIo>[0] = {}): Promise<SimIo> {
  const io = new SimIo(options);
  await io.mkdir(DIR, { recursive: true });
  await io.fsyncDir('/');
  await io.fsyncDir('/data');
  await io.fsyncDir(DIR);
  return io;
}

const e = (epoch: number, startOffset: number): EpochEntry => ({ epoch, startOffset });

describe('LeaderEpochCache', () => {
  it('keeps only the first batch of each epoch (testRecoveryRebuildsEpochCache)', async () => {
    const io = await newIo();
    const cache = await LeaderEpochCache.load(io, PATH);
    expect(await cache.assign(0, 104)).toBe(true);
    expect(await cache.assign(1, 106)).toBe(true);
    expect(await cache.assign(1, 108)).toBe(false);
    expect(await cache.assign(2, 110)).toBe(true);
    expect(cache.epochEntries()).toEqual([e(0, 104), e(1, 106), e(2, 110)]);
    expect((await io.readFile(PATH)).toString()).toBe('0\n3\n0 104\n1 106\n2 110\n');
  });

  it('makes an assign durable before it resolves', async () => {
    const io = await newIo();
    const cache = await LeaderEpochCache.load(io, PATH);
    await cache.assign(3, 50);
    const after = io.recover(CrashMode.powerClean);
    expect(await new LeaderEpochCheckpoint(after, PATH).read()).toEqual([e(3, 50)]);
  });

  it('removes non-monotonic entries on assign', async () => {
    const io = await newIo();
    const cache = await LeaderEpochCache.load(io, PATH);
    await cache.assign(1, 10);
    await cache.assign(3, 20);
    await cache.assign(5, 30);
    await cache.assign(4, 25); // epoch 5 (≥ 4) and its start 30 (≥ 25) go
    expect(cache.epochEntries()).toEqual([e(1, 10), e(3, 20), e(4, 25)]);
    await cache.assign(4, 22); // same epoch, lower start: replaces
    expect(cache.epochEntries()).toEqual([e(1, 10), e(3, 20), e(4, 22)]);
    await cache.assign(6, 15); // a higher epoch at a lower offset truncates back to (1, 10)
    expect(cache.epochEntries()).toEqual([e(1, 10), e(6, 15)]);
  });

  it('truncates from the end and from the start, writing in the background', async () => {
    const io = await newIo();
    const cache = await LeaderEpochCache.load(io, PATH);
    for (const [epoch, start] of [[0, 0], [1, 10], [2, 20], [3, 30]] as const) await cache.assign(epoch, start);
    cache.truncateFromEnd(25);
    expect(cache.epochEntries()).toEqual([e(0, 0), e(1, 10), e(2, 20)]);
    cache.truncateFromEnd(-1);
    cache.truncateFromEnd(100);
    expect(cache.epochEntries()).toEqual([e(0, 0), e(1, 10), e(2, 20)]);
    cache.truncateFromStart(15);
    expect(cache.epochEntries()).toEqual([e(1, 15), e(2, 20)]);
    cache.truncateFromStart(20);
    expect(cache.epochEntries()).toEqual([e(2, 20)]);
    cache.truncateFromStart(5);
    expect(cache.epochEntries()).toEqual([e(2, 20)]);
    await cache.flush();
    expect((await LeaderEpochCache.load(io, PATH)).epochEntries()).toEqual([e(2, 20)]);
    await cache.clear();
    expect((await LeaderEpochCache.load(io, PATH)).epochEntries()).toEqual([]);
  });

  it('answers endOffsetFor and epochForOffset', async () => {
    const io = await newIo();
    const cache = await LeaderEpochCache.load(io, PATH);
    expect(cache.endOffsetFor(0, 100)).toEqual({ epoch: -1, endOffset: -1 });
    await cache.assign(2, 10);
    await cache.assign(4, 20);
    await cache.assign(6, 30);
    expect(cache.endOffsetFor(-1, 100)).toEqual({ epoch: -1, endOffset: -1 });
    expect(cache.endOffsetFor(6, 100)).toEqual({ epoch: 6, endOffset: 100 }); // latest: the LEO
    expect(cache.endOffsetFor(1, 100)).toEqual({ epoch: 1, endOffset: 10 }); // below the first
    expect(cache.endOffsetFor(2, 100)).toEqual({ epoch: 2, endOffset: 20 });
    expect(cache.endOffsetFor(3, 100)).toEqual({ epoch: 2, endOffset: 20 }); // intermediate
    expect(cache.endOffsetFor(5, 100)).toEqual({ epoch: 4, endOffset: 30 });
    expect(cache.endOffsetFor(7, 100)).toEqual({ epoch: -1, endOffset: -1 });
    expect(cache.epochForOffset(9)).toBeUndefined();
    expect(cache.epochForOffset(10)).toBe(2);
    expect(cache.epochForOffset(25)).toBe(4);
    expect(cache.epochForOffset(1000)).toBe(6);
    expect(cache.latestEpoch()).toBe(6);
    expect(cache.earliestEntry()).toEqual(e(2, 10));
  });

  it('re-applies assign rules to a non-monotonic checkpoint on load', async () => {
    const io = await newIo();
    await new LeaderEpochCheckpoint(io, PATH).write([e(1, 10), e(3, 30), e(2, 20), e(2, 25)]);
    const cache = await LeaderEpochCache.load(io, PATH);
    expect(cache.epochEntries()).toEqual([e(1, 10), e(2, 20)]);
  });

  it('shares one checkpoint write among concurrent assigns', async () => {
    const io = await newIo();
    const cache = await LeaderEpochCache.load(io, PATH);
    await cache.assign(0, 0);
    const before = io.crashPoints;
    const results = await Promise.all([cache.assign(1, 10), cache.assign(2, 20), cache.assign(3, 30)]);
    const perWrite = io.crashPoints - before;
    expect(results).toEqual([true, true, true]);
    await cache.assign(4, 40);
    expect(io.crashPoints - before).toBe(2 * perWrite);
    expect(await new LeaderEpochCheckpoint(io, PATH).read()).toEqual([e(0, 0), e(1, 10), e(2, 20), e(3, 30), e(4, 40)]);
  });

  it('is fail-stop after a failed checkpoint write', async () => {
    const io = await newIo({ faults: { syncEio: { nth: 2, path: `${PATH}.tmp` } } });
    const cache = await LeaderEpochCache.load(io, PATH);
    await cache.assign(0, 0);
    cache.truncateFromEnd(0); // the background write fails
    const error = await rejected(cache.flush());
    expect(error.code).toBe('SEGLOG_ERR_IO_EIO');
    expect(await rejected(cache.assign(1, 5))).toBe(error);
    expect(await rejected(cache.clear())).toBe(error);
  });
});

// Model: the cache against a trivial reference written from the rules in
// reference/kafka-storage.md §23 with filters instead of end-walking loops.
class Reference {
  entries: EpochEntry[] = [];

  assign(epoch: number, start: number): boolean {
    const latest = this.entries.at(-1);
    if (latest !== undefined && latest.epoch === epoch && start >= latest.startOffset) return false;
    this.entries = [...this.entries.filter((x) => x.epoch < epoch && x.startOffset < start), e(epoch, start)];
    return true;
  }

  truncateFromEnd(end: number): void {
    if (end >= 0) this.entries = this.entries.filter((x) => x.startOffset < end);
  }

  truncateFromStart(start: number): void {
    const removed = this.entries.filter((x) => x.startOffset <= start);
    const last = removed.at(-1);
    if (last !== undefined) this.entries = [e(last.epoch, start), ...this.entries.filter((x) => x.startOffset > start)];
  }

  endOffsetFor(epoch: number, leo: number): EpochEndOffset {
    const undefinedResult = { epoch: -1, endOffset: -1 };
    if (epoch === -1) return undefinedResult;
    if (this.entries.at(-1)?.epoch === epoch) return { epoch, endOffset: leo };
    const higher = this.entries.filter((x) => x.epoch > epoch);
    const lower = this.entries.filter((x) => x.epoch <= epoch);
    const next = higher[0];
    if (next === undefined) return undefinedResult;
    const floor = lower.at(-1);
    return floor === undefined ? { epoch, endOffset: next.startOffset } : { epoch: floor.epoch, endOffset: next.startOffset };
  }

  epochForOffset(offset: number): number | undefined {
    return this.entries.filter((x) => x.startOffset <= offset).at(-1)?.epoch;
  }
}

type Op =
  | { readonly kind: 'assign'; readonly epoch: number; readonly start: number }
  | { readonly kind: 'truncateFromEnd'; readonly offset: number }
  | { readonly kind: 'truncateFromStart'; readonly offset: number }
  | { readonly kind: 'reload' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('assign' as const), epoch: fc.nat(12), start: fc.nat(120) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('truncateFromEnd' as const), offset: fc.integer({ min: -2, max: 125 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('truncateFromStart' as const), offset: fc.integer({ min: -2, max: 125 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reload' as const) }) },
);

describe('LeaderEpochCache model', () => {
  it('matches the reference, and reloads to the same entries after flush', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 40 }), async (ops) => {
        const io = await newIo();
        let cache = await LeaderEpochCache.load(io, PATH);
        const reference = new Reference();
        for (const op of ops) {
          if (op.kind === 'assign') {
            const changed = await cache.assign(op.epoch, op.start);
            expect(changed).toBe(reference.assign(op.epoch, op.start));
            // A change is durable when assign resolves: the file equals the reference.
            if (changed) expect((await LeaderEpochCache.load(io, PATH)).epochEntries()).toEqual(reference.entries);
          } else if (op.kind === 'truncateFromEnd') {
            cache.truncateFromEnd(op.offset);
            reference.truncateFromEnd(op.offset);
          } else if (op.kind === 'truncateFromStart') {
            cache.truncateFromStart(op.offset);
            reference.truncateFromStart(op.offset);
          } else {
            await cache.flush();
            cache = await LeaderEpochCache.load(io, PATH);
          }
          expect(cache.epochEntries()).toEqual(reference.entries);
          for (let epoch = -1; epoch <= 13; epoch++) expect(cache.endOffsetFor(epoch, 500)).toEqual(reference.endOffsetFor(epoch, 500));
          for (const offset of [0, 5, 30, 60, 119, 200]) expect(cache.epochForOffset(offset)).toBe(reference.epochForOffset(offset));
        }
        await cache.flush();
        expect((await LeaderEpochCache.load(io, PATH)).epochEntries()).toEqual(reference.entries);
      }),
      { numRuns: 150 },
    );
  });
});
