// ReadOptions.skipRecordless (for consumers): a sealed segment whose rest is
// only record-less batches (what the cleaner leaves when every record of a
// group is superseded: the group's last batch, emptied, keeps its offsets) is
// passed over for the next segment's batches. Without the option the read
// returns those 61-byte batches and nothing else, which is the answer a
// client learning its next offset only from records (kafkajs 2.2.4) fetches
// again forever. Records are never skipped: a segment tail holding a record
// or a control batch is returned as before, and so is a record-less tail
// when no later segment has anything below the bound.

import { describe, expect, it } from 'vitest';
import { splitBatches } from '@seglog/records';
import { clock, config, newIo, openLog, T0 } from './log-helpers.js';
import { cleanerFor, keyed } from './cleaner-helpers.js';
import type { Log } from '../src/log/log.js';

// One 1-record batch (~75 B) per segment: every segment is its own cleaning group.
const COMPACT = { cleanupPolicy: 'compact', segmentBytes: 100, minCleanableDirtyRatio: 0.01 } as const;

async function batchesAt(log: Log, offset: number, skipRecordless: boolean): Promise<{ base: number; count: number }[]> {
  const plan = await log.read(offset, 1 << 20, { skipRecordless });
  const bytes = Buffer.from(await plan.toBuffer());
  await plan.release();
  return splitBatches(bytes).map((b) => ({ base: b.baseOffset, count: b.recordsCount }));
}

describe('read with skipRecordless', () => {
  it('passes over sealed segments left holding only empty batches; without it they come back alone', async () => {
    const io = await newIo();
    const c = clock();
    const log = await openLog(io, config(COMPACT), { now: c.fn });
    // Offsets 0..3 are superseded by 4..7; 8 stays in the active segment.
    for (let round = 0; round < 2; round++) for (let k = 0; k < 4; k++) await log.appendAsLeader(keyed([[`k${k}`, `v${round}`]], T0));
    await log.appendAsLeader(keyed([['tail', 'x']], T0));
    log.updateHighWatermark(log.logEndOffset);
    expect(log.segmentBaseOffsets()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    const stats = await cleanerFor(io, () => [log], c.fn).clean(log);
    expect(stats.removedRecords).toBe(4);

    // Without the option: the empty batch at offset 0 alone (the cleaner kept it to keep the segment).
    expect(await batchesAt(log, 0, false)).toEqual([{ base: 0, count: 0 }]);
    // With it: segments 0..3 are passed over, the first batch with a record comes back.
    expect(await batchesAt(log, 0, true)).toEqual([{ base: 4, count: 1 }]);
    expect(await batchesAt(log, 2, true)).toEqual([{ base: 4, count: 1 }]);
    // A segment with a record is read as before, with or without the option.
    expect(await batchesAt(log, 5, true)).toEqual([{ base: 5, count: 1 }]);
    // With the bound at 4, segments 1 and 2 are passed over, but nothing after segment 3 is below the bound:
    // its empty batch is the answer, and the next read from 4 waits for the bound to move.
    const plan = await log.read(1, 1 << 20, { skipRecordless: true, maxOffset: 4 });
    expect([plan.firstOffset, plan.nextOffset, plan.totalBytes]).toEqual([3, 4, 61]);
    await plan.release();
    await log.close();
  });

  it('a consumer walking the cleaned log with the option sees every kept record, in order, and ends at the log end', async () => {
    const io = await newIo();
    const c = clock();
    const log = await openLog(io, config(COMPACT), { now: c.fn });
    for (let round = 0; round < 5; round++) for (let k = 0; k < 6; k++) await log.appendAsLeader(keyed([[`k${k}`, `v${round}-${k}`]], T0));
    log.updateHighWatermark(log.logEndOffset);
    await cleanerFor(io, () => [log], c.fn).clean(log);
    const seen: number[] = [];
    let offset = log.logStartOffset;
    let reads = 0;
    while (offset < log.highWatermark) {
      const plan = await log.read(offset, 1 << 20, { skipRecordless: true });
      const bytes = Buffer.from(await plan.toBuffer());
      await plan.release();
      for (const batch of splitBatches(bytes)) {
        expect(batch.isValid()).toBe(true);
        expect(batch.recordsCount).toBeGreaterThan(0);
        for (const record of batch.toRecords()) seen.push(record.offset);
      }
      offset = plan.nextOffset;
      expect(++reads).toBeLessThan(100);
    }
    // The latest of each key: round 4 (offsets 24..29). Offset 29 is in the active segment, which is
    // neither cleaned nor mapped, so k5's round-3 record (23) stays too, as in Kafka.
    expect(seen).toEqual([23, 24, 25, 26, 27, 28, 29]);
    await log.close();
  });
});
