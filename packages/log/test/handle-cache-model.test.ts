// The handle cache against a model (issue 24): LogManager on SimIo with a
// budget of 2 idle segment-file descriptors and one-batch segments, three
// partitions; fast-check interleaves appends, reads of random old offsets,
// reads whose plans are held across later commands (their segment may be
// deleted by retention meanwhile, with no file-delete delay, so a plan whose
// handle the cache closed could not be served), deleteRecords + retention,
// and clean reopens. Every byte read is checked against the model, and the
// descriptors open never exceed the budget plus what active segments, held
// plans and the command in flight keep.
import type { SimIo } from '@seglog/io';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FetchPlan } from '../src/fetch-plan.js';
import { LogManager } from '../src/log-manager.js';
import { splitBatches } from '@seglog/records';
import { config, newIo, producerBatch } from './log-helpers.js';

const PARTITIONS = 3;
const BUDGET = 2;

type Command =
  | { readonly kind: 'append'; readonly p: number; readonly records: number }
  | { readonly kind: 'read'; readonly p: number; readonly at: number; readonly hold: boolean }
  | { readonly kind: 'release' }
  | { readonly kind: 'retain'; readonly p: number; readonly at: number }
  | { readonly kind: 'reopen' };

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('append' as const), p: fc.nat(PARTITIONS - 1), records: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('read' as const), p: fc.nat(PARTITIONS - 1), at: fc.double({ min: 0, max: 1, noNaN: true }), hold: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('release' as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('retain' as const), p: fc.nat(PARTITIONS - 1), at: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reopen' as const) }) },
);

interface Held {
  readonly plan: FetchPlan;
  readonly p: number;
  readonly from: number;
}

function open(io: SimIo): Promise<LogManager> {
  // ~300-byte batches in 512-byte segments: every batch gets a segment of its own.
  const defaultConfig = config({ segmentBytes: 512, segmentIndexBytes: 4096, indexIntervalBytes: 64, fileDeleteDelayMs: 0 });
  return LogManager.open(io, '/data/dir', { defaultConfig, minFreeBytes: 0, checkpointIntervalMs: 0, maxOpenSegmentFiles: BUDGET });
}

/** The records of a plan's bytes at offsets ≥ from, checked against the model. */
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

describe('handle cache (2 descriptors) against a model', () => {
  it('a plan keeps its .log open while other reads evict, and is served after retention unlinked the segment', async () => {
    const io = await newIo();
    const manager = await open(io);
    const log = await manager.getOrCreateLog('t', 0);
    const values: string[] = [];
    for (let i = 0; i < 12; i++) {
      const batch = producerBatch(2, { valueBytes: 64, tag: i });
      for (const record of splitBatches(batch)[0]?.toRecords() ?? []) values.push(record.value?.toString('hex') ?? '');
      await log.appendAsLeader(batch, { leaderEpoch: 0 });
    }
    log.updateHighWatermark(log.logEndOffset);
    expect(log.numberOfSegments).toBeGreaterThan(BUDGET + 2);
    const plan = await log.read(0, 300);
    const part = plan.parts[0];
    expect(part?.kind).toBe('file');
    const evictionsBefore = manager.handleStats().evictions;
    for (let offset = 2; offset < log.logEndOffset; offset += 2) await (await log.read(offset, 300)).release();
    expect(manager.handleStats().evictions).toBeGreaterThan(evictionsBefore);
    await log.deleteRecords(log.logEndOffset - 1);
    expect(await log.deleteOldSegments()).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 1));
    await new Promise((resolve) => setImmediate(resolve));
    expect(await io.exists('/data/dir/t-0/00000000000000000000.log.deleted')).toBe(false);
    expect(await check(plan, values, 0)).toBe(2);
    await plan.release();
    expect(manager.handleStats().open).toBeLessThanOrEqual(BUDGET + 3);
    await manager.close();
  });

  it('reads of random old offsets, held plans, appends, retention and reopens return every byte', async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 10, maxLength: 60 }), async (commands) => {
        runs++;
        const io = await newIo();
        let manager = await open(io);
        const models: string[][] = Array.from({ length: PARTITIONS }, () => []);
        const held: Held[] = [];
        let tag = 0;
        const log = async (p: number) => manager.getLog('t', p) ?? manager.getOrCreateLog('t', p);
        for (let p = 0; p < PARTITIONS; p++) await log(p);
        try {
          for (const c of commands) {
            if (c.kind === 'append') {
              const target = await log(c.p);
              const batch = producerBatch(c.records, { valueBytes: 64, tag: ++tag });
              // Before the append: the log patches the base offset into the buffer.
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
              if (c.hold) {
                held.push({ plan, p: c.p, from });
              } else {
                expect(await check(plan, models[c.p]!, from)).toBeGreaterThan(0);
                await plan.release();
              }
            } else if (c.kind === 'release') {
              const next = held.shift();
              if (next === undefined) continue;
              expect(await check(next.plan, models[next.p]!, next.from)).toBeGreaterThan(0);
              await next.plan.release();
            } else if (c.kind === 'retain') {
              const target = await log(c.p);
              const span = target.highWatermark - target.logStartOffset;
              await target.deleteRecords(target.logStartOffset + Math.floor(c.at * span));
              await target.deleteOldSegments();
              // Lets the delete timers (fileDeleteDelayMs 0) fire and unlink the `.deleted` files.
              await new Promise((resolve) => setTimeout(resolve, 1));
              await new Promise((resolve) => setImmediate(resolve));
            } else {
              for (const h of held.splice(0)) {
                expect(await check(h.plan, models[h.p]!, h.from)).toBeGreaterThan(0);
                await h.plan.release();
              }
              await manager.close();
              manager = await open(io);
            }
            const stats = manager.handleStats();
            // Budget + active segments (3 files each) + one .log per held plan.
            expect(stats.open).toBeLessThanOrEqual(BUDGET + 3 * PARTITIONS + held.length);
          }
          for (const h of held.splice(0)) {
            expect(await check(h.plan, models[h.p]!, h.from)).toBeGreaterThan(0);
            await h.plan.release();
          }
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
          }
        } finally {
          for (const h of held) await h.plan.release();
          await manager.close().catch(() => undefined);
        }
      }),
      { numRuns: 40, seed: 24 },
    );
    expect(runs).toBe(40);
  });
});
