// The defined behaviour of the low-level API for the obstacles a new
// embedder met (issue 19): durable()/written() of a record not yet
// appended, read() before written(), placement counted once and copied as a
// snapshot, leaderEpoch optional without a checkpoint fsync, direct-mode
// fallbacks reported, read-only indexes, buildBatch without timestamps.
// All on SimIo.
import { describe, expect, it } from 'vitest';
import { AlignedArena } from '@seglog/io';
import { buildBatch, RecordBatch } from '@seglog/records';
import { Log } from '../src/log/log.js';
import type { DirectFallback } from '../src/log/log.js';
import { OffsetIndex } from '../src/segment/offset-index.js';
import { config, newIo, openLog, producerBatch, T0 } from './log-helpers.js';

function codeOf(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}

async function outcome(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(() => 'resolved', codeOf);
}

describe('durable() and written() of an offset not yet appended', () => {
  it('reject with SEGLOG_ERR_LOG_OFFSET_NOT_APPENDED at once, and lastOffset resolves', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    expect(await outcome(log.durable(0))).toBe('SEGLOG_ERR_LOG_OFFSET_NOT_APPENDED');
    const result = await log.appendAsLeader(producerBatch(5));
    expect(log.logEndOffset).toBe(5);
    expect(await outcome(log.durable(log.logEndOffset))).toBe('SEGLOG_ERR_LOG_OFFSET_NOT_APPENDED');
    expect(await outcome(log.written(log.logEndOffset + 10))).toBe('SEGLOG_ERR_LOG_OFFSET_NOT_APPENDED');
    expect(await outcome(log.durable(result.lastOffset))).toBe('resolved');
    expect(log.durableOffset).toBe(5);
    await log.close();
  });
});

describe('read() before written()', () => {
  it('is an empty plan until the bytes are written; after written() the records are there', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    const result = await log.appendAsLeader(producerBatch(3));
    const early = await log.read(0, 1 << 20);
    // Accepted but maybe not yet written: never past writtenOffset.
    expect(early.totalBytes === 0 || log.writtenOffset === 3).toBe(true);
    await early.release();
    await log.written(result.lastOffset);
    const plan = await log.read(0, 1 << 20);
    expect(plan.nextOffset).toBe(3);
    await plan.release();
    await log.close();
  });
});

describe('placement', () => {
  it('counts tryRead() then read() once, and placementSnapshot() is a frozen copy', async () => {
    const io = await newIo();
    const log = await openLog(io, config({ segmentBytes: 4096 }));
    for (let i = 0; i < 40; i++) await log.appendAsLeader(producerBatch(1, { valueBytes: 200, tag: i }));
    await log.written(log.logEndOffset - 1);
    expect(log.numberOfSegments).toBeGreaterThan(1);
    const before = log.placementSnapshot();
    expect(Object.isFrozen(before)).toBe(true);
    expect(Object.isFrozen(before.read)).toBe(true);
    expect(Object.isFrozen(before.reasons)).toBe(true);
    expect(log.tryRead(0, 1 << 20)).toBeNull();
    const plan = await log.read(0, 1 << 20);
    await plan.release();
    const after = log.placementSnapshot();
    expect(after.read.pool - before.read.pool).toBe(1);
    expect(after.reasons.sealed - before.reasons.sealed).toBe(1);
    expect(after.read.caller).toBe(before.read.caller);
    // The snapshot does not move with the live counters.
    const again = await log.read(0, 1 << 20);
    await again.release();
    expect(after.read.pool).toBe(before.read.pool + 1);
    expect(log.placement.read.pool).toBe(before.read.pool + 2);
    await log.close();
  });
});

describe('leaderEpoch', () => {
  it('is optional: -1 is stamped, the epoch checkpoint is never written, appends stay on the caller', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    for (let i = 0; i < 5; i++) await log.appendAsLeader(producerBatch(2, { tag: i }));
    expect(log.placement.append.caller).toBe(5);
    expect(log.placement.reasons.epoch).toBe(0);
    expect(log.epochCache.latestEpoch()).toBeUndefined();
    const checkpoint = '/data/t-0/leader-epoch-checkpoint';
    const text = (await io.exists(checkpoint)) ? (await io.readFile(checkpoint)).toString('utf8') : '0\n0\n';
    expect(text).toBe('0\n0\n');
    await log.written(9);
    const plan = await log.read(0, 1 << 20);
    const bytes = await plan.toBuffer();
    await plan.release();
    expect(new RecordBatch(bytes).partitionLeaderEpoch).toBe(-1);
    await log.close();
  });

  it('an explicit epoch still goes through the checkpoint (replicated use)', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    expect(log.placement.reasons.epoch).toBe(1);
    expect(log.epochCache.latestEpoch()).toBe(0);
    await log.close();
  });
});

describe('direct-mode fallback', () => {
  it('is reported through onDirectFallback with its reason, and counted', async () => {
    const io = await newIo();
    const arena = new AlignedArena({ chunkBytes: 64 * 1024, chunkCount: 1 });
    const seen: DirectFallback[] = [];
    const cfg = config({ writeMode: 'direct' });
    const open = (dir: string): Promise<Log> => Log.open(io, dir, cfg, {
      topic: 't', partition: 0, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: true, arena,
      onDirectFallback: (fallback) => seen.push(fallback),
    });
    const a = await open('/data/a-0');
    const b = await open('/data/b-0');
    expect(a.writeMode).toBe('direct');
    expect(b.writeMode).toBe('buffered');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.reason).toBe('staging');
    expect(seen[0]!.segmentBaseOffset).toBe(0);
    expect(codeOf(seen[0]!.cause)).toBe('SEGLOG_ERR_LOG_STAGING_EXHAUSTED');
    expect(b.metrics.directFallbacks).toBe(1);
    await b.close();
    await a.close();
  });
});

describe('read-only index', () => {
  it('an append throws the typed SEGLOG_ERR_INDEX_READ_ONLY, not an AssertionError', async () => {
    const io = await newIo();
    const path = '/data/00000000000000000000.index';
    const writer = await OffsetIndex.open(io, path, { baseOffset: 0, maxIndexBytes: 64 });
    writer.append(3, 100);
    await writer.close();
    const reader = await OffsetIndex.open(io, path, { baseOffset: 0, maxIndexBytes: 64, readOnly: true });
    let error: unknown;
    try {
      reader.append(10, 200);
    } catch (caught) {
      error = caught;
    }
    expect(codeOf(error)).toBe('SEGLOG_ERR_INDEX_READ_ONLY');
    expect(reader.entries).toBe(1);
    await reader.close();
  });
});

describe('buildBatch without timestamps', () => {
  it('stamps now() as a producer does (CreateTime), deltas relative to it', () => {
    const bytes = buildBatch({ records: [{ value: 'a' }, { value: 'b', timestampDelta: 5 }], now: () => T0 });
    const batch = new RecordBatch(bytes);
    expect(batch.baseTimestamp).toBe(T0);
    expect(batch.maxTimestamp).toBe(T0 + 5);
    expect(batch.toRecords().map((r) => r.timestamp)).toEqual([T0, T0 + 5]);
    expect(batch.isValid()).toBe(true);
  });

  it('defaults to the wall clock', () => {
    const low = Date.now();
    const batch = new RecordBatch(buildBatch({ records: [{ value: 'x' }] }));
    expect(batch.baseTimestamp).toBeGreaterThanOrEqual(low);
    expect(batch.baseTimestamp).toBeLessThanOrEqual(Date.now());
  });
});
