// PlanBatchReader with verifyCrc and indexRecords: the records a cursor reads
// from its batches are the ones the plain reader's batches give, through the
// synchronous path (small windows: one native call per window in push()) and
// scan()'s pipeline (windows of 64 KiB and more: the window's index job runs
// on the threadpool while the previous plan is handed out). A byte flipped in
// a plan's bytes fails the scan with CRC_MISMATCH, a throwing onBatch fails
// it too, and neither leaves a read or an index job in flight.
import { capabilities } from '@seglog/native';
import { describe, expect, it, vi } from 'vitest';
import { BatchWindowIndex, RecordCursor, type RecordBatch } from '@seglog/records';
import type { FetchPlan } from '../src/fetch-plan.js';
import { PlanBatchReader } from '../src/plan-batch-reader.js';
import { producerBatch, reopenedLog } from './log-helpers.js';
import type { Log } from '../src/index.js';

const cursor = new RecordCursor();

/** offset:value-hex of every record scan() hands out, and how many batches came with record entries. */
async function scanRecords(log: Log, reader: PlanBatchReader, maxBytes: number): Promise<{ records: string[]; indexed: number }> {
  const records: string[] = [];
  let indexed = 0;
  const end = await reader.scan(log, { fromOffset: 0, toOffset: log.logEndOffset, maxBytes }, (batch: RecordBatch) => {
    if (batch.recordIndex !== null) indexed++;
    cursor.open(batch);
    while (cursor.next()) records.push(`${cursor.offset}:${cursor.value!.toString('hex')}`);
  });
  expect(end).toBe(log.logEndOffset);
  return { records, indexed };
}

