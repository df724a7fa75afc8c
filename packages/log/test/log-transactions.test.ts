// Producer state through the Log API: duplicates, sequences, epochs,
// transactions, markers, LSO, read_committed, the .txnindex and .snapshot
// files, and the same state after a clean reopen and after a crash.
import { buildBatch } from '@seglog/records';
import { describe, expect, it } from 'vitest';
import type { Log } from '../src/log/log.js';
import { decodeSnapshot } from '../src/producer/producer-snapshot.js';
import type { AbortedTxn } from '../src/segment/txn-index.js';
import { rejected } from './helpers.js';
import { clock, config, newIo, openLog as openAt, producerBatch, segmentPath, T0 } from './log-helpers.js';
import type { LogOpenOptions } from '../src/log/log.js';
import type { LogConfig } from '../src/log-config.js';
import type { Io } from '@seglog/io';

/** Opens with a clock at T0: producers (timestamps near T0) do not expire on load. */
function openLog(io: Io, cfg: LogConfig, options: Partial<LogOpenOptions> = {}): Promise<Log> {
  return openAt(io, cfg, { now: clock(T0 + 1000).fn, ...options });
}

const INT32_MAX = 0x7fffffff;

interface ProduceOptions {
  readonly epoch?: number;
  readonly transactional?: boolean;
  readonly timestamp?: number;
}

/** An idempotent (or transactional) batch of `count` records starting at sequence `seq`. */
function produce(pid: number, seq: number, count: number, options: ProduceOptions = {}): Buffer {
  const records = [];
  for (let i = 0; i < count; i++) records.push({ value: `p${pid}-s${seq + i}`, timestamp: (options.timestamp ?? T0) + i });
  return buildBatch({
    records, producerId: pid, producerEpoch: options.epoch ?? 0, baseSequence: seq, transactional: options.transactional ?? false,
  });
}

async function code(promise: Promise<unknown>): Promise<string> {
  return (await rejected(promise)).code ?? '(no code)';
}

function marker(type: 'COMMIT' | 'ABORT', producerId: number, producerEpoch = 0, coordinatorEpoch = 0) {
  return { type, producerId, producerEpoch, coordinatorEpoch, leaderEpoch: 0, timestamp: T0 } as const;
}

/** read_committed from `offset`: [nextOffset, aborted (pid, firstOffset) list]. */
async function readCommitted(log: Log, offset: number, maxBytes = 1 << 20): Promise<{ next: number; aborted: Array<[number, number]>; lso: number }> {
  const plan = await log.read(offset, maxBytes, { isolation: 'read_committed' });
  await plan.release();
  return { next: plan.nextOffset, aborted: plan.abortedTransactions.map((t) => [t.producerId, t.firstOffset]), lso: plan.lastStableOffset };
}

