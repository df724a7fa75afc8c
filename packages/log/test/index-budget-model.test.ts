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
import { LogManager } from '../src/log-manager.js';
import { config } from './log-helpers.js';
import { ModelCheck, appendCommand, readCommand, reopenCommand, retainCommand } from './model-check.js';
import type { AppendCommand, ReadCommand, ReopenCommand, RetainCommand } from './model-check.js';

const PARTITIONS = 2;
const BUDGET = 48;
/** A segment holds at most ~6 batches: 5 entries of 8 + 12 bytes. */
const MAX_SEGMENT_INDEX_BYTES = 6 * 20;

type Command = AppendCommand | ReadCommand | RetainCommand | ReopenCommand;

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: appendCommand(PARTITIONS) },
  { weight: 6, arbitrary: readCommand(PARTITIONS) },
  { weight: 1, arbitrary: retainCommand(PARTITIONS, 0.5) },
  { weight: 1, arbitrary: reopenCommand() },
);

function open(io: SimIo): Promise<LogManager> {
  const defaultConfig = config({ segmentBytes: 1800, segmentIndexBytes: 4096, indexIntervalBytes: 1, fileDeleteDelayMs: 0 });
  return LogManager.open(io, '/data/dir', { defaultConfig, minFreeBytes: 0, checkpointIntervalMs: 0, indexCacheBytes: BUDGET });
}

describe('sealed indexes under a 48-byte budget against a model', () => {
  it('reads of random old offsets, appends, retention and clean reopens return every byte; the budget holds', async () => {
    let runs = 0;
    let loads = 0;
    let evictions = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 20, maxLength: 80 }), async (commands) => {
        runs++;
        const run = await ModelCheck.start(open, PARTITIONS);
        const tally = () => {
          const stats = run.manager.indexStats();
          loads += stats.loads;
          evictions += stats.evictions;
        };
        try {
          for (const c of commands) {
            if (c.kind === 'append') {
              await run.append(c.p, c.records);
            } else if (c.kind === 'read') {
              const read = await run.read(c.p, c.at);
              if (read === undefined) continue;
              await run.checkAndRelease(read);
            } else if (c.kind === 'retain') {
              await run.retain(c.p, c.at);
            } else {
              tally();
              await run.reopen();
              // A clean open reads no sealed index: only each log's active segment loads its own (twice at
              // most: another log's load may evict it between loadState and the pin in resizeIndexes).
              expect(run.manager.indexStats().loads).toBeLessThanOrEqual(2 * PARTITIONS);
            }
            expect(run.manager.indexStats().usedBytes).toBeLessThanOrEqual(BUDGET + MAX_SEGMENT_INDEX_BYTES);
          }
          tally();
          await run.reopen();
          for (let p = 0; p < PARTITIONS; p++) {
            await run.checkAll(p);
            expect(run.manager.indexStats().usedBytes).toBeLessThanOrEqual(BUDGET + MAX_SEGMENT_INDEX_BYTES);
          }
          tally();
        } finally {
          await run.close();
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
