// Model-based test: random appends, reads, truncations, retention, clean
// reopens and crash reopens against an array of batches (offset → record
// bytes). The model knows nothing of segments or indexes.

import fc from 'fast-check';
import type { SimIo } from '@seglog/io';
import { splitBatches } from '@seglog/records';
import { describe, expect, it } from 'vitest';
import type { Log } from '../src/log/log.js';
import type { LogConfig } from '../src/log-config.js';
import { config, newIo, openLog, producerBatch, readAll } from './log-helpers.js';

interface ModelBatch {
  readonly base: number;
  readonly values: string[];
}

type Op =
  | { readonly kind: 'append'; readonly count: number; readonly valueBytes: number }
  | { readonly kind: 'read'; readonly at: number; readonly maxBytes: number }
  | { readonly kind: 'truncate'; readonly at: number }
  | { readonly kind: 'retain'; readonly at: number }
  | { readonly kind: 'reopen'; readonly crash: boolean };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('append' as const), count: fc.integer({ min: 1, max: 4 }), valueBytes: fc.integer({ min: 4, max: 60 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('read' as const), at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), maxBytes: fc.integer({ min: 1, max: 400 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('retain' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reopen' as const), crash: fc.boolean() }) },
);

class Model {
  batches: ModelBatch[] = [];
  logStart = 0;
  get end(): number {
    const last = this.batches[this.batches.length - 1];
    return last === undefined ? this.logStart : last.base + last.values.length;
  }
  visible(): Array<[number, string]> {
    const out: Array<[number, string]> = [];
    for (const batch of this.batches) batch.values.forEach((v, i) => { if (batch.base + i >= this.logStart) out.push([batch.base + i, v]); });
    return out;
  }
}

function valuesOf(buffer: Buffer): string[] {
  return splitBatches(buffer).flatMap((b) => b.toRecords().map((r) => r.value?.toString('hex') ?? ''));
}

async function step(state: { io: SimIo; log: Log; cfg: LogConfig; tag: number }, model: Model, op: Op): Promise<void> {
  const { log } = state;
  switch (op.kind) {
    case 'append': {
      const buffer = producerBatch(op.count, { valueBytes: op.valueBytes, tag: state.tag++ });
      const values = valuesOf(buffer);
      const result = await log.appendAsLeader(buffer, { leaderEpoch: 0 });
      expect(result.firstOffset).toBe(model.end);
      model.batches.push({ base: result.firstOffset, values });
      return;
    }
    case 'read': {
      if (model.end === model.logStart) return;
      await log.written(model.end - 1);
      const offset = model.logStart + Math.floor(op.at * (model.end - model.logStart));
      const plan = await log.read(offset, op.maxBytes);
      const batches = splitBatches(await plan.toBuffer());
      await plan.release();
      expect(batches.length).toBeGreaterThan(0);
      expect(plan.totalBytes).toBeLessThanOrEqual(Math.max(op.maxBytes, batches[0]?.sizeInBytes ?? 0));
      const expected = new Map(model.visible());
      let next = batches[0]?.baseOffset ?? -1;
      expect(next).toBeLessThanOrEqual(offset);
      for (const batch of batches) {
        expect(batch.isValid()).toBe(true);
        expect(batch.baseOffset).toBe(next);
        for (const record of batch.toRecords()) if (record.offset >= model.logStart) expect(record.value?.toString('hex')).toBe(expected.get(record.offset));
        next = batch.lastOffset + 1;
      }
      expect(plan.nextOffset).toBe(next);
      return;
    }
    case 'truncate': {
      const candidates = model.batches.filter((b) => b.base >= model.logStart);
      if (candidates.length === 0) return;
      const target = (candidates[Math.floor(op.at * candidates.length)] as ModelBatch).base;
      await log.truncateTo(target);
      model.batches = model.batches.filter((b) => b.base < target);
      expect(log.logEndOffset).toBe(target);
      return;
    }
    case 'retain': {
      log.updateHighWatermark(model.end);
      const start = model.logStart + Math.floor(op.at * (model.end - model.logStart));
      await log.deleteRecords(start);
      model.logStart = Math.max(model.logStart, start);
      await log.deleteOldSegments();
      expect(log.logStartOffset).toBeGreaterThanOrEqual(model.logStart);
      model.logStart = log.logStartOffset;
      return;
    }
    case 'reopen': {
      if (op.crash) {
        if (model.end > 0) await log.written(model.end - 1);
        const recoveryPoint = log.durableOffset;
        state.io = state.io.recover('process');
        state.log = await openLog(state.io, state.cfg, { hadCleanShutdown: false, recoveryPoint, logStartOffset: model.logStart });
      } else {
        await log.close();
        expect(state.io.openHandles()).toEqual([]);
        state.log = await openLog(state.io, state.cfg, { hadCleanShutdown: true, recoveryPoint: model.end, logStartOffset: model.logStart });
      }
      expect(state.log.logEndOffset).toBe(model.end);
      return;
    }
  }
}

describe('Log against an array model', () => {
  it('append / read / truncate / retention / reopen / crash keep offsets and record bytes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 1, maxLength: 40 }),
        fc.record({ segmentBytes: fc.integer({ min: 340, max: 900 }), indexIntervalBytes: fc.integer({ min: 0, max: 300 }), segmentIndexBytes: fc.constantFrom(48, 1024) }),
        async (ops, sizes) => {
          const cfg = config({ ...sizes, fileDeleteDelayMs: 0 });
          const io = await newIo();
          const state = { io, log: await openLog(io, cfg), cfg, tag: 0 };
          const model = new Model();
          for (const op of ops) {
            await step(state, model, op);
            expect(state.log.logEndOffset).toBe(model.end);
          }
          if (model.end > 0) await state.log.written(model.end - 1);
          expect(await readAll(state.log, model.logStart)).toEqual(model.visible());
          await state.log.close();
          expect(state.io.openHandles()).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });
});
