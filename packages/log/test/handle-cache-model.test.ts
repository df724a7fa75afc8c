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
import { LogManager } from '../src/log-manager.js';
import { splitBatches } from '@seglog/records';
import { config, newIo, producerBatch } from './log-helpers.js';
import { ModelCheck, appendCommand, check, reopenCommand, retainCommand } from './model-check.js';
import type { AppendCommand, ModelRead, ReopenCommand, RetainCommand } from './model-check.js';

const PARTITIONS = 3;
const BUDGET = 2;

type Command =
  | AppendCommand
  | { readonly kind: 'read'; readonly p: number; readonly at: number; readonly hold: boolean }
  | { readonly kind: 'release' }
  | RetainCommand
  | ReopenCommand;

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 5, arbitrary: appendCommand(PARTITIONS) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('read' as const), p: fc.nat(PARTITIONS - 1), at: fc.double({ min: 0, max: 1, noNaN: true }), hold: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('release' as const) }) },
  { weight: 3, arbitrary: retainCommand(PARTITIONS, 1) },
  { weight: 1, arbitrary: reopenCommand() },
);

function open(io: SimIo): Promise<LogManager> {
  // ~300-byte batches in 512-byte segments: every batch gets a segment of its own.
  const defaultConfig = config({ segmentBytes: 512, segmentIndexBytes: 4096, indexIntervalBytes: 64, fileDeleteDelayMs: 0 });
  return LogManager.open(io, '/data/dir', { defaultConfig, minFreeBytes: 0, checkpointIntervalMs: 0, maxOpenSegmentFiles: BUDGET });
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
        const run = await ModelCheck.start(open, PARTITIONS);
        const held: ModelRead[] = [];
        try {
          for (const c of commands) {
            if (c.kind === 'append') {
              await run.append(c.p, c.records);
            } else if (c.kind === 'read') {
              const read = await run.read(c.p, c.at);
              if (read === undefined) continue;
              if (c.hold) held.push(read);
              else await run.checkAndRelease(read);
            } else if (c.kind === 'release') {
              const next = held.shift();
              if (next === undefined) continue;
              await run.checkAndRelease(next);
            } else if (c.kind === 'retain') {
              await run.retain(c.p, c.at);
            } else {
              for (const h of held.splice(0)) await run.checkAndRelease(h);
              await run.reopen();
            }
            const stats = run.manager.handleStats();
            // Budget + active segments (3 files each) + one .log per held plan.
            expect(stats.open).toBeLessThanOrEqual(BUDGET + 3 * PARTITIONS + held.length);
          }
          for (const h of held.splice(0)) await run.checkAndRelease(h);
          await run.reopen();
          for (let p = 0; p < PARTITIONS; p++) await run.checkAll(p);
        } finally {
          for (const h of held) await h.plan.release();
          await run.close();
        }
      }),
      { numRuns: 40, seed: 24 },
    );
    expect(runs).toBe(40);
  });
});
