// Placement of appends and reads (caller vs BlockingPool) on SimIo: each
// rule that sends an append to the pool, ordering (a fast append never
// overtakes a pooled one), reads from the tail cache (inline, zero-copy,
// valid after the file is truncated) vs the file, eviction under the global
// budget, queue admission under contention and under storage failure, the
// conservative epoch rule, and a follower whose reconciled frontier would hide
// a checkpoint rewrite.
import { BlockingPool, Priority } from '@seglog/io';
import type { IoFile, SimIo } from '@seglog/io';
import { buildBatch } from '@seglog/records';
import { describe, expect, it } from 'vitest';
import { LeaderEpochCache } from '../src/checkpoint/leader-epoch-cache.js';
import type { Log, PlacementReason } from '../src/log/log.js';
import { TailCacheBudget } from '../src/cache/tail-cache.js';
import { rejected } from './helpers.js';
import { config, DIR, newIo, openLog, producerBatch, readAll, T0 } from './log-helpers.js';

const SIZE = producerBatch(1, { valueBytes: 100 }).length;
const batch = (tag: number): Buffer => producerBatch(1, { valueBytes: 100, tag });

function snapshot(log: Log): { caller: number; pool: number; reasons: Record<string, number> } {
  return { caller: log.placement.append.caller, pool: log.placement.append.pool, reasons: { ...log.placement.reasons } };
}

/** Which reason counter moved between two snapshots (null: placed on the caller). */
function placedBy(before: ReturnType<typeof snapshot>, log: Log): PlacementReason | null {
  if (log.placement.append.caller === before.caller + 1 && log.placement.append.pool === before.pool) return null;
  expect(log.placement.append.pool).toBe(before.pool + 1);
  const moved = Object.entries(log.placement.reasons).filter(([k, v]) => v !== before.reasons[k]);
  expect(moved.length).toBe(1);
  return moved[0]![0] as PlacementReason;
}

async function warm(log: Log): Promise<void> {
  // The first append assigns epoch 0 (a checkpoint write): pool. Later ones may stay on the caller.
  await log.appendAsLeader(batch(0), { leaderEpoch: 0 });
  await log.written(log.logEndOffset - 1);
}