describe('Log idempotent producers', () => {
  it('answers a duplicate of any of the last five batches with its original offsets and writes nothing', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    const firsts: number[] = [];
    for (let i = 0; i < 6; i++) firsts.push((await log.appendAsLeader(produce(7, i * 2, 2), { leaderEpoch: 0 })).firstOffset);
    expect(firsts).toEqual([0, 2, 4, 6, 8, 10]);
    await log.flush();
    const bytes = (await io.readFile(segmentPath(0, '.log'))).length;
    // Batches 1..5 are in the window (batch 0 dropped out).
    for (let i = 1; i < 6; i++) {
      const dup = await log.appendAsLeader(produce(7, i * 2, 2), { leaderEpoch: 0 });
      expect([dup.firstOffset, dup.lastOffset, dup.logAppendTime, dup.sizeInBytes]).toEqual([i * 2, i * 2 + 1, T0 + 1, 0]);
    }
    expect(await code(log.appendAsLeader(produce(7, 0, 2), { leaderEpoch: 0 }))).toBe('SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE');
    await log.flush();
    expect(log.logEndOffset).toBe(12);
    expect((await io.readFile(segmentPath(0, '.log'))).length).toBe(bytes);
    await log.close();
  });

  it('a retry after a lost response gets the same offsets, and the producer continues after it', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    await log.appendAsLeader(producerBatch(3), { leaderEpoch: 0 });
    const first = await log.appendAsLeader(produce(1, 0, 3), { leaderEpoch: 0 });
    await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    const retry = await log.appendAsLeader(produce(1, 0, 3), { leaderEpoch: 0 });
    expect([retry.firstOffset, retry.lastOffset]).toEqual([first.firstOffset, first.lastOffset]);
    expect((await log.appendAsLeader(produce(1, 3, 1), { leaderEpoch: 0 })).firstOffset).toBe(7);
    // A gap, and a partial overlap with the last batch, are out of order.
    expect(await code(log.appendAsLeader(produce(1, 9, 1), { leaderEpoch: 0 }))).toBe('SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE');
    expect(await code(log.appendAsLeader(produce(1, 2, 3), { leaderEpoch: 0 }))).toBe('SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE');
    expect(log.logEndOffset).toBe(8);
    await log.close();
  });

  it('epoch bump: an older epoch is fenced, a newer epoch must start at sequence 0', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    await log.appendAsLeader(produce(3, 0, 2, { epoch: 1 }), { leaderEpoch: 0 });
    expect(await code(log.appendAsLeader(produce(3, 2, 1, { epoch: 0 }), { leaderEpoch: 0 }))).toBe('SEGLOG_ERR_PRODUCER_FENCED_EPOCH');
    expect(await code(log.appendAsLeader(produce(3, 2, 1, { epoch: 2 }), { leaderEpoch: 0 }))).toBe('SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE');
    expect((await log.appendAsLeader(produce(3, 0, 1, { epoch: 2 }), { leaderEpoch: 0 })).firstOffset).toBe(2);
    expect(await code(log.appendAsLeader(produce(3, 1, 1, { epoch: 1 }), { leaderEpoch: 0 }))).toBe('SEGLOG_ERR_PRODUCER_FENCED_EPOCH');
    expect(log.logEndOffset).toBe(3);
    await log.close();
  });

  it('sequences wrap at Int32.MAX', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    // An unknown producer may start at any sequence.
    await log.appendAsLeader(produce(4, INT32_MAX - 1, 2), { leaderEpoch: 0 });
    expect((await log.appendAsLeader(produce(4, 0, 2), { leaderEpoch: 0 })).firstOffset).toBe(2);
    const dup = await log.appendAsLeader(produce(4, INT32_MAX - 1, 2), { leaderEpoch: 0 });
    expect(dup.firstOffset).toBe(0);
    expect(await code(log.appendAsLeader(produce(4, 5, 1), { leaderEpoch: 0 }))).toBe('SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE');
    await log.close();
  });
});

describe('Log transactions', () => {
  it('rejects non-transactional data inside a transaction, fenced markers and client control batches', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    await log.appendAsLeader(produce(5, 0, 1, { transactional: true }), { leaderEpoch: 0 });
    expect(await code(log.appendAsLeader(produce(5, 1, 1), { leaderEpoch: 0 }))).toBe('SEGLOG_ERR_PRODUCER_INVALID_TXN_STATE');
    await log.appendMarker(marker('COMMIT', 5, 0, 3));
    expect(await code(log.appendMarker(marker('COMMIT', 5, 0, 2)))).toBe('SEGLOG_ERR_PRODUCER_COORDINATOR_FENCED');
    expect(await code(log.appendMarker(marker('ABORT', 5, -1, 3)))).toBe('SEGLOG_ERR_PRODUCER_FENCED_EPOCH');
    const control = buildBatch({ records: [{ value: 'x', timestamp: T0 }], producerId: 5, producerEpoch: 0, baseSequence: 1 });
    control.writeUInt16BE(control.readUInt16BE(21) | 0x20, 21);
    expect(await code(log.appendAsLeader(control, { leaderEpoch: 0 }))).toMatch(/^SEGLOG_ERR_RECORDS_/);
    expect(log.logEndOffset).toBe(2);
    await log.close();
  });

  it('LSO and read_committed follow Kafka testFetchUpToLastStableOffset; the .txnindex entry is 34 bytes', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    const p1 = 1;
    const p2 = 2;
    await log.appendAsLeader(produce(p1, 0, 5, { transactional: true }), { leaderEpoch: 0 }); // 0..4
    await log.appendAsLeader(producerBatch(3), { leaderEpoch: 0 }); // 5..7
    await log.appendAsLeader(produce(p2, 0, 2, { transactional: true }), { leaderEpoch: 0 }); // 8..9
    await log.appendAsLeader(produce(p1, 5, 4, { transactional: true }), { leaderEpoch: 0 }); // 10..13
    await log.appendAsLeader(producerBatch(2), { leaderEpoch: 0 }); // 14..15
    await log.appendAsLeader(produce(p1, 9, 10, { transactional: true }), { leaderEpoch: 0 }); // 16..25
    log.updateHighWatermark(26);
    expect(log.lastStableOffset).toBe(0);
    await log.written(25);
    expect(await readCommitted(log, 0)).toEqual({ next: 0, aborted: [], lso: 0 });
    const abort = await log.appendMarker(marker('ABORT', p1));
    expect(abort.firstOffset).toBe(26);
    expect(log.lastStableOffset).toBe(0); // the marker is not below the HW yet
    log.updateHighWatermark(27);
    expect(log.lastStableOffset).toBe(8); // P2's open transaction
    await log.written(26);
    const atEight = await readCommitted(log, 0);
    expect(atEight.next).toBeLessThanOrEqual(8);
    expect(atEight.next).toBeGreaterThan(0);
    expect(atEight.aborted).toEqual([[p1, 0]]);
    await log.appendMarker(marker('COMMIT', p2));
    expect(log.lastStableOffset).toBe(8);
    log.updateHighWatermark(28);
    expect(log.lastStableOffset).toBe(28);
    await log.written(27);
    expect(await readCommitted(log, 0)).toEqual({ next: 28, aborted: [[p1, 0]], lso: 28 });
    expect((await readCommitted(log, 27)).aborted).toEqual([]);
    const uncommitted = await log.read(0, 1 << 20);
    expect(uncommitted.abortedTransactions).toEqual([]);
    await uncommitted.release();
    await log.close();
    const txn = await io.readFile(segmentPath(0, '.txnindex'));
    const expected = Buffer.alloc(34);
    expected.writeInt16BE(0, 0);
    expected.writeBigInt64BE(1n, 2);
    expected.writeBigInt64BE(0n, 10);
    expected.writeBigInt64BE(26n, 18);
    expected.writeBigInt64BE(8n, 26);
    expect(txn.toString('hex')).toBe(expected.toString('hex'));
  });

  it('the LSO never passes an open transaction, whatever the HW', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    await log.appendAsLeader(producerBatch(2), { leaderEpoch: 0 });
    await log.appendAsLeader(produce(9, 0, 3, { transactional: true }), { leaderEpoch: 0 }); // 2..4
    for (let i = 0; i < 5; i++) {
      await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
      log.updateHighWatermark(log.logEndOffset);
      expect(log.lastStableOffset).toBe(2);
    }
    await log.written(log.logEndOffset - 1);
    const read = await readCommitted(log, 0);
    expect(read.next).toBe(2);
    await log.appendMarker(marker('COMMIT', 9));
    log.updateHighWatermark(log.logEndOffset);
    expect(log.lastStableOffset).toBe(log.logEndOffset);
    await log.close();
  });
});

