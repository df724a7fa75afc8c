// Issue 23 item 2: a failed index write-back (.index, .timeindex, .txnindex)
// is a write failure like any other: the log goes offline before any later
// acknowledgement. Before the fix the write-back error was kept inside the
// index and first surfaced at close() — an ABORT marker whose .txnindex
// entry never reached the file was acknowledged, and appends, flush() and
// more markers kept succeeding.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NodeIo } from '@seglog/io';
import type { Io } from '@seglog/io';
import { buildBatch } from '@seglog/records';
import { afterEach, describe, expect, it } from 'vitest';
import { Log } from '../src/log/log.js';
import { SPARSE_WRITE_BACK_BYTES } from '../src/segment/sparse-index.js';
import { clock, config, newIo, producerBatch, T0 } from './log-helpers.js';

function txnBatch(pid: number, seq: number): Buffer {
  return buildBatch({ records: [{ value: `p${pid}-s${seq}`, timestamp: T0 }], producerId: pid, producerEpoch: 0, baseSequence: seq, transactional: true });
}

function abort(pid: number) {
  return { type: 'ABORT', producerId: pid, producerEpoch: 0, coordinatorEpoch: 0, leaderEpoch: 0, timestamp: T0 } as const;
}

async function outcome(promise: Promise<unknown>): Promise<string> {
  return promise.then(() => 'resolved', (e: unknown) => String((e as { code?: unknown }).code ?? e));
}

function open(io: Io, dir: string, overrides: Parameters<typeof config>[0] = {}): Promise<Log> {
  return Log.open(io, dir, config(overrides), { topic: 't', partition: 0, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: true, now: clock(T0 + 1000).fn });
}

/** After the failure: offline, and nothing more is acknowledged (appends, markers, flush, durable). */
async function expectFailStop(log: Log): Promise<void> {
  expect(log.state).toBe('offline');
  expect(await outcome(log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 }))).toBe('SEGLOG_ERR_LOG_OFFLINE');
  expect(await outcome(log.appendMarker(abort(9)))).toBe('SEGLOG_ERR_LOG_OFFLINE');
  expect(await outcome(log.flush())).toBe('SEGLOG_ERR_LOG_OFFLINE');
  expect(await outcome(log.durable(log.logEndOffset))).toBe('SEGLOG_ERR_LOG_OFFLINE');
}

describe('an index write-back failure is fail-stop (SimIo)', () => {
  it('.txnindex EIO: the ABORT marker is refused and the log is offline at once', async () => {
    const io = await newIo();
    const log = await open(io, '/data/t-0');
    await log.appendAsLeader(txnBatch(7, 0), { leaderEpoch: 0 });
    io.setFaults({ writeEio: { nth: 1, persistent: true, path: /\.txnindex$/ } });
    expect(await outcome(log.appendMarker(abort(7)))).toBe('SEGLOG_ERR_LOG_OFFLINE');
    expect(io.injected.writeEio).toBe(1);
    await expectFailStop(log);
    // Reads of what was written keep working.
    const plan = await log.read(0, 1 << 20);
    expect(plan.isEmpty).toBe(false);
    await plan.release();
    await log.close().catch(() => undefined);
    expect(log.state).toBe('closed');
  });

  for (const kind of ['index', 'timeindex'] as const) {
    it(`.${kind} EIO: the log is offline before the next acknowledgement`, async () => {
      const io = await newIo();
      // An index entry for every batch: every page of entries (SPARSE_WRITE_BACK_BYTES) schedules a write-back.
      const log = await open(io, '/data/t-0', { indexIntervalBytes: 1 });
      await log.appendAsLeader(producerBatch(1, { timestamp: T0 }), { leaderEpoch: 0 });
      await log.flush();
      io.setFaults({ writeEio: { nth: 1, persistent: true, path: new RegExp(`\\.${kind}$`) } });
      let ackedAfterFailure = 0;
      let refused = '';
      // Each append is acknowledged when written (acks=1) or durable (acks=-1);
      // both must stop at the first failed write-back. Appends before it ran are acknowledged
      // (their entries are deferred, not failed: recovery rebuilds the active segment's indexes).
      for (let i = 1; i <= 2 * (SPARSE_WRITE_BACK_BYTES / 8) && refused === ''; i++) {
        const failedBefore = io.injected.writeEio;
        const appended = log.appendAsLeader(producerBatch(1, { timestamp: T0 + i }), { leaderEpoch: 0 });
        const result = await appended.then((r) => r, () => null);
        if (result === null) {
          refused = 'append';
          break;
        }
        const durable = await outcome(log.durable(result.lastOffset));
        if (durable !== 'resolved') refused = durable;
        else if (failedBefore > 0) ackedAfterFailure++;
      }
      expect(io.injected.writeEio).toBeGreaterThan(0);
      expect(refused, 'the failed write-back must refuse an acknowledgement').not.toBe('');
      expect(ackedAfterFailure).toBe(0);
      await expectFailStop(log);
      await log.close().catch(() => undefined);
    });
  }
});

/** Scratch space inside the repository (gitignored): the project reads no path outside its root. */
const SCRATCH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../.seglog-tmp');

describe('an index write-back failure is fail-stop (real disk)', () => {
  let root = '';
  afterEach(() => {
    if (root !== '') rmSync(root, { recursive: true, force: true });
    root = '';
  });

  it('.txnindex path made a directory: the ABORT marker is refused, the log offline', async () => {
    mkdirSync(SCRATCH, { recursive: true });
    root = mkdtempSync(path.join(SCRATCH, 'index-fail-'));
    const dir = path.join(root, 't-0');
    const io = new NodeIo();
    await io.mkdir(dir);
    const log = await open(io, dir);
    await log.appendAsLeader(txnBatch(7, 0), { leaderEpoch: 0 });
    mkdirSync(path.join(dir, `${'0'.repeat(20)}.txnindex`));
    expect(await outcome(log.appendMarker(abort(7)))).toBe('SEGLOG_ERR_LOG_OFFLINE');
    await expectFailStop(log);
    await log.close().catch(() => undefined);
    expect(log.state).toBe('closed');
  });
});