describe('append placement', () => {
  it('runs on the caller with no await: tryAppendAsLeader returns the result, appendAsLeader resolves already', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    let before = snapshot(log);
    await log.appendAsLeader(batch(0), { leaderEpoch: 0 });
    expect(placedBy(before, log)).toBe('epoch');
    before = snapshot(log);
    const result = log.tryAppendAsLeader(batch(1), { leaderEpoch: 0 });
    expect(result?.firstOffset).toBe(1);
    expect(log.logEndOffset).toBe(2);
    expect(placedBy(before, log)).toBeNull();
    // appendAsLeader on the caller: the log end moved before the promise was awaited.
    const promise = log.appendAsLeader(batch(2), { leaderEpoch: 0 });
    expect(log.logEndOffset).toBe(3);
    expect((await promise).firstOffset).toBe(2);
    await log.close();
  });

  it('sends each rule to the pool: roll, flush policy, LogAppendTime, transactional, control, epoch, room, reservation', async () => {
    const cases: Array<{ reason: PlacementReason; run: () => Promise<{ log: Log; go: () => Promise<unknown> }> }> = [
      { reason: 'roll', run: async () => { const log = await openLog(await newIo(), config({ segmentBytes: SIZE * 2 })); await warm(log); await log.appendAsLeader(batch(1), { leaderEpoch: 0 }); return { log, go: () => log.appendAsLeader(batch(2), { leaderEpoch: 0 }) }; } },
      { reason: 'flush', run: async () => { const log = await openLog(await newIo(), config({ flushIntervalMessages: 2 })); await warm(log); await log.durable(0); await log.appendAsLeader(batch(1), { leaderEpoch: 0 }); return { log, go: () => log.appendAsLeader(batch(2), { leaderEpoch: 0 }) }; } },
      { reason: 'timestamp', run: async () => { const log = await openLog(await newIo(), config({ messageTimestampType: 'LogAppendTime' }), { now: () => T0 }); await warm(log); return { log, go: () => log.appendAsLeader(batch(1), { leaderEpoch: 0 }) }; } },
      { reason: 'transactional', run: async () => { const log = await openLog(await newIo(), config(), { now: () => T0 }); await warm(log); return { log, go: () => log.appendAsLeader(buildBatch({ records: [{ value: 'x', timestamp: T0 }], producerId: 7, producerEpoch: 0, baseSequence: 0, transactional: true }), { leaderEpoch: 0 }) }; } },
      { reason: 'control', run: async () => { const log = await openLog(await newIo(), config(), { now: () => T0 }); await warm(log); return { log, go: () => log.appendMarker({ type: 'COMMIT', producerId: 9, producerEpoch: 0, coordinatorEpoch: 0, leaderEpoch: 0, timestamp: T0 }) }; } },
      { reason: 'epoch', run: async () => { const log = await openLog(await newIo(), config()); await warm(log); return { log, go: () => log.appendAsLeader(batch(1), { leaderEpoch: 1 }) }; } },
      { reason: 'room', run: async () => { const log = await openLog(await newIo(), config(), { writerLimits: { maxWriteBytes: 1 << 20, maxIovecs: 256, maxQueuedBytes: SIZE } }); await warm(log); return { log, go: () => { log.tryAppendAsLeader(batch(1), { leaderEpoch: 0 }); return log.appendAsLeader(batch(2), { leaderEpoch: 0 }); } }; } },
      { reason: 'reservation', run: async () => { const log = await openLog(await newIo(), config({ preallocate: true }), { reservationStepBytes: 4096 }); await warm(log); return { log, go: async () => { for (let i = 0; i < 8192 / SIZE; i++) await log.appendAsLeader(batch(i), { leaderEpoch: 0 }); } }; } },
    ];
    for (const { reason, run } of cases) {
      const { log, go } = await run();
      const before = snapshot(log);
      await go();
      expect(log.placement.reasons[reason], reason).toBeGreaterThan(before.reasons[reason]!);
      await log.written(log.logEndOffset - 1);
      expect((await readAll(log)).length, reason).toBe(log.logEndOffset - log.logStartOffset);
      await log.close();
    }
  });

  it('never lets a fast append overtake a pooled one (the pending rule)', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    await warm(log);
    const order: number[] = [];
    const pooled = log.appendAsLeader(batch(1), { leaderEpoch: 1 }).then((r) => order.push(r.firstOffset));
    const before = snapshot(log);
    expect(log.tryAppendAsLeader(batch(2), { leaderEpoch: 1 })).toBeNull();
    const queued = log.appendAsLeader(batch(2), { leaderEpoch: 1 }).then((r) => order.push(r.firstOffset));
    expect(placedBy(before, log)).toBe('pending');
    await Promise.all([pooled, queued]);
    expect(order).toEqual([1, 2]);
    // Nothing pending any more: back on the caller.
    const after = snapshot(log);
    log.tryAppendAsLeader(batch(3), { leaderEpoch: 1 });
    expect(placedBy(after, log)).toBeNull();
    await log.close();
  });
});

