// The streaming accumulator's merge jobs (merge-job.ts) and the worker pool
// that runs them (merge-pool.ts): a merge is bounded by its compressed size,
// holds the oldest records in order with their timestamps and the span's
// base sequence, and takes as many as fit (the first refused one does not
// fit alone after it); a plain job holds them all. The same job gives the
// same bytes on a worker thread as on this one, and a failing job or worker
// gives a failure result, never a rejection.

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Codec, RecordBatch, RecordCursor } from '@seglog/records';
import type { CodecId } from '@seglog/records';
import type { MergeJob, MergeResult } from '../src/merge-job.js';
import { runMergeJob } from '../src/merge-job.js';
import { MergePool } from '../src/merge-pool.js';
import { fillPayload } from '../src/payload.js';

const CODECS: readonly CodecId[] = [Codec.gzip, Codec.snappy, Codec.lz4, Codec.zstd];
/** A record's framing plus a codec's worst-case framing of it (stored blocks, flush marker, stream end). */
const RECORD_SLACK_BYTES = 256;

function job(id: number, kind: MergeJob['kind'], codec: CodecId, count: number, recordBytes: number, maxBytes: number, seed: number): MergeJob {
  const values = Buffer.allocUnsafeSlow(count * recordBytes);
  const timestamps = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    fillPayload(values, i * recordBytes, recordBytes, { producer: seed & 7, partition: 1, sequence: i }, seed % 3 === 0 ? 'random' : 'text');
    timestamps[i] = 1_700_000_000_000 + i * 7 - (i % 5);
  }
  return { id, kind, codec, maxBytes, producerId: 42, producerEpoch: 3, baseSequence: 100 + seed, recordBytes, values, timestamps, fault: null };
}

/** The batch's records are the job's first `accepted`, in order, with their timestamps; header fields as asked. */
function expectHolds(j: MergeJob, r: MergeResult): void {
  expect(r.failure).toBeNull();
  const batch = new RecordBatch(Buffer.from(r.batch as Uint8Array));
  expect(batch.isValid()).toBe(true);
  expect(batch.sizeInBytes).toBeLessThanOrEqual(j.maxBytes);
  expect(batch.recordsCount).toBe(r.accepted);
  expect(batch.baseSequence).toBe(j.baseSequence);
  expect(batch.producerId).toBe(42);
  expect(batch.producerEpoch).toBe(3);
  const cursor = new RecordCursor().open(batch);
  let i = 0;
  while (cursor.next()) {
    expect(cursor.timestamp).toBe(j.timestamps[i]);
    expect(Buffer.compare(cursor.value as Buffer, Buffer.from(j.values.subarray(i * j.recordBytes, (i + 1) * j.recordBytes)))).toBe(0);
    i++;
  }
  cursor.close();
  expect(i).toBe(r.accepted);
}

describe('merge jobs', () => {
  it('a merge is bounded by its compressed size and holds the oldest records; a plain job holds all of them', () => {
    fc.assert(fc.property(
      fc.constantFrom(...CODECS), fc.integer({ min: 1, max: 400 }), fc.integer({ min: 12, max: 700 }), fc.integer({ min: 2048, max: 64 * 1024 }), fc.nat(1000),
      (codec, count, recordBytes, maxBytes, seed) => {
        const merge = job(1, 'merge', codec, count, recordBytes, maxBytes, seed);
        const r = runMergeJob(merge);
        expectHolds(merge, r);
        expect(r.accepted).toBeGreaterThanOrEqual(1);
        if (r.accepted < count) {
          // It stopped because the next record did not fit by the codec's worst case: the batch is that close to the bound.
          expect((r.batch as Uint8Array).length).toBeGreaterThan(maxBytes - (recordBytes + RECORD_SLACK_BYTES));
        }
        const plainCount = Math.min(count, Math.max(1, Math.floor((maxBytes - 61) / (recordBytes + 16))));
        const plain = job(3, 'plain', codec, plainCount, recordBytes, maxBytes, seed);
        const p = runMergeJob(plain);
        expectHolds(plain, p);
        expect(p.accepted).toBe(plainCount);
      }), { numRuns: 60 });
  });

  it('a job whose values and timestamps disagree, or that is told to throw, fails with a reason', () => {
    const j = job(1, 'merge', Codec.gzip, 10, 100, 64 * 1024, 1);
    expect(runMergeJob({ ...j, timestamps: new Float64Array(9) }).failure).toMatch(/differ/);
    expect(runMergeJob({ ...j, fault: 'throw' })).toMatchObject({ accepted: 0, batch: null, failure: 'injected merge failure' });
  });
});

