// PlanBatchReader against the trivial reference (toBuffer + splitBatches):
// the same batches, byte for byte, for plans of inline parts (tail-cache
// chunks, batches straddling them) and file parts (reopened log, several
// segments), any window size (batches straddling windows), and scan() over
// the whole log with read-ahead. Plus the refusal of a plan that ends
// inside a batch.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitBatches } from '@seglog/records';
import { FetchPlan } from '../src/fetch-plan.js';
import { PlanBatchReader } from '../src/plan-batch-reader.js';
import { config, newIo, openLog, producerBatch, reopenedLog } from './log-helpers.js';

const scenario = fc.record({
  batches: fc.array(fc.record({ count: fc.integer({ min: 1, max: 30 }), valueBytes: fc.integer({ min: 1, max: 300 }) }), { minLength: 1, maxLength: 25 }),
  windowBytes: fc.oneof(fc.integer({ min: 12, max: 200 }), fc.integer({ min: 200, max: 5000 })),
  maxBytes: fc.integer({ min: 1, max: 20_000 }),
  chunkBytes: fc.integer({ min: 64, max: 4096 }),
  segmentBytes: fc.integer({ min: 12_000, max: 40_000 }), // above the largest batch (30 x ~310 B)
  reopen: fc.boolean(),
});

describe('PlanBatchReader', () => {
  it('hands out exactly the batches toBuffer() holds, for every plan of a log', async () => {
    let inlinePlans = 0;
    let filePlans = 0;
    await fc.assert(fc.asyncProperty(scenario, async (s) => {
      const io = await newIo();
      const cfg = config({ segmentBytes: s.segmentBytes });
      let log = await openLog(io, cfg, { tailCache: { chunkBytes: s.chunkBytes, maxBytes: 1 << 20 } });
      let tag = 0;
      for (const b of s.batches) await log.appendAsLeader(producerBatch(b.count, { valueBytes: b.valueBytes, tag: tag++ }));
      await log.flush();
      if (s.reopen) {
        await log.close();
        log = await openLog(io, cfg, { hadCleanShutdown: true });
      }
      const reader = new PlanBatchReader({ windowBytes: s.windowBytes });
      const want: string[] = [];
      const got: string[] = [];
      let offset = 0;
      while (offset < log.logEndOffset) {
        const plan = await log.read(offset, s.maxBytes);
        expect(plan.isEmpty).toBe(false);
        if (plan.parts.some((p) => p.kind === 'inline')) inlinePlans++;
        if (plan.parts.some((p) => p.kind === 'file')) filePlans++;
        for (const batch of splitBatches(await plan.toBuffer())) want.push(batch.buffer.subarray(batch.start, batch.start + batch.sizeInBytes).toString('hex'));
        const n = await reader.read(plan, (batch) => got.push(batch.buffer.subarray(batch.start, batch.start + batch.sizeInBytes).toString('hex')));
        expect(n).toBeGreaterThan(0);
        await plan.release();
        offset = plan.nextOffset;
      }
      expect(got).toEqual(want);
      expect(want.length).toBe(s.batches.length);
      // scan(): the whole log, read-ahead on, the same batches.
      const scanned: string[] = [];
      const end = await new PlanBatchReader({ windowBytes: s.windowBytes }).scan(log, { fromOffset: 0, toOffset: log.logEndOffset, maxBytes: s.maxBytes },
        (batch) => scanned.push(batch.buffer.subarray(batch.start, batch.start + batch.sizeInBytes).toString('hex')));
      expect(scanned).toEqual(want);
      expect(end).toBe(log.logEndOffset);
      await log.close();
    }), { numRuns: 60 });
    expect(inlinePlans).toBeGreaterThan(0);
    expect(filePlans).toBeGreaterThan(0);
  });

  it('refuses a plan that ends inside a batch', async () => {
    const batch = producerBatch(3, { valueBytes: 50 });
    const plan = new FetchPlan({
      parts: [{ kind: 'inline', buffer: batch }, { kind: 'inline', buffer: batch.subarray(0, 40) }],
      firstOffset: 0, nextOffset: 6, highWatermark: 6, lastStableOffset: 6, logStartOffset: 0, abortedTransactions: [],
    });
    const seen: number[] = [];
    await expect(new PlanBatchReader().read(plan, (b) => seen.push(b.sizeInBytes))).rejects.toMatchObject({ code: 'SEGLOG_ERR_LOG_READ_SHORT' });
    expect(seen).toEqual([batch.length]);
  });

  it('rejects bytes that are not a batch with the framing error', async () => {
    const junk = Buffer.alloc(100, 0);
    const plan = new FetchPlan({
      parts: [{ kind: 'inline', buffer: junk }],
      firstOffset: 0, nextOffset: 1, highWatermark: 1, lastStableOffset: 1, logStartOffset: 0, abortedTransactions: [],
    });
    await expect(new PlanBatchReader().read(plan, () => undefined)).rejects.toMatchObject({ code: 'SEGLOG_ERR_RECORDS_CORRUPT' });
  });

  // windowBytes 700 < maxBytes: plans are pread into the reader's windows; 2000: the windows are lent to the reads.
  it.each([700, 2000])('scan() that fails mid-way releases its plans and waits for its read ahead; the reader then scans again (windows of %d B)', async (windowBytes) => {
    const log = await reopenedLog(2000, 40, 3); // every plan is a file part
    const reader = new PlanBatchReader({ windowBytes });
    for (const failAt of [1, 7, 20, 39]) {
      let seen = 0;
      await expect(reader.scan(log, { fromOffset: 0, toOffset: log.logEndOffset, maxBytes: 1500 }, () => {
        if (++seen === failAt) throw new Error('stop here');
      })).rejects.toThrow('stop here');
      const all: number[] = [];
      const end = await reader.scan(log, { fromOffset: 0, toOffset: log.logEndOffset, maxBytes: 1500 }, (batch) => all.push(batch.baseOffset));
      expect(end).toBe(120);
      expect(all).toEqual(Array.from({ length: 40 }, (_, i) => i * 3));
    }
    // The failed scans left nothing in flight that the close below would trip over.
    await log.close();
  });

  it('scan() lets the next plan\'s read reach the file before handing out the current plan\'s batches (read-ahead)', async () => {
    const log = await reopenedLog(100_000, 40, 3); // every plan is a file part
    const events: string[] = [];
    const source = {
      read: (offset: number, maxBytes: number, options?: { readonly into?: Buffer }) => {
        const plan = log.read(offset, maxBytes, options);
        void plan.then((p) => events.push(`ready ${p.firstOffset}`));
        return plan;
      },
    };
    await new PlanBatchReader({ windowBytes: 1500 }).scan(source, { fromOffset: 0, toOffset: log.logEndOffset, maxBytes: 1500 }, (batch) => {
      events.push(`batch ${batch.baseOffset}`);
    });
    // Each plan's first batch is handed out only after the following plan is ready (SimIo reads finish in microtasks).
    const readies = events.filter((e) => e.startsWith('ready')).map((e) => Number(e.split(' ')[1]));
    expect(readies.length).toBeGreaterThan(5);
    for (let k = 0; k + 1 < readies.length; k++) {
      const nextReady = events.indexOf(`ready ${readies[k + 1]}`);
      const firstBatch = events.indexOf(`batch ${readies[k]}`);
      expect(nextReady).toBeLessThan(firstBatch);
    }
    await log.close();
  });
});
