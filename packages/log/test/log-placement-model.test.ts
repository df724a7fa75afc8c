// Model test of placement: random appends (some changing the leader epoch),
// reads, flushes, rolls, truncations and cache pressure, in buffered and
// direct mode. After every step: reads return exactly the model's bytes, and
// every append and read took the placement the rules prescribe, computed by
// the model from its own view (segments, batch positions, sparse-index
// entries, the cache window, epochs) — not from the log's internals.
//
// Rules as the model states them (indexIntervalBytes 0: every batch but the
// first of a segment, or the first after a truncation, gets an index entry):
// - append: epoch change → 'epoch'; else the segment would pass segmentBytes
//   → 'roll'; else lastOffset + 1 − durable ≥ flush.messages → 'flush'; else
//   the caller.
// - read (after the written offset reached the end): offset at the end →
//   the caller (empty); not in the active segment → 'sealed'; the floor
//   entry's position below the cache window → 'uncached'; else the caller.
import fc from 'fast-check';
import { splitBatches } from '@seglog/records';
import { describe, expect, it } from 'vitest';
import type { Log } from '../src/log/log.js';
import { config, newIo, openLog, producerBatch } from './log-helpers.js';

interface MBatch { readonly first: number; readonly last: number; readonly position: number; readonly bytes: Buffer; readonly indexed: boolean }
interface MSegment { readonly base: number; batches: MBatch[]; size: number; entryPending: boolean }

type Op =
  | { readonly kind: 'append'; readonly count: number; readonly valueBytes: number; readonly bump: boolean }
  | { readonly kind: 'read'; readonly at: number; readonly maxBytes: number }
  | { readonly kind: 'flush' }
  | { readonly kind: 'roll' }
  | { readonly kind: 'truncate'; readonly at: number }
  | { readonly kind: 'pressure' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('append' as const), count: fc.integer({ min: 1, max: 3 }), valueBytes: fc.integer({ min: 4, max: 120 }), bump: fc.integer({ min: 0, max: 5 }).map((n) => n === 0) }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('read' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), maxBytes: fc.integer({ min: 1, max: 900 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'flush' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'roll' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'pressure' as const }) },
);

class Model {
  segments: MSegment[] = [{ base: 0, batches: [], size: 0, entryPending: false }];
  epochs: Array<{ epoch: number; start: number }> = [];
  epoch = 0;
  cacheStart = 0;
  end = 0;
  constructor(readonly segmentBytes: number, readonly flushMessages: number) {}
  get active(): MSegment {
    return this.segments[this.segments.length - 1]!;
  }
  appendReason(size: number, lastOffset: number, epoch: number, durable: number): string | null {
    const latest = this.epochs[this.epochs.length - 1];
    if (latest === undefined || latest.epoch !== epoch || this.end < latest.start) return 'epoch';
    if (this.active.size > this.segmentBytes - size) return 'roll';
    if (lastOffset + 1 - durable >= this.flushMessages) return 'flush';
    return null;
  }
  append(bytes: Buffer, first: number, last: number, epoch: number): void {
    const latest = this.epochs[this.epochs.length - 1];
    if (latest === undefined || latest.epoch !== epoch) this.epochs.push({ epoch, start: first });
    if (this.active.size > this.segmentBytes - bytes.length) this.rollAt(first);
    const segment = this.active;
    segment.batches.push({ first, last, position: segment.size, bytes, indexed: segment.entryPending });
    segment.size += bytes.length;
    segment.entryPending = true;
    this.end = last + 1;
  }
  rollAt(base: number): void {
    this.segments.push({ base, batches: [], size: 0, entryPending: false });
    this.cacheStart = 0;
  }
  truncate(offset: number): void {
    const doomed = this.segments.filter((s) => s.base > offset).length;
    this.segments = this.segments.filter((s) => s.base <= offset);
    const active = this.active;
    active.batches = active.batches.filter((b) => b.last < offset);
    active.size = active.batches.reduce((n, b) => n + b.bytes.length, 0);
    active.entryPending = false;
    if (doomed > 0 || active.size <= this.cacheStart) this.cacheStart = active.size;
    this.epochs = this.epochs.filter((e) => e.start < offset);
    this.end = offset;
  }
  segmentOf(offset: number): MSegment {
    let found = this.segments[0]!;
    for (const s of this.segments) if (s.base <= offset) found = s;
    return found;
  }
  readReason(offset: number): string | null {
    if (offset >= this.end) return null;
    const segment = this.segmentOf(offset);
    if (segment !== this.active) return 'sealed';
    let floor = 0;
    for (const b of segment.batches) if (b.indexed && b.last <= offset) floor = b.position;
    return floor >= this.cacheStart ? null : 'uncached';
  }
  expectedRead(offset: number, maxBytes: number): Buffer {
    if (offset >= this.end) return Buffer.alloc(0);
    const segment = this.segmentOf(offset);
    const parts: Buffer[] = [];
    let total = 0;
    for (const b of segment.batches) {
      if (b.last < offset) continue;
      if (parts.length > 0 && total + b.bytes.length > maxBytes) break;
      parts.push(b.bytes);
      total += b.bytes.length;
    }
    return Buffer.concat(parts);
  }
}

interface State { log: Log; model: Model; tag: number }