describe('merge pool', () => {
  it('a worker gives the same bytes as this thread, for every codec and both kinds; a worker that exits fails its job and is replaced', async () => {
    const pool = MergePool.shared(1);
    const inThread = MergePool.shared(0);
    for (const codec of CODECS) {
      for (const kind of ['merge', 'plain'] as const) {
        // A plain job is sized by the accumulator to fit maxBytes uncompressed (60 × 512 B < 32 KiB).
        const j = job(pool.newJobId(), kind, codec, kind === 'merge' ? 300 : 60, 512, 32 * 1024, 5);
        const here = runMergeJob(j);
        // The job's buffers move to the worker: send a copy.
        const there = await pool.run({ ...j, values: Buffer.from(j.values), timestamps: new Float64Array(j.timestamps) });
        expect(there.failure).toBeNull();
        expect(there.accepted).toBe(here.accepted);
        expect(Buffer.from(there.batch as Uint8Array).equals(Buffer.from(here.batch as Uint8Array))).toBe(true);
        const queued = await inThread.run({ ...j, values: Buffer.from(j.values), timestamps: new Float64Array(j.timestamps) });
        expect(Buffer.from(queued.batch as Uint8Array).equals(Buffer.from(here.batch as Uint8Array))).toBe(true);
      }
    }
    const dying = job(pool.newJobId(), 'merge', Codec.zstd, 50, 512, 32 * 1024, 6);
    const died = await pool.run({ ...dying, fault: 'exit' });
    expect(died).toMatchObject({ id: dying.id, accepted: 0, batch: null });
    expect(died.failure).toMatch(/exited/);
    const after = job(pool.newJobId(), 'merge', Codec.zstd, 50, 512, 32 * 1024, 6);
    expectHolds(after, await pool.run({ ...after, values: Buffer.from(after.values), timestamps: new Float64Array(after.timestamps) }));
  });

  it('a job not answered by its deadline fails, its worker is replaced, and the jobs queued behind it are answered', async () => {
    for (const size of [1, 0]) {
      const pool = MergePool.shared(size, 500);
      expect(pool.deadlineMs).toBe(500);
      expect(MergePool.shared(size, 500)).toBe(pool);
      expect(MergePool.shared(size)).not.toBe(pool);
      const hung = job(pool.newJobId(), 'merge', Codec.gzip, 50, 512, 32 * 1024, 7);
      const next = job(pool.newJobId(), 'merge', Codec.gzip, 50, 512, 32 * 1024, 8);
      const [a, b] = await Promise.all([
        pool.run({ ...hung, fault: 'hang' }),
        pool.run({ ...next, values: Buffer.from(next.values), timestamps: new Float64Array(next.timestamps) }),
      ]);
      expect(a).toMatchObject({ id: hung.id, accepted: 0, batch: null });
      expect(a.failure).toMatch(/hung: no answer in 500 ms/);
      expectHolds(next, b);
    }
  });

  it('jobs queued behind one worker are all answered, each with its own result', async () => {
    const pool = MergePool.shared(1);
    const jobs = Array.from({ length: 12 }, (_, i) => job(pool.newJobId(), i % 2 === 0 ? 'merge' : 'plain', CODECS[i % 4] as CodecId, 40 + i, 256, 16 * 1024, i));
    expect(jobs.every((j) => j.values.length < 16 * 1024 - 61 - 52 * 20)).toBe(true); // plain ones fit uncompressed
    const copies = jobs.map((j) => ({ ...j, values: Buffer.from(j.values), timestamps: new Float64Array(j.timestamps) }));
    const results = await Promise.all(copies.map((j) => pool.run(j)));
    results.forEach((r, i) => {
      expect(r.id).toBe((jobs[i] as MergeJob).id);
      expectHolds(jobs[i] as MergeJob, r);
    });
  });
});
