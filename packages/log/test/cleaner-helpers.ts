// Helpers for the log cleaner tests (not a test file itself).

import { buildBatch, RecordBatch, splitBatches } from '@seglog/records';
import type { Log } from '../src/log/log.js';
import { LogCleaner } from '../src/cleaner/log-cleaner.js';
import type { ComputeMode } from '../src/cleaner/cleaner-compute.js';
import type { Io } from '@seglog/io';
import { T0 } from './log-helpers.js';

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

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 0x1_0000_0000;
  };
}

/**
 * `batches` random batches, a fixed schedule per seed: 1-6 records of 25
 * keys (10 % tombstones, values up to ~120 B), as plain batches, batches of
 * one idempotent producer, or transactions committed or aborted at once.
 */
export async function appendRandomBatches(log: Log, seed: number, batches: number, t0 = T0): Promise<void> {
  const random = prng(seed);
  let sequence = 0;
  for (let b = 0; b < batches; b++) {
    const n = 1 + Math.floor(random() * 6);
    const records = Array.from({ length: n }, () => {
      const key = `k${Math.floor(random() * 25)}`;
      const value = random() < 0.1 ? null : `v${b}-${'x'.repeat(Math.floor(random() * 120))}`;
      return { key, value, timestamp: t0 - 10_000 + b };
    });
    const kind = random();
    if (kind < 0.2) {
      await log.appendAsLeader(buildBatch({ records, producerId: 7, producerEpoch: 0, baseSequence: sequence }));
      sequence += n;
    } else if (kind < 0.3) {
      const producerId = 100 + b;
      await log.appendAsLeader(buildBatch({ records, producerId, producerEpoch: 0, baseSequence: 0, transactional: true }));
      const commit = random() < 0.5;
      await log.appendMarker({ type: commit ? 'COMMIT' : 'ABORT', producerId, producerEpoch: 0, coordinatorEpoch: 0, leaderEpoch: -1, timestamp: t0 - 10_000 + b });
    } else {
      await log.appendAsLeader(buildBatch({ records }));
    }
  }
}