describe('conservative epochs', () => {
  it('an append that changes the leader epoch goes to the pool and its checkpoint is durable when it resolves', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    await warm(log);
    const before = snapshot(log);
    await log.appendAsLeader(batch(1), { leaderEpoch: 5 });
    expect(placedBy(before, log)).toBe('epoch');
    // Power loss right after the acknowledgement: the checkpoint already holds epoch 5.
    const survivor = io.recover('power-clean');
    const cache = await LeaderEpochCache.load(survivor, `${DIR}/leader-epoch-checkpoint`);
    expect(cache.epochEntries()).toEqual([{ epoch: 0, startOffset: 0 }, { epoch: 5, startOffset: 1 }]);
  });

  it('follower: a reconciled frontier (same epoch after truncation) waits for the checkpoint rewrite before acknowledging', async () => {
    const sim = await newIo();
    const gated = new GatedSyncIo(sim, 'leader-epoch-checkpoint');
    const log = await openLog(gated as unknown as SimIo, config());
    const leaderBatch = (base: number, epoch: number): Buffer => buildBatch({ records: [{ value: `v${base}`, timestamp: T0 }], baseOffset: base, partitionLeaderEpoch: epoch });
    for (let o = 0; o < 3; o++) await log.appendAsFollower(leaderBatch(o, 1));
    for (let o = 3; o < 6; o++) await log.appendAsFollower(leaderBatch(o, 2));
    await log.flush();
    // The new leader never had epoch 2: the follower truncates to 3 and continues at epoch 1. The rewrite is held.
    gated.hold();
    await log.truncateTo(3);
    expect(log.epochCache.hasUnwrittenChanges).toBe(true);
    // In memory nothing changes for epoch 1 at offset 3 (isUpdateNeeded is false): only the pending rewrite tells.
    expect(log.epochCache.isUpdateNeeded(1, 3)).toBe(false);
    const before = snapshot(log);
    expect(log.tryAppendAsFollower(leaderBatch(3, 1))).toBeNull();
    let acked = false;
    const append = log.appendAsFollower(leaderBatch(3, 1)).then(() => { acked = true; });
    expect(placedBy(before, log)).toBe('epoch');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(acked).toBe(false);
    gated.release();
    await append;
    const survivor = sim.recover('power-clean');
    const cache = await LeaderEpochCache.load(survivor, `${DIR}/leader-epoch-checkpoint`);
    expect(cache.epochEntries()).toEqual([{ epoch: 1, startOffset: 0 }]);
  });

  it('follower: every batch of one append is checked (an epoch change in the second batch goes to the pool)', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    const leaderBatch = (base: number, epoch: number): Buffer => buildBatch({ records: [{ value: `v${base}`, timestamp: T0 }], baseOffset: base, partitionLeaderEpoch: epoch });
    await log.appendAsFollower(leaderBatch(0, 0));
    await log.epochCache.flush();
    let before = snapshot(log);
    await log.appendAsFollower(leaderBatch(1, 0));
    expect(placedBy(before, log)).toBeNull();
    before = snapshot(log);
    await log.appendAsFollower(Buffer.concat([leaderBatch(2, 0), leaderBatch(3, 4)]));
    expect(placedBy(before, log)).toBe('epoch');
    expect(log.epochCache.epochEntries()).toEqual([{ epoch: 0, startOffset: 0 }, { epoch: 4, startOffset: 3 }]);
    await log.close();
  });
});