describe('PlanBatchReader verifyCrc + indexRecords', () => {
  // 960 batches of 10 records of 100 B: ~1.1 MiB over several segments, every plan a file part.
  it.each([
    { windowBytes: 4000, maxBytes: 3000, path: 'push() indexes each window' },
    { windowBytes: 128 * 1024, maxBytes: 128 * 1024, path: 'scan() pipelines the index jobs' },
  ])('decodes the same records as the plain reader ($path)', async ({ windowBytes, maxBytes }) => {
    const log = await reopenedLog(300_000, 960, 10);
    const want = await scanRecords(log, new PlanBatchReader({ windowBytes }), maxBytes);
    expect(want.records).toHaveLength(960 * 10);
    expect(want.indexed).toBe(0);
    const reader = new PlanBatchReader({ windowBytes, verifyCrc: true, indexRecords: true });
    // The pipeline's windows are walked by jobs: a walk on the event loop as well would be the work twice.
    const walksOnLoop = vi.spyOn(BatchWindowIndex.prototype, 'index');
    try {
      for (let round = 0; round < 2; round++) {
        const got = await scanRecords(log, reader, maxBytes);
        expect(got.records).toEqual(want.records);
        // With the addon, the batches read whole from a window come with entries (those straddling windows do not).
        if (capabilities.loaded) expect(got.indexed).toBeGreaterThan(windowBytes > 100_000 ? 900 : 400);
        else expect(got.indexed).toBe(0);
      }
      // (A plan under 64 KiB, a segment's last, is walked on the loop: the hop would cost more.)
      const large = walksOnLoop.mock.calls.filter(([, from, to]) => to - from >= 64 * 1024);
      if (capabilities.loaded && windowBytes > 100_000) expect(large).toEqual([]);
      else expect(walksOnLoop).toHaveBeenCalled();
    } finally {
      walksOnLoop.mockRestore();
    }
    await log.close();
  });

  // Reads larger than the windows: each plan's file part is pread through the reader's two windows in turn, so the
  // same window Buffer comes back with other bytes. With windows of exactly three batches every window starts and
  // ends at the same positions: each refill must still be walked again, not taken for the window before.
  it('decodes the same records when plans are larger than the windows (windows refilled within a plan)', async () => {
    const log = await reopenedLog(300_000, 960, 10);
    const size = producerBatch(10, { valueBytes: 100 }).length;
    const windowBytes = 3 * size;
    const want = await scanRecords(log, new PlanBatchReader({ windowBytes }), 40_000);
    const reader = new PlanBatchReader({ windowBytes, verifyCrc: true, indexRecords: true });
    const got = await scanRecords(log, reader, 40_000);
    expect(got.records).toEqual(want.records);
    if (capabilities.loaded) expect(got.indexed).toBe(960);
    // read() of one plan of many windows, too.
    const plan = await log.read(0, 40_000);
    expect(plan.parts.every((part) => part.kind === 'file' && part.bytes === undefined)).toBe(true);
    const records: string[] = [];
    await reader.read(plan, (batch) => {
      cursor.open(batch);
      while (cursor.next()) records.push(`${cursor.offset}:${cursor.value!.toString('hex')}`);
    });
    await plan.release();
    expect(records).toEqual(want.records.slice(0, records.length));
    expect(records.length).toBeGreaterThan(30);
    await log.close();
  });

  it.each([4000, 128 * 1024])('fails with CRC_MISMATCH on a flipped byte, with nothing left in flight (windows of %d B)', async (windowBytes) => {
    const log = await reopenedLog(300_000, 960, 10);
    let plans = 0;
    const source = {
      async read(offset: number, maxBytes: number, options?: { readonly into?: Buffer }): Promise<FetchPlan> {
        const plan = await log.read(offset, maxBytes, options);
        const part = plan.parts[0];
        // The third plan's bytes (in the reader's window) get one payload byte flipped, as a bad disk would.
        if (++plans === 3 && part?.kind === 'file' && part.bytes !== undefined) part.bytes[part.bytes.length - 7]! ^= 0x40;
        return plan;
      },
    };
    const reader = new PlanBatchReader({ windowBytes, verifyCrc: true });
    let seen = 0;
    await expect(reader.scan(source, { fromOffset: 0, toOffset: log.logEndOffset, maxBytes: windowBytes }, () => { seen++; }))
      .rejects.toMatchObject({ code: 'SEGLOG_ERR_RECORDS_CRC_MISMATCH' });
    expect(seen).toBeGreaterThan(0);
    // The same reader scans the intact log again: nothing of the failed scan is pending.
    const again = await scanRecords(log, reader, windowBytes);
    expect(again.records).toHaveLength(960 * 10);
    await log.close();
  });

  // A read ahead that fails while a plan is handed out is awaited later: it must not surface as an unhandled rejection
  // (vitest fails the run on one; Node's default ends the process). Both scan paths: the pipeline and the plain one.
  it.each([true, false])('a failing read fails scan() with its error and nothing unhandled (indexRecords %s)', async (indexRecords) => {
    const log = await reopenedLog(300_000, 960, 10);
    const reader = new PlanBatchReader({ windowBytes: 128 * 1024, verifyCrc: indexRecords, indexRecords });
    for (const failAt of [1, 2, 4]) {
      let reads = 0;
      const source = {
        read: (offset: number, maxBytes: number, options?: { readonly into?: Buffer }): Promise<FetchPlan> =>
          ++reads === failAt ? Promise.reject(new Error(`read ${failAt} failed`)) : log.read(offset, maxBytes, options),
      };
      await expect(reader.scan(source, { fromOffset: 0, toOffset: log.logEndOffset, maxBytes: 128 * 1024 }, () => undefined)).rejects.toThrow(`read ${failAt} failed`);
      expect((await scanRecords(log, reader, 128 * 1024)).records).toHaveLength(960 * 10);
    }
    await log.close();
  });

  it('a throwing onBatch fails scan() mid-pipeline; the reader then scans again', async () => {
    const log = await reopenedLog(300_000, 960, 10);
    const reader = new PlanBatchReader({ windowBytes: 128 * 1024, verifyCrc: true, indexRecords: true });
    for (const failAt of [1, 30, 200, 959]) {
      let seen = 0;
      await expect(reader.scan(log, { fromOffset: 0, toOffset: log.logEndOffset, maxBytes: 128 * 1024 }, () => {
        if (++seen === failAt) throw new Error('stop here');
      })).rejects.toThrow('stop here');
      expect((await scanRecords(log, reader, 128 * 1024)).records).toHaveLength(960 * 10);
    }
    await log.close();
  });
});