interface Fingerprint {
  readonly leo: number;
  readonly lso: number;
  readonly aborted: readonly AbortedTxn[];
  readonly dups: ReadonlyArray<readonly [number, number]>;
  readonly nextSeqOk: number;
}

/** Scenario across segments: two producers, an aborted and a committed txn, an open one, idempotent batches. */
async function runScenario(log: Log): Promise<void> {
  await log.appendAsLeader(produce(1, 0, 2, { transactional: true }), { leaderEpoch: 0 }); // 0..1
  await log.appendAsLeader(produce(2, 0, 2, { transactional: true }), { leaderEpoch: 0 }); // 2..3
  await log.appendAsLeader(produce(3, 0, 2), { leaderEpoch: 0 }); // 4..5 idempotent
  await log.appendAsLeader(produce(1, 2, 2, { transactional: true }), { leaderEpoch: 0 }); // 6..7
  await log.appendMarker(marker('ABORT', 1)); // 8
  await log.appendAsLeader(produce(3, 2, 2), { leaderEpoch: 0 }); // 9..10
  await log.appendMarker(marker('COMMIT', 2)); // 11
  await log.appendAsLeader(produce(2, 2, 1, { transactional: true }), { leaderEpoch: 0 }); // 12
  await log.appendMarker(marker('ABORT', 2)); // 13
  await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 }); // 14
  await log.appendAsLeader(produce(1, 0, 1, { epoch: 1, transactional: true }), { leaderEpoch: 0 }); // 15 open
}

async function fingerprint(log: Log): Promise<Fingerprint> {
  log.updateHighWatermark(log.logEndOffset);
  await log.written(log.logEndOffset - 1);
  const plan = await log.read(0, 1 << 20, { isolation: 'read_committed' });
  await plan.release();
  let aborted = plan.abortedTransactions;
  let next = plan.nextOffset;
  while (next < log.lastStableOffset) {
    const more = await log.read(next, 1 << 20, { isolation: 'read_committed' });
    await more.release();
    aborted = [...aborted, ...more.abortedTransactions.filter((t) => !aborted.some((a) => a.lastOffset === t.lastOffset))];
    next = more.nextOffset;
  }
  const dup = await log.appendAsLeader(produce(3, 2, 2), { leaderEpoch: 0 });
  return { leo: log.logEndOffset, lso: log.lastStableOffset, aborted, dups: [[dup.firstOffset, dup.lastOffset]], nextSeqOk: -1 };
}