describe('read placement and the tail cache', () => {
  it('reads the active segment from the cache on the caller (inline views), sealed and evicted ranges from the file on the pool', async () => {
    const io = await newIo();
    const log = await openLog(io, config({ segmentBytes: SIZE * 4, indexIntervalBytes: 0 }));
    for (let i = 0; i < 6; i++) await log.appendAsLeader(batch(i), { leaderEpoch: 0 });
    await log.written(5);
    const cached = log.tryRead(4, 1 << 20);
    expect(cached).not.toBeNull();
    expect(cached!.parts.every((p) => p.kind === 'inline')).toBe(true);
    expect(cached!.nextOffset).toBe(6);
    const sealed = log.tryRead(1, 1 << 20);
    expect(sealed).toBeNull();
    // A null tryRead counts nothing; the read() that follows counts once.
    expect(log.placement.reasons.sealed).toBe(0);
    const fromFile = await log.read(1, 1 << 20);
    expect(log.placement.reasons.sealed).toBe(1);
    expect(fromFile.parts.every((p) => p.kind === 'file')).toBe(true);
    await fromFile.release();
    // Eviction of everything written: the active segment is read from the file too.
    log.tailCache.evict(Number.MAX_SAFE_INTEGER);
    const before = log.placement.reasons.uncached;
    const evicted = await log.read(4, 1 << 20);
    expect(log.placement.reasons.uncached).toBe(before + 1);
    expect(await evicted.toBuffer()).toEqual(Buffer.concat(cached!.parts.map((p) => (p.kind === 'inline' ? p.buffer : Buffer.alloc(0)))));
    await evicted.release();
    // New appends are cached again (the floor entry of offset 6 is its own batch), but a read from before the window is not.
    await log.appendAsLeader(batch(6), { leaderEpoch: 0 });
    await log.written(6);
    expect(log.tryRead(6, 1 << 20)).not.toBeNull();
    expect(log.tryRead(4, 1 << 20)).toBeNull();
    await log.close();
  });

  it('keeps serving cached bytes after the backing file is truncated; a file plan cannot', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    for (let i = 0; i < 5; i++) await log.appendAsLeader(batch(i), { leaderEpoch: 0 });
    await log.written(4);
    const cached = log.tryRead(2, 1 << 20)!;
    const expected = Buffer.concat(cached.parts.map((p) => (p.kind === 'inline' ? p.buffer : Buffer.alloc(0))));
    log.tailCache.evict(Number.MAX_SAFE_INTEGER);
    const file = await log.read(2, 1 << 20);
    await log.truncateTo(1);
    for (let i = 0; i < 5; i++) await log.appendAsLeader(batch(100 + i), { leaderEpoch: 0 });
    await log.written(5);
    expect(await cached.toBuffer()).toEqual(expected);
    // The file now holds other bytes at those positions (or fewer): the file plan no longer reads what was planned.
    const fileBytes = await file.toBuffer().catch((e: { code?: string }) => e.code);
    expect(fileBytes).not.toEqual(expected);
    await file.release();
    await log.close();
  });

  it('roll: the new active segment is cached from position 0; truncation into a sealed segment drops the window', async () => {
    const io = await newIo();
    const log = await openLog(io, config({ segmentBytes: SIZE * 3, indexIntervalBytes: 0 }));
    for (let i = 0; i < 4; i++) await log.appendAsLeader(batch(i), { leaderEpoch: 0 });
    await log.written(3);
    expect(log.segmentBaseOffsets()).toEqual([0, 3]);
    expect(log.tryRead(3, 1 << 20)?.nextOffset).toBe(4);
    await log.truncateTo(2);
    expect(log.segmentBaseOffsets()).toEqual([0]);
    expect(log.tryRead(1, 1 << 20)).toBeNull();
    // Offset 2's floor entry (batch 1 at position SIZE) is below the new window: the file. Offset 3's is its own batch.
    await log.appendAsLeader(batch(50), { leaderEpoch: 0 });
    await log.appendAsLeader(batch(51), { leaderEpoch: 0 });
    await log.written(3);
    expect(log.tryRead(2, 1 << 20)).toBeNull();
    expect(log.tryRead(3, 1 << 20)?.nextOffset).toBe(4);
    expect((await readAll(log)).length).toBe(4);
    await log.close();
  });

  it('evicts the least recently used logs under the global budget, on the pool; their reads go to the file and match', async () => {
    const io = await newIo();
    const pool = new BlockingPool({ concurrency: 2, maxQueued: 64 });
    const budget = new TailCacheBudget({ maxBytes: 32 * 1024, onOverBudget: () => void pool.submit(async () => budget.reclaim(), Priority.eviction) });
    const open = (name: string): Promise<Log> => openLog(io, config(), { pool, tailCache: { budget, chunkBytes: 16 * 1024 } }).then((l) => l).catch((e: unknown) => { throw new Error(`${name}: ${String(e)}`); });
    const a = await open('a');
    const values: Buffer[] = [];
    for (let i = 0; i < 300; i++) {
      const b = batch(i);
      values.push(Buffer.from(b));
      await a.appendAsLeader(b, { leaderEpoch: 0 });
    }
    await a.written(299);
    await pool.onIdle();
    expect(budget.reclaims).toBeGreaterThan(0);
    expect(budget.bytes).toBeLessThanOrEqual(32 * 1024 + 16 * 1024);
    expect(a.tailCache.evictions).toBeGreaterThan(0);
    expect(a.tryRead(0, 1 << 20)).toBeNull();
    expect((await readAll(a)).length).toBe(300);
    await a.close();
    await pool.close();
  });
});