/** Placements seen across all runs (the property must exercise every kind). */
const seen = new Map<string, number>();
const see = (key: string): void => void seen.set(key, (seen.get(key) ?? 0) + 1);

function reasonDelta(log: Log, before: Record<string, number>): string | null {
  const moved = Object.entries(log.placement.reasons).filter(([k, v]) => v !== before[k]);
  expect(moved.length).toBeLessThanOrEqual(1);
  return moved.length === 0 ? null : moved[0]![0];
}

async function step(state: State, op: Op): Promise<void> {
  const { log, model } = state;
  const reasons = { ...log.placement.reasons };
  switch (op.kind) {
    case 'append': {
      if (op.bump) model.epoch++;
      const buffer = producerBatch(op.count, { valueBytes: op.valueBytes, tag: state.tag++ });
      const lastOffset = model.end + op.count - 1;
      const expected = model.appendReason(buffer.length, lastOffset, model.epoch, log.durableOffset);
      const caller = log.placement.append.caller;
      const result = await log.appendAsLeader(buffer, { leaderEpoch: model.epoch });
      expect(result.firstOffset).toBe(model.end);
      expect(reasonDelta(log, reasons)).toBe(expected);
      expect(log.placement.append.caller).toBe(caller + (expected === null ? 1 : 0));
      model.append(Buffer.from(buffer), result.firstOffset, result.lastOffset, model.epoch);
      see(`append:${expected ?? 'caller'}`);
      return;
    }
    case 'read': {
      if (model.end > 0) await log.written(model.end - 1);
      const offset = Math.min(model.end, Math.floor(op.at * (model.end + 1)));
      const expected = model.readReason(offset);
      const caller = log.placement.read.caller;
      const plan = await log.read(offset, op.maxBytes);
      expect(reasonDelta(log, reasons)).toBe(expected);
      expect(log.placement.read.caller).toBe(caller + (expected === null ? 1 : 0));
      expect(plan.parts.every((p) => p.kind === (expected === null ? 'inline' : 'file'))).toBe(true);
      expect(await plan.toBuffer()).toEqual(model.expectedRead(offset, op.maxBytes));
      await plan.release();
      see(`read:${expected ?? 'caller'}`);
      return;
    }
    case 'flush':
      await log.flush();
      expect(log.durableOffset).toBe(model.end);
      return;
    case 'roll':
      await log.forceRoll();
      if (model.active.size > 0) model.rollAt(model.end);
      expect(log.segmentBaseOffsets()).toEqual(model.segments.map((s) => s.base));
      return;
    case 'truncate': {
      const all = model.segments.flatMap((s) => s.batches);
      if (all.length === 0) return;
      const target = all[Math.floor(op.at * (all.length - 1))]!.first;
      await log.truncateTo(target);
      await log.epochCache.flush();
      model.truncate(target);
      expect(log.segmentBaseOffsets()).toEqual(model.segments.map((s) => s.base));
      return;
    }
    case 'pressure':
      if (model.end > 0) await log.written(model.end - 1);
      log.tailCache.evict(Number.MAX_SAFE_INTEGER);
      model.cacheStart = model.active.size;
      return;
  }
}

async function checkAll(log: Log, model: Model): Promise<void> {
  if (model.end > 0) await log.written(model.end - 1);
  const bytes: Buffer[] = [];
  let offset = 0;
  while (offset < model.end) {
    const plan = await log.read(offset, 1 << 20);
    const buffer = await plan.toBuffer();
    await plan.release();
    expect(buffer.length).toBeGreaterThan(0);
    bytes.push(buffer);
    offset = plan.nextOffset;
  }
  const expected = Buffer.concat(model.segments.flatMap((s) => s.batches.map((b) => b.bytes)));
  expect(Buffer.concat(bytes)).toEqual(expected);
  expect(splitBatches(expected).length).toBe(model.segments.reduce((n, s) => n + s.batches.length, 0));
}

describe('placement model', () => {
  for (const writeMode of ['buffered', 'direct'] as const) {
    it(`${writeMode}: reads return the model's bytes and every append and read takes the prescribed placement`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(opArb, { minLength: 1, maxLength: 40 }),
          fc.record({ segmentBytes: fc.integer({ min: 600, max: 2500 }), flushMessages: fc.constantFrom(3, 7, Number.MAX_SAFE_INTEGER) }),
          async (ops, sizes) => {
            const io = await newIo();
            const cfg = config({ writeMode, segmentBytes: sizes.segmentBytes, indexIntervalBytes: 0, flushIntervalMessages: sizes.flushMessages });
            const log = await openLog(io, cfg, { tailCache: { maxBytes: 1 << 20, chunkBytes: 512 } });
            const state: State = { log, model: new Model(sizes.segmentBytes, sizes.flushMessages), tag: 0 };
            try {
              for (const op of ops) {
                await step(state, op);
                expect(log.logEndOffset).toBe(state.model.end);
                await checkAll(log, state.model);
              }
            } finally {
              await log.close();
            }
            expect(io.openHandles()).toEqual([]);
          },
        ),
        { numRuns: 60 },
      );
      for (const key of ['append:caller', 'append:epoch', 'append:roll', 'append:flush', 'read:caller', 'read:sealed', 'read:uncached']) expect(seen.get(key) ?? 0, key).toBeGreaterThan(0);
    });
  }
});