describe('Log producer state across restarts', () => {
  const cfg = config({ segmentBytes: 260 });

  it('is the same after close/reopen (snapshot) and the snapshot decodes to the expected entries', async () => {
    const io = await newIo();
    const log = await openLog(io, cfg);
    await runScenario(log);
    expect(log.numberOfSegments).toBeGreaterThan(2);
    const before = await fingerprint(log);
    expect(before.lso).toBe(15);
    expect(before.aborted).toEqual([
      { producerId: 1, firstOffset: 0, lastOffset: 8, lastStableOffset: 2 },
      { producerId: 2, firstOffset: 12, lastOffset: 13, lastStableOffset: 14 },
    ]);
    expect(before.dups).toEqual([[9, 10]]);
    const entries = log.producerState.snapshotEntries();
    await log.close();
    const names = await io.readdir('/data/t-0');
    expect(names).toContain('00000000000000000016.snapshot');
    const decoded = decodeSnapshot(await io.readFile('/data/t-0/00000000000000000016.snapshot'));
    const byPid = new Map(decoded.map((e) => [e.producerId, e]));
    expect(byPid.get(1)).toEqual({ producerId: 1, producerEpoch: 1, lastSequence: 0, lastOffset: 15, offsetDelta: 0, timestamp: T0, coordinatorEpoch: 0, currentTxnFirstOffset: 15 });
    expect(byPid.get(2)).toEqual({ producerId: 2, producerEpoch: 0, lastSequence: 2, lastOffset: 12, offsetDelta: 0, timestamp: T0, coordinatorEpoch: 0, currentTxnFirstOffset: -1 });
    expect(byPid.get(3)).toEqual({ producerId: 3, producerEpoch: 0, lastSequence: 3, lastOffset: 10, offsetDelta: 1, timestamp: T0 + 1, coordinatorEpoch: -1, currentTxnFirstOffset: -1 });
    expect(decoded.length).toBe(entries.length);
    const reopened = await openLog(io, cfg, { recoveryPoint: 16 });
    expect(await fingerprint(reopened)).toEqual(before);
    // Sequences continue where they were.
    expect(await code(reopened.appendAsLeader(produce(3, 9, 1), { leaderEpoch: 0 }))).toBe('SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE');
    expect((await reopened.appendAsLeader(produce(3, 4, 1), { leaderEpoch: 0 })).firstOffset).toBe(16);
    await reopened.close();
  });

  it('is rebuilt from the log after an unclean stop (snapshots and .txnindex gone)', async () => {
    const io = await newIo();
    const log = await openLog(io, cfg);
    await runScenario(log);
    const before = await fingerprint(log);
    await log.flush();
    const survivor = io.recover('power-clean');
    for (const name of await survivor.readdir('/data/t-0')) {
      if (name.endsWith('.snapshot') || name.endsWith('.txnindex')) await survivor.unlink(`/data/t-0/${name}`);
    }
    const reopened = await openLog(survivor, cfg, { hadCleanShutdown: false, recoveryPoint: 0 });
    expect(await fingerprint(reopened)).toEqual(before);
    await reopened.close();
    // The rebuilt .txnindex files hold the same two entries.
    const again = await openLog(survivor, cfg, { recoveryPoint: reopened.logEndOffset });
    expect((await fingerprint(again)).aborted).toEqual(before.aborted);
    await again.close();
  });

  it('after a crash with its snapshots intact, recovery from the recovery point gives the same answers', async () => {
    const io = await newIo();
    const log = await openLog(io, cfg);
    await runScenario(log);
    const before = await fingerprint(log);
    await log.flush();
    const survivor = io.recover('power-clean');
    const reopened = await openLog(survivor, cfg, { hadCleanShutdown: false, recoveryPoint: 9 });
    expect(await fingerprint(reopened)).toEqual(before);
    await reopened.close();
  });

  it('truncation reloads producer state: a truncated transaction and its abort disappear', async () => {
    const io = await newIo();
    const log = await openLog(io, cfg);
    await runScenario(log);
    await log.written(log.logEndOffset - 1);
    expect(await log.truncateTo(12)).toBe(true);
    log.updateHighWatermark(12);
    expect(log.lastStableOffset).toBe(12);
    const read = await readCommitted(log, 9);
    expect(read.aborted).toEqual([]);
    // Producer 1's epoch-1 batch is gone: epoch 0 is current again, its txn is closed.
    expect((await log.appendAsLeader(produce(1, 4, 1), { leaderEpoch: 0 })).firstOffset).toBe(12);
    // Producer 3's window survives: the retry is a duplicate.
    expect((await log.appendAsLeader(produce(3, 2, 2), { leaderEpoch: 0 })).firstOffset).toBe(9);
    await log.truncateFullyAndStartAt(40);
    expect((await log.appendAsLeader(produce(3, 77, 1), { leaderEpoch: 0 })).firstOffset).toBe(40);
    await log.close();
  });
});
