// A write that carries its fdatasync (IoFile.pwritevDatasync, one pool job;
// issue 18): when a durable() waiter wants bytes the write covers, the sync
// rides in the write and its completion acknowledges without a flush round.
// Group commit still holds (one sync releases every waiter at or below it);
// a crash between the write and the sync, or a failed sync, acknowledges
// nothing; power loss then loses the batch, per SimIo's crash modes.
import { CrashMode } from '@seglog/io';
import type { SimIo } from '@seglog/io';
import { describe, expect, it } from 'vitest';
import type { Log } from '../src/log/log.js';
import type { WriteMode } from '../src/log-config.js';
import { rejected } from './helpers.js';
import { config, newIo, openLog, producerBatch, readAll } from './log-helpers.js';

const MODES: readonly WriteMode[] = ['buffered', 'direct'];

/** Data-file operations on .log files, in call order (SimIo's crash points). */
function recordOps(): { ops: string[]; onCrashPoint: (p: { op: string; path: string }) => boolean } {
  const ops: string[] = [];
  return { ops, onCrashPoint: (p) => void (p.path.endsWith('.log') && ops.push(p.op)) === undefined && false };
}

/** A log with one durable batch already (the directory is synced, so a lone file sync suffices from here on). */
async function warmLog(io: SimIo, writeMode: WriteMode): Promise<Log> {
  const log = await openLog(io, config({ writeMode }));
  await log.appendAsLeader(producerBatch(3), { leaderEpoch: 0 });
  await log.flush();
  expect(log.durableOffset).toBe(3);
  return log;
}

/** A warm log on a SimIo recording .log operations from here on, and its metrics now. */
async function recordedWarmLog(writeMode: WriteMode): Promise<{ ops: string[]; io: SimIo; log: Log; before: Log['metrics'] }> {
  const { ops, onCrashPoint } = recordOps();
  const io = await newIo({ onCrashPoint });
  const log = await warmLog(io, writeMode);
  const before = { ...log.metrics };
  ops.length = 0;
  return { ops, io, log, before };
}

/** The user's durable append: try the caller path, else the pooled one, then durable() in the same step. */
async function durableAppend(log: Log, batch: Buffer): Promise<number> {
  const r = log.tryAppendAsLeader(batch, { leaderEpoch: 0 }) ?? (await log.appendAsLeader(batch, { leaderEpoch: 0 }));
  await log.durable(r.lastOffset);
  return r.lastOffset;
}

