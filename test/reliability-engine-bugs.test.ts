// ENGINE BUGS found by the reliability suite. Each test is a minimal,
// deterministic replay of one kind of failure. ENGINE BUG 7
// (direct mode) lives in test/reliability-crash.test.ts.
import { describe, expect, it } from 'vitest';
import { DIR, Ledger, openLog } from './lib/crash-workload.js';
import { checkRecoveredLog, segmentFile } from './lib/log-checker.js';
import { appendExpected, closedLog, codeOf, newMachine, rewriteFile } from './lib/reliability-fixture.js';

// These three were OPEN engine bugs, asserted with it.fails while they
// reproduced; all three are fixed (packages/log: index entries checked on use
// and rebuilt from the .log; the recovered tail re-written before it can be
// reported durable) and each test is now a plain regression.
describe('engine bugs found by the reliability suite (fixed: regressions)', () => {
  it('ENGINE BUG 5 (fixed): one zeroed byte in a trusted .index sends reads of intact durable records to SEGLOG_ERR_LOG_CORRUPTION instead of a rebuilt index', async () => {
    // fuzz index-file, seed 1: 7 batches, segment 0's .index, one byte set to
    // 0. The entry still increases, so the load-time checks (monotonic,
    // inside the file) pass, but it points into the middle of a batch; reads
    // through it fail as "malformed batch header below the written position".
    // reliability.md §4.3: index entries must be validated at a batch
    // boundary (or the index rebuilt when a read finds it wrong).
    const { io, ledger, logEndOffset } = await closedLog(7);
    await rewriteFile(io, segmentFile(DIR, 0, '.index'), (bytes) => {
      bytes[424675671 % bytes.length] = 0;
      return bytes;
    });
    const log = await openLog(io, { recoveryPoint: logEndOffset, logStartOffset: 0, hadCleanShutdown: false });
    try {
      await checkRecoveredLog(io, log, { ...ledger.expectation({ checkpoints: false, processCrash: false }), durable: logEndOffset, logStartMin: 0, logStartMax: 0 });
    } finally {
      await log.close();
    }
  });

  it('ENGINE BUG 6 (fixed): one zeroed byte in a trusted .timeindex makes offsetForTimestamp answer the wrong offset', async () => {
    // fuzz index-file, seed 1: 3 batches, .timeindex byte set to 0, clean
    // open: offsetForTimestamp(T0+2) = 3 (expected 2). The time index
    // entries are not checked against the .log at load.
    const { io, ledger, logEndOffset } = await closedLog(3);
    await rewriteFile(io, segmentFile(DIR, 0, '.timeindex'), (bytes) => {
      bytes[1180685594 % bytes.length] = 0;
      return bytes;
    });
    const log = await openLog(io, { recoveryPoint: logEndOffset, logStartOffset: 0, hadCleanShutdown: true });
    try {
      await checkRecoveredLog(io, log, { ...ledger.expectation({ checkpoints: false, processCrash: false }), durable: logEndOffset, logStartMin: 0, logStartMax: 0 });
    } finally {
      await log.close();
    }
  });

  it('ENGINE BUG 8 (fixed): after a sync EIO and a restart, recovery trusts page-cache bytes the failed fsync dropped (fsyncgate); a power loss then leaves a hole below the recovery point', async () => {
    // Model run, seed 7 (SEGLOG_MODEL_SEED=7 SEGLOG_MODEL_PATH=15:8:13):
    // [Append(4), Fault(syncEio), Append(2), Retention, Crash(power-chaotic)].
    // The failed fdatasync drops its writes from durable state but leaves
    // them visible (Linux marks the pages clean: reliability.md §2.1). The
    // process restarts; recovery scans those visible bytes, fsyncs (which
    // persists nothing for clean pages) and reports them durable. After a
    // power loss they are zeros below the recovery point, and open() fails
    // with SEGLOG_ERR_LOG_CORRUPTION. Recovery must re-write the tail beyond
    // the checkpointed recovery point before trusting it (or cut it).
    const io = await newMachine();
    const ledger = new Ledger();
    const log = await openLog(io, { recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: false });
    await appendExpected(log, 4, ledger);
    io.setFaults({ syncEio: { nth: 1, path: /\.log$/ } });
    expect(codeOf(await log.durable(log.logEndOffset - 1).then(() => null, (e: unknown) => e))).toBe('SEGLOG_ERR_LOG_OFFLINE');
    ledger.observe(log);
    io.halt();
    await log.close().catch(() => undefined);
    const restarted = io.recover('process');
    const log2 = await openLog(restarted, { recoveryPoint: ledger.claimedDurable, logStartOffset: 0, hadCleanShutdown: false });
    const last = await appendExpected(log2, 2, ledger);
    await log2.durable(last);
    ledger.ack(last + 1);
    ledger.observe(log2);
    restarted.halt();
    await log2.close().catch(() => undefined);
    const afterPowerLoss = restarted.recover('power-clean');
    const log3 = await openLog(afterPowerLoss, { recoveryPoint: ledger.claimedDurable, logStartOffset: 0, hadCleanShutdown: false });
    try {
      await checkRecoveredLog(afterPowerLoss, log3, ledger.expectation({ checkpoints: true, processCrash: false }));
    } finally {
      await log3.close();
    }
  });
});
