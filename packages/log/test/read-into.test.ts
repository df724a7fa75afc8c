// Log.read with ReadOptions.into (one pread into the caller's buffer, the
// framing walked there, the bytes carried by the plan, sequential reads
// continued without an index lookup) against the same read without it (the
// reference: index lookup + chunked header walk, no carried bytes): the same
// firstOffset, nextOffset and bytes for random reads, sequential runs,
// bounds and minOneMessage, across truncations that rewrite the bytes after a
// sequential reader's stopping point with batches of other sizes (a stale
// continuation would start mid-batch or at the wrong batch). A file part
// carries its bytes exactly when its range fits `into`.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FetchPlan } from '../src/fetch-plan.js';
import type { Log } from '../src/log/log.js';
import { config, newIo, openLog, producerBatch, reopenedLog } from './log-helpers.js';

const batchSpec = fc.record({ count: fc.integer({ min: 1, max: 20 }), valueBytes: fc.integer({ min: 1, max: 200 }) });
const step = fc.oneof(
  fc.record({ kind: fc.constant('seq' as const), from: fc.double({ min: 0, max: 1, noNaN: true }), reads: fc.integer({ min: 1, max: 8 }), maxBytes: fc.integer({ min: 1, max: 9000 }) }),
  fc.record({ kind: fc.constant('continue' as const), reads: fc.integer({ min: 1, max: 8 }), maxBytes: fc.integer({ min: 1, max: 9000 }) }),
  fc.record({
    kind: fc.constant('at' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), maxBytes: fc.integer({ min: 0, max: 9000 }),
    bound: fc.option(fc.double({ min: 0, max: 1, noNaN: true })), minOne: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), rewrite: fc.array(batchSpec, { minLength: 1, maxLength: 6 }) }),
);
const scenario = fc.record({
  batches: fc.array(batchSpec, { minLength: 1, maxLength: 30 }),
  segmentBytes: fc.integer({ min: 5000, max: 30_000 }), // above the largest batch (20 x ~210 B)
  intoBytes: fc.oneof(fc.integer({ min: 61, max: 600 }), fc.integer({ min: 600, max: 12_000 })),
  steps: fc.array(step, { minLength: 1, maxLength: 12 }),
});

interface Seen { readonly firstOffset: number; readonly nextOffset: number; readonly hex: string }

async function seen(plan: FetchPlan): Promise<Seen> {
  return { firstOffset: plan.firstOffset, nextOffset: plan.nextOffset, hex: (await plan.toBuffer()).toString('hex') };
}

describe('Log.read with ReadOptions.into', () => {
  it('returns what the read without it returns, and carries a file range that fits', async () => {
    let carried = 0;
    let continued = 0;
    await fc.assert(fc.asyncProperty(scenario, async (s) => {
      const io = await newIo();
      const cfg = config({ segmentBytes: s.segmentBytes, indexIntervalBytes: 512 });
      // A tail cache too small to serve reads: they go to the files (the path under test).
      const cacheOptions = { tailCache: { chunkBytes: 64, maxBytes: 128 } };
      let log: Log = await openLog(io, cfg, cacheOptions);
      let tag = 0;
      const append = async (specs: ReadonlyArray<{ count: number; valueBytes: number }>): Promise<void> => {
        for (const b of specs) await log.appendAsLeader(producerBatch(b.count, { valueBytes: b.valueBytes, tag: tag++ }));
        await log.flush();
      };
      await append(s.batches);
      await log.close();
      log = await openLog(io, cfg, { ...cacheOptions, hadCleanShutdown: true });
      const into = Buffer.alloc(s.intoBytes);
      const pick = (fraction: number): number => log.logStartOffset + Math.floor(fraction * (log.logEndOffset - log.logStartOffset));
      let next = log.logStartOffset; // where the sequential reader stands

      const compare = async (offset: number, maxBytes: number, options: { maxOffset?: number; minOneMessage?: boolean } = {}): Promise<Seen> => {
        const reference = await log.read(offset, maxBytes, options);
        const want = await seen(reference);
        await reference.release();
        const plan = await log.read(offset, maxBytes, { ...options, into });
        for (const part of plan.parts) {
          if (part.kind !== 'file') continue;
          expect(part.bytes !== undefined).toBe(part.length <= into.length);
          if (part.bytes !== undefined) {
            expect(part.bytes.buffer).toBe(into.buffer);
            carried++;
          }
        }
        const got = await seen(plan);
        await plan.release();
        expect(got).toEqual(want);
        return got;
      };
      const sequential = async (reads: number, maxBytes: number): Promise<void> => {
        for (let r = 0; r < reads && next < log.logEndOffset; r++) {
          const got = await compare(next, maxBytes);
          if (got.nextOffset === next) break; // the first batch does not fit (minOneMessage is on by default: only at the end)
          next = got.nextOffset;
          continued++;
        }
      };

      for (const st of s.steps) {
        if (st.kind === 'seq') {
          next = pick(st.from);
          await sequential(st.reads, st.maxBytes);
        } else if (st.kind === 'continue') {
          await sequential(st.reads, st.maxBytes);
        } else if (st.kind === 'at') {
          const offset = pick(st.at);
          await compare(offset, st.maxBytes, { minOneMessage: st.minOne, ...(st.bound === null ? {} : { maxOffset: pick(st.bound) }) });
        } else {
          // Truncate below the sequential reader's position when there is room, then write other batches.
          const target = Math.min(pick(st.at), Math.max(log.logStartOffset, next - 1));
          await log.truncateTo(target);
          await append(st.rewrite);
          next = Math.min(next, log.logEndOffset);
          await sequential(2, 4000); // the read at the old stopping point, then one more
        }
      }
      await log.close();
    }), { numRuns: 80 });
    expect(carried).toBeGreaterThan(0);
    expect(continued).toBeGreaterThan(0);
  });

  it('a sequential reader of a reopened log gets every range carried, in the reader\'s buffer', async () => {
    const log = await reopenedLog(20_000, 60, 5);
    const into = Buffer.alloc(3000 + 61);
    let offset = 0;
    let plans = 0;
    while (offset < log.logEndOffset) {
      const plan = await log.read(offset, 3000, { into });
      expect(plan.parts).toHaveLength(1);
      const part = plan.parts[0]!;
      expect(part.kind).toBe('file');
      if (part.kind === 'file') {
        expect(part.bytes?.buffer).toBe(into.buffer);
        expect(part.bytes?.length).toBe(part.length);
      }
      await plan.release();
      offset = plan.nextOffset;
      plans++;
    }
    expect(offset).toBe(300);
    expect(plans).toBeGreaterThan(5);
    await log.close();
  });
});