describe.each(MODES)('a write that carries its fdatasync (%s)', (writeMode) => {
  it('rides the sync in the write when durable() follows the append: one write, one sync, no round', async () => {
    const { ops, io, log, before } = await recordedWarmLog(writeMode);
    const last = await durableAppend(log, producerBatch(2, { tag: 1 }));
    expect(last).toBe(4);
    expect(log.durableOffset).toBe(5);
    expect(ops).toEqual(['pwritev', 'fdatasync']);
    expect(log.metrics.writeSyncAcks - before.writeSyncAcks).toBe(1);
    expect(log.metrics.flushes - before.flushes).toBe(1);
    // Acknowledged means durable: power loss now keeps all five records (the indexes are rebuilt).
    const after = io.recover(CrashMode.powerClean);
    const reopened = await openLog(after, config({ writeMode }), { hadCleanShutdown: false, recoveryPoint: 5 });
    expect(reopened.logEndOffset).toBe(5);
    await reopened.close();
  });

  it('leaves the sync to a flush round when nobody waits as the write is issued', async () => {
    const { ops, io, log, before } = await recordedWarmLog(writeMode);
    const r = log.tryAppendAsLeader(producerBatch(2, { tag: 1 }), { leaderEpoch: 0 });
    expect(r).not.toBeNull();
    await log.written(r!.lastOffset);
    expect(log.durableOffset).toBe(3);
    await log.durable(r!.lastOffset);
    expect(log.durableOffset).toBe(5);
    expect(log.metrics.writeSyncAcks).toBe(before.writeSyncAcks);
    expect(log.metrics.flushes - before.flushes).toBe(1);
    expect(ops.filter((op) => op === 'fdatasync')).toHaveLength(1);
    await log.close();
  });

  it('group commit: sixteen producers in one step: the first batch leaves at once, the fifteen others share one write and one sync', async () => {
    const { ops, io, log, before } = await recordedWarmLog(writeMode);
    const lasts = await Promise.all(Array.from({ length: 16 }, (_, i) => durableAppend(log, producerBatch(1, { tag: i }))));
    expect(lasts).toEqual(Array.from({ length: 16 }, (_, i) => 3 + i));
    expect(log.durableOffset).toBe(19);
    expect(log.writtenOffset).toBe(19);
    // durable() issues the first producer's write at once (it overlaps the others' appends); the rest coalesce behind it.
    expect(ops).toEqual(['pwritev', 'fdatasync', 'pwritev', 'fdatasync']);
    expect(log.metrics.writes - before.writes).toBe(2);
    expect(log.metrics.writeSyncAcks - before.writeSyncAcks).toBe(2);
    expect((await readAll(log)).map(([o]) => o)).toEqual(Array.from({ length: 19 }, (_, i) => i));
    await log.close();
  });

  it('a crash between the write and its sync acknowledges nothing; power loss loses the batch', async () => {
    let armed = false;
    const io = await newIo({ onCrashPoint: (p) => armed && p.op === 'fdatasync' && p.path.endsWith('.log') });
    const log = await warmLog(io, writeMode);
    armed = true;
    const error = await rejected(durableAppend(log, producerBatch(2, { tag: 1 })));
    expect(error.code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    expect(log.durableOffset).toBe(3);
    expect(io.halted).toBe(true);
    await log.close().catch(() => undefined);
    for (const mode of [CrashMode.powerClean, CrashMode.powerOrdered, CrashMode.powerChaotic, CrashMode.process]) {
      for (let seed = 1; seed <= (mode === CrashMode.powerClean ? 1 : 8); seed++) {
        const after = io.recover(mode, { seed });
        const reopened = await openLog(after, config({ writeMode }), { hadCleanShutdown: false, recoveryPoint: 3 });
        // Everything acknowledged survives; the unacknowledged batch survives whole or not at all.
        expect([3, 5]).toContain(reopened.logEndOffset);
        if (mode === CrashMode.powerClean) expect(reopened.logEndOffset).toBe(3);
        expect((await readAll(reopened)).slice(0, 3).map(([o]) => o)).toEqual([0, 1, 2]);
        await reopened.close();
      }
    }
  });

  it('a failed sync carried by a write is fail-stop: nothing acknowledged, never retried into an acknowledgement', async () => {
    const io = await newIo();
    const log = await warmLog(io, writeMode);
    io.setFaults({ syncEio: { nth: 1, path: /\.log$/ } });
    const error = await rejected(durableAppend(log, producerBatch(2, { tag: 1 })));
    expect(error.code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    expect(io.injected.syncEio).toBe(1);
    expect(log.state).toBe('offline');
    expect(log.durableOffset).toBe(3);
    expect(log.writtenOffset).toBe(3);
    expect((await rejected(log.durable(4))).code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    await log.close();
    expect(io.openHandles()).toEqual([]);
  });
});

describe('a write that carries its fdatasync on real files (NodeIo)', () => {
  it.each(MODES)('%s: every durable append is acknowledged, the addon (or the fallback) served the writes, a reopen reads them', async (writeMode) => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const { NodeIo } = await import('@seglog/io');
    const { capabilities } = await import('@seglog/native');
    const { Log: LogClass } = await import('../src/log/log.js');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-write-sync-'));
    try {
      const io = new NodeIo();
      const open = (recoveryPoint: number): Promise<Log> => LogClass.open(io, path.join(dir, 't-0'), config({ writeMode }), {
        topic: 't', partition: 0, recoveryPoint, logStartOffset: 0, hadCleanShutdown: true,
      });
      const log = await open(0);
      for (let i = 0; i < 20; i++) await durableAppend(log, producerBatch(5, { tag: i, valueBytes: 100 }));
      expect(log.durableOffset).toBe(100);
      // Which path a write takes is decided when it is issued, not by timing: every one after the first carried the sync.
      const served = capabilities.pwritevDatasync ? io.stats.writeSyncNative : io.stats.writeSyncFallback;
      expect(served).toBeGreaterThanOrEqual(19);
      expect(log.metrics.flushes).toBeGreaterThanOrEqual(20);
      await log.close();
      const reopened = await open(100);
      expect((await readAll(reopened)).length).toBe(100);
      await reopened.close();
      expect(io.openHandles()).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