describe('queue admission', () => {
  it('under contention: a full pool refuses pooled appends (retriable, nothing changed) while caller appends continue', async () => {
    const io = await newIo();
    const pool = new BlockingPool({ concurrency: 1, maxQueued: 1 });
    const log = await openLog(io, config(), { pool });
    await warm(log);
    let unblock!: () => void;
    const gate = new Promise<void>((resolve) => { unblock = resolve; });
    const blockers = [pool.submit(() => gate, Priority.read), pool.submit(() => gate, Priority.read)];
    expect(pool.hasRoom(Priority.append)).toBe(false);
    const end = log.logEndOffset;
    const refusal = await rejected(log.appendAsLeader(batch(1), { leaderEpoch: 2 }));
    expect(refusal.code).toBe('SEGLOG_ERR_LOG_QUEUE_FULL');
    expect((refusal as { retriable?: boolean }).retriable).toBe(true);
    expect(log.logEndOffset).toBe(end);
    expect(log.epochCache.latestEpoch()).toBe(0);
    // A caller append needs no pool slot.
    expect(log.tryAppendAsLeader(batch(2), { leaderEpoch: 0 })?.firstOffset).toBe(end);
    unblock();
    await Promise.all(blockers);
    expect((await log.appendAsLeader(batch(3), { leaderEpoch: 2 })).firstOffset).toBe(end + 1);
    await log.close();
    await pool.close();
  });

  it("refuses past the log's own bound of pending mutations", async () => {
    const io = await newIo();
    const log = await openLog(io, config(), { maxPendingMutations: 2 });
    await warm(log);
    const first = log.appendAsLeader(batch(1), { leaderEpoch: 1 });
    const second = log.appendAsLeader(batch(2), { leaderEpoch: 1 });
    const third = await rejected(log.appendAsLeader(batch(3), { leaderEpoch: 1 }));
    expect(third.code).toBe('SEGLOG_ERR_LOG_QUEUE_FULL');
    expect(third.context?.['queue']).toBe('log');
    expect((await first).firstOffset).toBe(1);
    expect((await second).firstOffset).toBe(2);
    await log.close();
  });

  for (const writeMode of ['buffered', 'direct'] as const) {
    it(`${writeMode}: under storage failure queued appends reject offline, new ones fail fast, the pool drains, written data stays readable`, async () => {
      const io: SimIo = await newIo();
      const pool = new BlockingPool({ concurrency: 2, maxQueued: 16 });
      const log = await openLog(io, config({ writeMode }), { pool });
      await warm(log);
      const before = await readAll(log);
      io.setFaults({ writeEio: { nth: 1, persistent: true, path: `${DIR}/` } });
      const results = await Promise.allSettled([1, 2, 3, 4].map((i) => log.appendAsLeader(batch(i), { leaderEpoch: i === 1 ? 0 : 1 }).then((r) => log.written(r.lastOffset))));
      expect(results.every((r) => r.status === 'rejected')).toBe(true);
      expect(log.state).toBe('offline');
      expect((await rejected(log.appendAsLeader(batch(9), { leaderEpoch: 1 }))).code).toBe('SEGLOG_ERR_LOG_OFFLINE');
      expect(log.tryRead(0, 1 << 20) ?? (await log.read(0, 1 << 20))).toBeDefined();
      expect(await readAll(log)).toEqual(before);
      await pool.onIdle();
      expect(pool.running + pool.queued).toBe(0);
      await log.close();
      await pool.close();
      expect(io.openHandles()).toEqual([]);
    });
  }
});

/** An Io whose file syncs under paths containing `match` wait while held (a slow checkpoint write). */
class GatedSyncIo {
  private gate: Promise<void> | null = null;
  private open_: (() => void) | null = null;
  constructor(readonly sim: SimIo, readonly match: string) {
    return new Proxy(this, {
      get: (target, prop) => {
        if (prop === 'open') return (path: string, options?: object) => target.openGated(path, options);
        if (prop in target) return Reflect.get(target, prop);
        const value = Reflect.get(sim, prop, sim) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(sim) : value;
      },
    });
  }
  hold(): void { this.gate = new Promise((resolve) => { this.open_ = resolve; }); }
  release(): void { this.open_?.(); this.gate = null; }
  async openGated(path: string, options?: object): Promise<IoFile> {
    const file = await this.sim.open(path, options);
    if (!path.includes(this.match)) return file;
    const waitGate = async (): Promise<void> => { if (this.gate !== null) await this.gate; };
    return new Proxy(file, {
      get: (target, prop) => {
        const value = Reflect.get(target, prop, target) as unknown;
        if (prop === 'fdatasync' || prop === 'fsync') return async () => { await waitGate(); return (value as () => Promise<void>).call(target); };
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }
}
