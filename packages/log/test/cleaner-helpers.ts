// Helpers for the log cleaner tests (not a test file itself).

import { buildBatch, RecordBatch, splitBatches } from '@seglog/records';
import type { Log } from '../src/log/log.js';
import { LogCleaner } from '../src/cleaner/log-cleaner.js';
import type { ComputeMode } from '../src/cleaner/cleaner-compute.js';
import type { Io } from '@seglog/io';

export interface ReadRecord {
  readonly offset: number;
  readonly key: string | null;
  readonly value: string | null;
  readonly producerId: number;
}

/** Every batch from the log start to the written offset, CRC-checked (throws on a bad one), copied out. */
export async function readBatches(log: Log): Promise<RecordBatch[]> {
  const out: RecordBatch[] = [];
  let offset = log.logStartOffset;
  for (;;) {
    const plan = await log.read(offset, 1 << 20);
    if (plan.isEmpty) {
      await plan.release();
      return out;
    }
    const bytes = Buffer.from(await plan.toBuffer());
    await plan.release();
    for (const batch of splitBatches(bytes)) {
      if (!batch.isValid()) throw new Error(`invalid CRC at ${batch.baseOffset}`);
      out.push(batch);
    }
    offset = plan.nextOffset;
  }
}

/** The data records (no control batches), in offset order. */
export function dataRecords(batches: readonly RecordBatch[]): ReadRecord[] {
  const out: ReadRecord[] = [];
  for (const batch of batches) {
    if (batch.isControl) continue;
    for (const record of batch.toRecords()) {
      out.push({ offset: record.offset, key: record.key?.toString() ?? null, value: record.value?.toString() ?? null, producerId: batch.producerId });
    }
  }
  return out;
}

/** The last record per key, in read order (what a consumer rebuilding a table gets). */
export function latestByKey(records: readonly ReadRecord[]): Map<string, string | null> {
  const map = new Map<string, string | null>();
  for (const record of records) if (record.key !== null) map.set(record.key, record.value);
  return map;
}

export function keyed(records: ReadonlyArray<readonly [string, string | null]>, timestamp: number): Buffer {
  return buildBatch({ records: records.map(([key, value]) => ({ key, value, timestamp })) });
}

/** A cleaner of `logs` with no pool; its compute is the engine's default (the worker thread) unless `compute` says. */
export function cleanerFor(io: Io, logs: () => readonly Log[], now: () => number, offsetMapBytes?: number, compute?: ComputeMode): LogCleaner {
  return new LogCleaner({ io, dataDir: '/data', logs, pool: null, now, ...(offsetMapBytes === undefined ? {} : { offsetMapBytes }), ...(compute === undefined ? {} : { compute }) });
}
