// Lazily loaded sealed indexes under a tiny byte budget, against a model
// (issue 24): LogManager on SimIo with indexCacheBytes 48 (about one sealed
// segment's .index + .timeindex) and an index entry per batch, so nearly
// every read of an old offset loads an evicted index. fast-check interleaves
// appends, reads of random old offsets, deleteRecords + retention and clean
// reopens (which read only the active segments' indexes); every byte read is checked against
// the model, the budget's use stays within it plus the one segment just used,
// and loads and evictions really happened.
import type { SimIo } from '@seglog/io';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FetchPlan } from '../src/fetch-plan.js';
import { LogManager } from '../src/log-manager.js';
import { splitBatches } from '@seglog/records';
import { config, newIo, producerBatch } from './log-helpers.js';

const PARTITIONS = 2;
const BUDGET = 48;
/** A segment holds at most ~6 batches: 5 entries of 8 + 12 bytes. */
const MAX_SEGMENT_INDEX_BYTES = 6 * 20;

type Command =
  | { readonly kind: 'append'; readonly p: number; readonly records: number }
  | { readonly kind: 'read'; readonly p: number; readonly at: number }
  | { readonly kind: 'retain'; readonly p: number; readonly at: number }
  | { readonly kind: 'reopen' };

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('append' as const), p: fc.nat(PARTITIONS - 1), records: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('read' as const), p: fc.nat(PARTITIONS - 1), at: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('retain' as const), p: fc.nat(PARTITIONS - 1), at: fc.double({ min: 0, max: 0.5, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reopen' as const) }) },
);

function open(io: SimIo): Promise<LogManager> {
  const defaultConfig = config({ segmentBytes: 1800, segmentIndexBytes: 4096, indexIntervalBytes: 1, fileDeleteDelayMs: 0 });
  return LogManager.open(io, '/data/dir', { defaultConfig, minFreeBytes: 0, checkpointIntervalMs: 0, indexCacheBytes: BUDGET });
}

async function check(plan: FetchPlan, model: readonly (string | undefined)[], from: number): Promise<number> {
  const bytes = await plan.toBuffer();
  let seen = 0;
  for (const batch of splitBatches(bytes)) {
    expect(batch.isValid()).toBe(true);
    for (const record of batch.toRecords()) {
      if (record.offset < from) continue;
      expect(record.value?.toString('hex')).toBe(model[record.offset]);
      seen++;
    }
  }
  return seen;
}

describe('sealed indexes under a 48-byte budget against a model', () => {
  it('reads of random old offsets, appends, retention and clean reopens return every byte; the budget holds', async () => {
    let runs = 0;
    let loads = 0;
    let evictions = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 20, maxLength: 80 }), async (commands) => {
        runs++;
        const io = await newIo();
        let manager = await open(io);
        const models: string[][] = Array.from({ length: PARTITIONS }, () => []);
        let tag = 0;
        const log = async (p: number) => manager.getLog('t', p) ?? manager.getOrCreateLog('t', p);
        const tally = () => {
          const stats = manager.indexStats();
          loads += stats.loads;
          evictions += stats.evictions;
        };
        for (let p = 0; p < PARTITIONS; p++) await log(p);
        try {
          for (const c of commands) {
            if (c.kind === 'append') {
              const target = await log(c.p);
              const batch = producerBatch(c.records, { valueBytes: 64, tag: ++tag });
              const values = (splitBatches(batch)[0]?.toRecords() ?? []).map((record) => record.value?.toString('hex') ?? '');
              const result = await target.appendAsLeader(batch, { leaderEpoch: 0 });
              values.forEach((value, i) => (models[c.p]![result.firstOffset + i] = value));
              target.updateHighWatermark(target.logEndOffset);
            } else if (c.kind === 'read') {
              const target = await log(c.p);
              const span = target.logEndOffset - target.logStartOffset;
              if (span === 0) continue;
              const from = target.logStartOffset + Math.min(span - 1, Math.floor(c.at * span));
              const plan = await target.read(from, 700);
              expect(await check(plan, models[c.p]!, from)).toBeGreaterThan(0);
              await plan.release();
            } else if (c.kind === 'retain') {
              const target = await log(c.p);
              const span = target.highWatermark - target.logStartOffset;
              await target.deleteRecords(target.logStartOffset + Math.floor(c.at * span));
              await target.deleteOldSegments();
              await new Promise((resolve) => setTimeout(resolve, 1));
              await new Promise((resolve) => setImmediate(resolve));
            } else {
              tally();
              await manager.close();
              manager = await open(io);
              // A clean open reads no sealed index: only each log's active segment loads its own (twice at
              // most: another log's load may evict it between loadState and the pin in resizeIndexes).
              expect(manager.indexStats().loads).toBeLessThanOrEqual(2 * PARTITIONS);
            }
            expect(manager.indexStats().usedBytes).toBeLessThanOrEqual(BUDGET + MAX_SEGMENT_INDEX_BYTES);
          }
          tally();
          await manager.close();
          manager = await open(io);
          for (let p = 0; p < PARTITIONS; p++) {
            const target = await log(p);
            for (let offset = target.logStartOffset; offset < target.logEndOffset;) {
              const plan = await target.read(offset, 4096);
              expect(await check(plan, models[p]!, offset)).toBeGreaterThan(0);
              offset = plan.nextOffset;
              await plan.release();
            }
            expect(manager.indexStats().usedBytes).toBeLessThanOrEqual(BUDGET + MAX_SEGMENT_INDEX_BYTES);
          }
          tally();
        } finally {
          await manager.close().catch(() => undefined);
        }
      }),
      { numRuns: 30, seed: 2424 },
    );
    expect(runs).toBe(30);
    // The property ran through lazy loads and evictions, not around them.
    expect(loads).toBeGreaterThan(30);
    expect(evictions).toBeGreaterThan(30);
  });
});
