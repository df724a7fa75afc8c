import fc from 'fast-check';
import { buildBatch, buildControlBatch, RecordBatch } from '@seglog/records';
import { describe, expect, it } from 'vitest';
import { SimIo } from '@seglog/io';
import { incrementSequence } from '@seglog/records';

import type { AppendOrigin, CompletedTxn } from '../src/producer/producer-append-info.js';
import type { BatchMetadata } from '../src/producer/producer-state-entry.js';
import { ProducerStateManager } from '../src/producer/producer-state-manager.js';

const INT32_MAX = 0x7fffffff;
const DIR = '/data/t-0';

async function newManager(options: { io?: SimIo; producerIdExpirationMs?: number } = {}): Promise<{ io: SimIo; psm: ProducerStateManager }> {
  const io = options.io ?? new SimIo({ seed: 7 });
  await io.mkdir(DIR, { recursive: true });
  const psm = await ProducerStateManager.open({
    io,
    dir: DIR,
    ...(options.producerIdExpirationMs === undefined ? {} : { producerIdExpirationMs: options.producerIdExpirationMs }),
  });
  return { io, psm };
}

interface DataInput {
  readonly pid: number;
  readonly epoch: number;
  readonly seq: number;
  /** Number of records (offsets and sequences). Default 1. */
  readonly count?: number;
  readonly offset: number;
  readonly ts?: number;
  readonly txn?: boolean;
  readonly origin?: AppendOrigin;
}

type AppendResult = { readonly kind: 'appended'; readonly firstOffset: number; readonly lastOffset: number } | { readonly kind: 'duplicate'; readonly batch: BatchMetadata };

/**
 * The Log's leader-append sequence for one data batch: duplicate check
 * (client origin), prepareUpdate + appendDataBatch (may throw: nothing
 * written), "write", update, map end offset.
 */
function appendData(psm: ProducerStateManager, input: DataInput): AppendResult {
  const count = input.count ?? 1;
  const origin = input.origin ?? 'client';
  const candidate = {
    producerId: input.pid,
    producerEpoch: input.epoch,
    baseSequence: input.seq,
    lastSequence: incrementSequence(input.seq, count - 1),
  };
  if (origin === 'client') {
    const duplicate = psm.findDuplicateBatch(candidate);
    if (duplicate !== null) return { kind: 'duplicate', batch: duplicate };
  }
  const info = psm.prepareUpdate(input.pid, origin);
  const lastOffset = input.offset + count - 1;
  info.appendDataBatch({
    ...candidate,
    firstOffset: input.offset,
    lastOffset,
    maxTimestamp: input.ts ?? 1000 + input.offset,
    isTransactional: input.txn ?? false,
  });
  psm.update(info);
  psm.updateMapEndOffset(lastOffset + 1);
  return { kind: 'appended', firstOffset: input.offset, lastOffset };
}

interface MarkerInput {
  readonly pid: number;
  readonly epoch: number;
  readonly type: 'COMMIT' | 'ABORT';
  readonly coordinatorEpoch?: number;
  readonly offset: number;
  readonly ts?: number;
  readonly origin?: AppendOrigin;
}

/** The Log's sequence for one marker: validate, update, LSO for the txn index, completeTxn, map end offset. */
function appendMarker(psm: ProducerStateManager, input: MarkerInput): { completed: CompletedTxn | null; lastStableOffset: number | null } {
  const info = psm.prepareUpdate(input.pid, input.origin ?? 'coordinator');
  const completed = info.appendEndTxnMarker(
    { type: input.type, coordinatorEpoch: input.coordinatorEpoch ?? 0, producerEpoch: input.epoch },
    input.offset,
    input.ts ?? 1000 + input.offset,
  );
  psm.update(info);
  let lastStableOffset: number | null = null;
  if (completed !== null) {
    lastStableOffset = psm.lastStableOffsetForAbort(completed);
    psm.completeTxn(completed);
  }
  psm.updateMapEndOffset(input.offset + 1);
  return { completed, lastStableOffset };
}

/** A deep, plain copy of everything the manager holds in memory. */
function stateOf(psm: ProducerStateManager): unknown {
  return structuredClone({
    producers: [...psm.activeProducers()].map(([id, e]) => ({ id, ...e, batches: [...e.batches] })),
    ongoing: psm.ongoingTransactions(),
    unreplicated: psm.unreplicatedTransactions(),
    mapEndOffset: psm.mapEndOffset,
    firstUnstableOffset: psm.firstUnstableOffset(),
  });
}

/** Runs `fn`, expecting a SeglogError with this code and Kafka name. */
function expectRejected(fn: () => unknown, code: string, kafka: string): void {
  let error: unknown = null;
  try {
    fn();
  } catch (caught) {
    error = caught;
  }
  expect(error, `expected ${code}`).not.toBeNull();
  expect(error).toMatchObject({ code, kafka });
}

// ------------------------------------------------------------------ tests

describe('duplicates and retries (client origin)', () => {
  it('answers a duplicate of any of the last five batches with its original offsets, and writes nothing', async () => {
    const { psm } = await newManager();
    let offset = 0;
    for (let i = 0; i < 6; i++) {
      expect(appendData(psm, { pid: 1, epoch: 0, seq: i * 2, count: 2, offset, ts: 500 + i })).toMatchObject({ kind: 'appended' });
      offset += 2 + 3; // other producers' data in between
    }
    const before = stateOf(psm);
    // Batches 1..5 are in the window (batch 0 dropped out).
    for (let i = 1; i < 6; i++) {
      const result = appendData(psm, { pid: 1, epoch: 0, seq: i * 2, count: 2, offset: 999 });
      expect(result).toEqual({
        kind: 'duplicate',
        batch: { firstSeq: i * 2, lastSeq: i * 2 + 1, firstOffset: i * 5, lastOffset: i * 5 + 1, offsetDelta: 1, timestamp: 500 + i },
      });
    }
    expect(stateOf(psm)).toEqual(before);
    // The sixth-newest (oldest) batch is outside the window: OUT_OF_ORDER.
    expectRejected(() => appendData(psm, { pid: 1, epoch: 0, seq: 0, count: 2, offset: 999 }), 'SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE', 'OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(stateOf(psm)).toEqual(before);
  });

  it('a retry after a lost response gets the first offsets; the producer then continues', async () => {
    const { psm } = await newManager();
    appendData(psm, { pid: 9, epoch: 3, seq: 0, count: 5, offset: 0 });
    expect(appendData(psm, { pid: 9, epoch: 3, seq: 5, count: 5, offset: 5 })).toEqual({ kind: 'appended', firstOffset: 5, lastOffset: 9 });
    // response lost: the client resends seq 5..9
    expect(appendData(psm, { pid: 9, epoch: 3, seq: 5, count: 5, offset: 10 })).toMatchObject({ kind: 'duplicate', batch: { firstOffset: 5, lastOffset: 9 } });
    expect(appendData(psm, { pid: 9, epoch: 3, seq: 10, count: 1, offset: 10 })).toEqual({ kind: 'appended', firstOffset: 10, lastOffset: 10 });
  });

  it('a duplicate needs the same epoch and exactly the same first and last sequence', async () => {
    const { psm } = await newManager();
    appendData(psm, { pid: 1, epoch: 0, seq: 0, count: 4, offset: 0 });
    // same first, different last: a partial overlap, not a duplicate
    expectRejected(() => appendData(psm, { pid: 1, epoch: 0, seq: 0, count: 2, offset: 4 }), 'SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE', 'OUT_OF_ORDER_SEQUENCE_NUMBER');
    expectRejected(() => appendData(psm, { pid: 1, epoch: 0, seq: 2, count: 4, offset: 4 }), 'SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE', 'OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(psm.findDuplicateBatch({ producerId: 1, producerEpoch: 1, baseSequence: 0, lastSequence: 3 })).toBeNull();
    expect(psm.findDuplicateBatch({ producerId: 2, producerEpoch: 0, baseSequence: 0, lastSequence: 3 })).toBeNull();
    expect(psm.findDuplicateBatch({ producerId: 1, producerEpoch: 0, baseSequence: 0, lastSequence: 3 })).toMatchObject({ firstOffset: 0, lastOffset: 3 });
  });
});

describe('sequence and epoch rules (client origin)', () => {
  it('rejects a gap with OUT_OF_ORDER_SEQUENCE_NUMBER', async () => {
    const { psm } = await newManager();
    appendData(psm, { pid: 1, epoch: 0, seq: 0, count: 3, offset: 0 });
    expectRejected(() => appendData(psm, { pid: 1, epoch: 0, seq: 4, offset: 3 }), 'SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE', 'OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(appendData(psm, { pid: 1, epoch: 0, seq: 3, offset: 3 }).kind).toBe('appended');
  });

  it('accepts any first sequence from an unknown producer (§13: no stored epoch)', async () => {
    const { psm } = await newManager();
    expect(appendData(psm, { pid: 5, epoch: 2, seq: 17, offset: 0 }).kind).toBe('appended');
    expect(psm.lastEntry(5)).toMatchObject({ producerEpoch: 2, lastSeq: 17 });
    expectRejected(() => appendData(psm, { pid: 5, epoch: 2, seq: 17, count: 2, offset: 1 }), 'SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE', 'OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(appendData(psm, { pid: 5, epoch: 2, seq: 18, offset: 1 }).kind).toBe('appended');
  });

  it('epoch bump: a new epoch starts at 0, the old one is fenced', async () => {
    const { psm } = await newManager();
    appendData(psm, { pid: 1, epoch: 0, seq: 0, count: 10, offset: 0 });
    expectRejected(() => appendData(psm, { pid: 1, epoch: 1, seq: 10, offset: 10 }), 'SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE', 'OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(appendData(psm, { pid: 1, epoch: 1, seq: 0, count: 2, offset: 10 }).kind).toBe('appended');
    expect(psm.lastEntry(1)?.batches).toHaveLength(1); // the new epoch cleared the window
    expectRejected(() => appendData(psm, { pid: 1, epoch: 0, seq: 10, offset: 12 }), 'SEGLOG_ERR_PRODUCER_FENCED_EPOCH', 'INVALID_PRODUCER_EPOCH');
    // a retry of an old-epoch batch is not a duplicate any more: fenced
    expectRejected(() => appendData(psm, { pid: 1, epoch: 0, seq: 0, count: 10, offset: 12 }), 'SEGLOG_ERR_PRODUCER_FENCED_EPOCH', 'INVALID_PRODUCER_EPOCH');
  });

  it('wraps sequences at Int32.MAX', async () => {
    const { psm } = await newManager();
    appendData(psm, { pid: 1, epoch: 0, seq: INT32_MAX - 2, count: 3, offset: 0 }); // ends at INT32_MAX
    expect(psm.lastEntry(1)?.lastSeq).toBe(INT32_MAX);
    expectRejected(() => appendData(psm, { pid: 1, epoch: 0, seq: 1, offset: 3 }), 'SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE', 'OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(appendData(psm, { pid: 1, epoch: 0, seq: 0, count: 2, offset: 3 }).kind).toBe('appended');
    // a batch spanning the wrap: first INT32_MAX - 1, last 1
    appendData(psm, { pid: 2, epoch: 0, seq: INT32_MAX - 1, count: 4, offset: 5 });
    expect(psm.lastEntry(2)?.batches[0]).toMatchObject({ firstSeq: INT32_MAX - 1, lastSeq: 1 });
    expect(appendData(psm, { pid: 2, epoch: 0, seq: INT32_MAX - 1, count: 4, offset: 9 })).toMatchObject({ kind: 'duplicate', batch: { firstOffset: 5 } });
    expect(appendData(psm, { pid: 2, epoch: 0, seq: 2, offset: 9 }).kind).toBe('appended');
  });

  it('validates several batches of one producer in one append against the in-flight entry', async () => {
    const { psm } = await newManager();
    appendData(psm, { pid: 1, epoch: 0, seq: 0, offset: 0 });
    const info = psm.prepareUpdate(1, 'client');
    const batch = (seq: number, offset: number) => ({
      producerId: 1, producerEpoch: 0, baseSequence: seq, lastSequence: seq, firstOffset: offset, lastOffset: offset, maxTimestamp: 1, isTransactional: false,
    });
    info.appendDataBatch(batch(1, 1));
    info.appendDataBatch(batch(2, 2));
    expectRejected(() => info.appendDataBatch(batch(2, 3)), 'SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE', 'OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(psm.lastEntry(1)?.lastSeq).toBe(0); // nothing committed yet
    psm.update(info);
    expect(psm.lastEntry(1)?.batches.map((b) => b.lastSeq)).toEqual([0, 1, 2]);
  });

  it('replication origin accepts gaps, duplicates and old epochs; coordinator origin checks the epoch only', async () => {
    const { psm } = await newManager();
    appendData(psm, { pid: 1, epoch: 3, seq: 0, offset: 0, origin: 'replication' });
    expect(appendData(psm, { pid: 1, epoch: 3, seq: 0, offset: 2, origin: 'replication' }).kind).toBe('appended');
    expect(appendData(psm, { pid: 1, epoch: 3, seq: 50, offset: 3, origin: 'replication' }).kind).toBe('appended');
    expect(appendData(psm, { pid: 1, epoch: 1, seq: 7, offset: 4, origin: 'replication' }).kind).toBe('appended');
    expect(psm.lastEntry(1)).toMatchObject({ producerEpoch: 1, lastSeq: 7 });
    expect(appendData(psm, { pid: 1, epoch: 1, seq: 99, offset: 5, origin: 'coordinator' }).kind).toBe('appended');
    expectRejected(() => appendData(psm, { pid: 1, epoch: 0, seq: 100, offset: 6, origin: 'coordinator' }), 'SEGLOG_ERR_PRODUCER_FENCED_EPOCH', 'INVALID_PRODUCER_EPOCH');
  });
});

describe('transactions', () => {
  it('begin, commit and abort produce CompletedTxn; a marker without an open txn produces none', async () => {
    const { psm } = await newManager();
    appendData(psm, { pid: 1, epoch: 0, seq: 0, count: 2, offset: 0, txn: true });
    appendData(psm, { pid: 1, epoch: 0, seq: 2, count: 2, offset: 2, txn: true });
    expect(psm.lastEntry(1)?.currentTxnFirstOffset).toBe(0);
    expect(psm.ongoingTransactions()).toEqual([{ producerId: 1, firstOffset: 0, lastOffset: null }]);
    expect(appendMarker(psm, { pid: 1, epoch: 0, type: 'COMMIT', offset: 4 })).toEqual({
      completed: { producerId: 1, firstOffset: 0, lastOffset: 4, isAborted: false },
      lastStableOffset: 5,
    });
    expect(psm.lastEntry(1)?.currentTxnFirstOffset).toBeNull();
    appendData(psm, { pid: 1, epoch: 0, seq: 4, offset: 5, txn: true });
    expect(appendMarker(psm, { pid: 1, epoch: 0, type: 'ABORT', offset: 6 }).completed).toEqual({ producerId: 1, firstOffset: 5, lastOffset: 6, isAborted: true });
    expect(appendMarker(psm, { pid: 1, epoch: 0, type: 'ABORT', offset: 7 })).toEqual({ completed: null, lastStableOffset: null });
    expect(psm.unreplicatedTransactions().map((t) => [t.firstOffset, t.lastOffset])).toEqual([[0, 4], [5, 6]]);
  });

  it('rejects a plain write during an open transaction with INVALID_TXN_STATE', async () => {
    const { psm } = await newManager();
    appendData(psm, { pid: 1, epoch: 0, seq: 0, offset: 0, txn: true });
    const before = stateOf(psm);
    expectRejected(() => appendData(psm, { pid: 1, epoch: 0, seq: 1, offset: 1 }), 'SEGLOG_ERR_PRODUCER_INVALID_TXN_STATE', 'INVALID_TXN_STATE');
    expect(stateOf(psm)).toEqual(before);
  });

  it('fences markers from an older coordinator or an older producer epoch', async () => {
    const { psm } = await newManager();
    appendData(psm, { pid: 1, epoch: 2, seq: 0, offset: 0, txn: true });
    appendMarker(psm, { pid: 1, epoch: 2, type: 'COMMIT', coordinatorEpoch: 5, offset: 1 });
    appendData(psm, { pid: 1, epoch: 2, seq: 1, offset: 2, txn: true });
    const before = stateOf(psm);
    expectRejected(() => appendMarker(psm, { pid: 1, epoch: 2, type: 'ABORT', coordinatorEpoch: 4, offset: 3 }), 'SEGLOG_ERR_PRODUCER_COORDINATOR_FENCED', 'TRANSACTION_COORDINATOR_FENCED');
    expectRejected(() => appendMarker(psm, { pid: 1, epoch: 1, type: 'ABORT', coordinatorEpoch: 5, offset: 3 }), 'SEGLOG_ERR_PRODUCER_FENCED_EPOCH', 'INVALID_PRODUCER_EPOCH');
    expect(stateOf(psm)).toEqual(before);
    // under replication both are accepted (Kafka only logs them)
    expect(appendMarker(psm, { pid: 1, epoch: 1, type: 'ABORT', coordinatorEpoch: 4, offset: 3, origin: 'replication' }).completed).toMatchObject({ firstOffset: 2, isAborted: true });
  });

  it('testAppendTxnMarkerWithNoProducerState: a marker creates the entry; then old epoch fenced, seq 17 out of order, seq 0 accepted', async () => {
    const { psm } = await newManager();
    expect(appendMarker(psm, { pid: 1, epoch: 2, type: 'COMMIT', coordinatorEpoch: 27, offset: 0 }).completed).toBeNull();
    expect(psm.lastEntry(1)).toMatchObject({ producerEpoch: 2, lastSeq: -1, coordinatorEpoch: 27 });
    expectRejected(() => appendData(psm, { pid: 1, epoch: 0, seq: 0, offset: 1 }), 'SEGLOG_ERR_PRODUCER_FENCED_EPOCH', 'INVALID_PRODUCER_EPOCH');
    expectRejected(() => appendData(psm, { pid: 1, epoch: 2, seq: 17, offset: 1 }), 'SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE', 'OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(appendData(psm, { pid: 1, epoch: 2, seq: 0, offset: 1 }).kind).toBe('appended');
  });

  it('a marker with a new epoch clears the batch window: the producer restarts at sequence 0', async () => {
    const { psm } = await newManager();
    appendData(psm, { pid: 1, epoch: 0, seq: 0, count: 3, offset: 0, txn: true });
    appendMarker(psm, { pid: 1, epoch: 1, type: 'ABORT', offset: 3 });
    expect(psm.lastEntry(1)).toMatchObject({ producerEpoch: 1, batches: [] });
    expectRejected(() => appendData(psm, { pid: 1, epoch: 1, seq: 3, offset: 4, txn: true }), 'SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE', 'OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(appendData(psm, { pid: 1, epoch: 1, seq: 0, offset: 4, txn: true }).kind).toBe('appended');
  });

  it('testFetchUpToLastStableOffset (§17): LSO held by open and unreplicated transactions', async () => {
    const { psm } = await newManager();
    appendData(psm, { pid: 1, epoch: 0, seq: 0, count: 5, offset: 0, txn: true });
    appendData(psm, { pid: 3, epoch: 0, seq: 0, count: 3, offset: 5 });
    appendData(psm, { pid: 2, epoch: 0, seq: 0, count: 2, offset: 8, txn: true });
    appendData(psm, { pid: 1, epoch: 0, seq: 5, count: 4, offset: 10, txn: true });
    appendData(psm, { pid: 3, epoch: 0, seq: 3, count: 2, offset: 14 });
    appendData(psm, { pid: 1, epoch: 0, seq: 9, count: 10, offset: 16, txn: true });
    expect(psm.lastStableOffset(26)).toBe(0);
    const commit = appendMarker(psm, { pid: 1, epoch: 0, type: 'COMMIT', offset: 26 });
    expect(commit.lastStableOffset).toBe(8); // P2's open txn
    expect(psm.lastStableOffset(26)).toBe(0); // marker not yet below the HW
    psm.onHighWatermarkUpdated(27);
    expect(psm.lastStableOffset(27)).toBe(8);
    const abort = appendMarker(psm, { pid: 2, epoch: 0, type: 'ABORT', offset: 27 });
    expect(abort).toEqual({ completed: { producerId: 2, firstOffset: 8, lastOffset: 27, isAborted: true }, lastStableOffset: 28 });
    expect(psm.lastStableOffset(27)).toBe(8);
    psm.onHighWatermarkUpdated(28);
    expect(psm.firstUnstableOffset()).toBeNull();
    expect(psm.lastStableOffset(28)).toBe(28);
  });

  it("an aborted txn's LSO is the earliest other open txn, else marker + 1", async () => {
    const { psm } = await newManager();
    appendData(psm, { pid: 1, epoch: 0, seq: 0, offset: 0, txn: true });
    appendData(psm, { pid: 2, epoch: 0, seq: 0, offset: 8, txn: true });
    appendData(psm, { pid: 4, epoch: 0, seq: 0, offset: 20, txn: true });
    expect(appendMarker(psm, { pid: 1, epoch: 0, type: 'ABORT', offset: 29 }).lastStableOffset).toBe(8);
    expect(appendMarker(psm, { pid: 2, epoch: 0, type: 'ABORT', offset: 30 }).lastStableOffset).toBe(20);
    expect(appendMarker(psm, { pid: 4, epoch: 0, type: 'ABORT', offset: 31 }).lastStableOffset).toBe(32);
  });

  it('LSO never passes an open transaction (random interleavings against a reference)', async () => {
    const command = fc.oneof(
      fc.record({ kind: fc.constant('data' as const), producer: fc.integer({ min: 0, max: 3 }), count: fc.integer({ min: 1, max: 3 }) }),
      fc.record({ kind: fc.constant('marker' as const), producer: fc.integer({ min: 0, max: 2 }), abort: fc.boolean() }),
      fc.record({ kind: fc.constant('hw' as const), fraction: fc.double({ min: 0, max: 1, noNaN: true }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 60, size: 'max' }), async (commands) => {
        const { psm } = await newManager();
        const nextSeq = [0, 0, 0, 0];
        const open = new Map<number, number>(); // pid -> first offset
        const unreplicated: { first: number; marker: number }[] = [];
        let leo = 0;
        let hw = 0;
        for (const c of commands) {
          if (c.kind === 'data') {
            // producers 0..2 are transactional, 3 is idempotent only
            const txn = c.producer < 3;
            appendData(psm, { pid: c.producer, epoch: 0, seq: nextSeq[c.producer]!, count: c.count, offset: leo, txn });
            nextSeq[c.producer]! += c.count;
            if (txn && !open.has(c.producer)) open.set(c.producer, leo);
            leo += c.count;
          } else if (c.kind === 'marker') {
            const { completed, lastStableOffset } = appendMarker(psm, { pid: c.producer, epoch: 0, type: c.abort ? 'ABORT' : 'COMMIT', offset: leo });
            const first = open.get(c.producer);
            if (first === undefined) {
              expect(completed).toBeNull();
            } else {
              expect(completed).toEqual({ producerId: c.producer, firstOffset: first, lastOffset: leo, isAborted: c.abort });
              const others = [...open].filter(([p]) => p !== c.producer).map(([, f]) => f);
              expect(lastStableOffset).toBe(others.length === 0 ? leo + 1 : Math.min(...others));
              open.delete(c.producer);
              unreplicated.push({ first, marker: leo });
            }
            leo += 1;
          } else {
            hw = Math.max(hw, Math.floor(hw + (leo - hw) * c.fraction));
            psm.onHighWatermarkUpdated(hw);
          }
          const stillUnreplicated = unreplicated.filter((t) => t.marker >= hw).map((t) => t.first);
          const unstable = [...open.values(), ...stillUnreplicated];
          expect(psm.firstUnstableOffset()).toBe(unstable.length === 0 ? null : Math.min(...unstable));
          const lso = psm.lastStableOffset(hw);
          expect(lso).toBeLessThanOrEqual(hw);
          for (const first of open.values()) expect(lso).toBeLessThanOrEqual(first);
          expect(psm.ongoingTransactions().map((t) => [t.producerId, t.firstOffset])).toEqual([...open].sort((a, b) => a[1] - b[1]));
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe('a rejected batch leaves no trace', () => {
  it('deep-equal state before and after any rejection (random histories and attempts)', async () => {
    const step = fc.record({
      producer: fc.integer({ min: 0, max: 2 }),
      epochDelta: fc.integer({ min: -1, max: 1 }),
      seqMode: fc.constantFrom('next' as const, 'zero' as const, 'random' as const),
      randomSeq: fc.integer({ min: 0, max: 40 }),
      count: fc.integer({ min: 1, max: 3 }),
      txn: fc.boolean(),
      marker: fc.option(fc.record({ abort: fc.boolean(), coordinatorEpochDelta: fc.integer({ min: -1, max: 1 }) }), { freq: 4 }),
    });
    let rejections = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40, size: 'max' }), async (steps) => {
        const { psm } = await newManager();
        let offset = 0;
        for (const s of steps) {
          const entry = psm.lastEntry(s.producer);
          const epoch = Math.max(0, (entry?.producerEpoch ?? 0) + s.epochDelta);
          const before = stateOf(psm);
          try {
            if (s.marker !== null) {
              const coordinatorEpoch = Math.max(0, (entry?.coordinatorEpoch ?? 0) + s.marker.coordinatorEpochDelta);
              appendMarker(psm, { pid: s.producer, epoch, type: s.marker.abort ? 'ABORT' : 'COMMIT', coordinatorEpoch, offset });
              offset += 1;
            } else {
              const next = entry === undefined || entry.lastSeq < 0 ? 0 : entry.lastSeq + 1;
              const seq = s.seqMode === 'next' ? next : s.seqMode === 'zero' ? 0 : s.randomSeq;
              const result = appendData(psm, { pid: s.producer, epoch, seq, count: s.count, offset, txn: s.txn });
              if (result.kind === 'appended') offset += s.count;
              else expect(stateOf(psm)).toEqual(before);
            }
          } catch (error) {
            expect((error as { code?: string }).code).toMatch(/^SEGLOG_ERR_PRODUCER_/);
            expect(stateOf(psm)).toEqual(before);
            rejections++;
          }
        }
      }),
      { numRuns: 150 },
    );
    expect(rejections).toBeGreaterThan(50);
  });
});

describe('expiration', () => {
  it('removes idle producers without an open transaction; never one with an open transaction', async () => {
    const { psm } = await newManager({ producerIdExpirationMs: 1000 });
    appendData(psm, { pid: 1, epoch: 0, seq: 0, offset: 0, ts: 100 });
    appendData(psm, { pid: 2, epoch: 0, seq: 0, offset: 1, ts: 100, txn: true });
    appendData(psm, { pid: 3, epoch: 0, seq: 0, offset: 2, ts: 600 });
    expect(psm.removeExpiredProducers(1099)).toEqual([]);
    expect(psm.removeExpiredProducers(1100)).toEqual([1]);
    expect(psm.removeExpiredProducers(10_000)).toEqual([3]);
    expect([...psm.activeProducers().keys()]).toEqual([2]);
    appendMarker(psm, { pid: 2, epoch: 0, type: 'COMMIT', offset: 3, ts: 200 });
    expect(psm.removeExpiredProducers(1199)).toEqual([]);
    expect(psm.removeExpiredProducers(1200)).toEqual([2]);
  });
});

/** The state a snapshot keeps: each producer's last batch, with the entry's lastTimestamp (Kafka's readSnapshot). */
function afterReload(state: unknown): unknown {
  const s = state as { producers: { lastTimestamp: number; batches: { timestamp: number }[] }[]; unreplicated: unknown[] };
  return {
    ...s,
    unreplicated: [],
    producers: s.producers.map((p) => ({ ...p, batches: p.batches.slice(-1).map((b) => ({ ...b, timestamp: p.lastTimestamp })) })),
  };
}

describe('snapshots', () => {
  it('snapshot then load gives the same state (the window shrinks to the last batch)', async () => {
    const step = fc.record({
      producer: fc.integer({ min: 0, max: 4 }),
      count: fc.integer({ min: 1, max: 4 }),
      txn: fc.boolean(),
      marker: fc.option(fc.boolean(), { freq: 3 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 30, size: 'max' }), async (steps) => {
        const { io, psm } = await newManager();
        let offset = 0;
        for (const s of steps) {
          const entry = psm.lastEntry(s.producer);
          if (s.marker !== null) {
            appendMarker(psm, { pid: s.producer, epoch: 0, type: s.marker ? 'ABORT' : 'COMMIT', offset });
            offset += 1;
          } else {
            const txn = entry?.currentTxnFirstOffset !== null && entry?.currentTxnFirstOffset !== undefined ? true : s.txn;
            appendData(psm, { pid: s.producer, epoch: 0, seq: entry === undefined || entry.lastSeq < 0 ? 0 : entry.lastSeq + 1, count: s.count, offset, txn });
            offset += s.count;
          }
        }
        const before = stateOf(psm);
        const written = await psm.takeSnapshot();
        expect(written).toBe(offset === 0 ? null : offset);
        const { psm: reloaded } = await newManager({ io });
        await reloaded.truncateAndReload(0, offset, 0);
        expect(reloaded.mapEndOffset).toBe(offset);
        // Unreplicated (completed) txns are not in a snapshot: the first unstable offset is the first open txn.
        const firstOpen = (before as { ongoing: { firstOffset: number }[] }).ongoing[0]?.firstOffset ?? null;
        expect(stateOf(reloaded)).toEqual({ ...(afterReload(before) as object), firstUnstableOffset: firstOpen });
        expect(reloaded.ongoingTransactions()).toEqual(psm.ongoingTransactions());
      }),
      { numRuns: 120 },
    );
  });

  it('skips a snapshot when the map end offset has not moved; writes at the map end offset', async () => {
    const { io, psm } = await newManager();
    expect(await psm.takeSnapshot()).toBeNull();
    appendData(psm, { pid: 1000, epoch: 0, seq: 0, count: 2, offset: 0, ts: 1_700_000_000_000 });
    expect(await psm.takeSnapshot()).toBe(2);
    expect(await psm.takeSnapshot()).toBeNull();
    expect(psm.snapshotOffsets()).toEqual([2]);
    // the fixture's one-entry snapshot, byte for byte
    const bytes = await io.readFile(`${DIR}/00000000000000000002.snapshot`);
    expect(bytes.toString('hex')).toBe('0001fc31e6c40000000100000000000003e80000000000010000000000000001000000010000018bcfe56800ffffffffffffffffffffffff');
    expect(await io.readdir(DIR)).toEqual(['00000000000000000002.snapshot']);
  });

  it('the snapshot survives a power loss once takeSnapshot resolved', async () => {
    const { io, psm } = await newManager();
    await io.fsyncDir('/data');
    await io.fsyncDir('/');
    appendData(psm, { pid: 1, epoch: 0, seq: 0, offset: 0, txn: true });
    await psm.takeSnapshot();
    const after = io.recover('power-clean');
    const { psm: reloaded } = await newManager({ io: after });
    await reloaded.truncateAndReload(0, 1, 0);
    expect(reloaded.ongoingTransactions()).toEqual([{ producerId: 1, firstOffset: 0, lastOffset: null }]);
  });

  it('loading drops expired producers without an open transaction', async () => {
    const { io, psm } = await newManager({ producerIdExpirationMs: 1000 });
    appendData(psm, { pid: 1, epoch: 0, seq: 0, offset: 0, ts: 100 });
    appendData(psm, { pid: 2, epoch: 0, seq: 0, offset: 1, ts: 100, txn: true });
    appendData(psm, { pid: 3, epoch: 0, seq: 0, offset: 2, ts: 900 });
    await psm.takeSnapshot();
    const { psm: reloaded } = await newManager({ io, producerIdExpirationMs: 1000 });
    await reloaded.truncateAndReload(0, 3, 1500);
    expect([...reloaded.activeProducers().keys()].sort()).toEqual([2, 3]);
  });

  it('a corrupt newest snapshot is deleted and the previous one loaded', async () => {
    const { io, psm } = await newManager();
    appendData(psm, { pid: 1, epoch: 0, seq: 0, offset: 0 });
    await psm.takeSnapshot(); // at 1
    appendData(psm, { pid: 2, epoch: 0, seq: 0, offset: 1 });
    await psm.takeSnapshot(); // at 2
    const path = `${DIR}/00000000000000000002.snapshot`;
    const bytes = await io.readFile(path);
    bytes[bytes.length - 1]! ^= 0xff;
    const file = await io.open(path);
    await file.pwrite(bytes, 0);
    await file.close();
    const { psm: reloaded } = await newManager({ io });
    await reloaded.truncateAndReload(0, 2, 0);
    expect(reloaded.mapEndOffset).toBe(1);
    expect([...reloaded.activeProducers().keys()]).toEqual([1]);
    expect(reloaded.snapshotOffsets()).toEqual([1]);
    expect(await io.readdir(DIR)).toEqual(['00000000000000000001.snapshot']);
  });

  it('truncateAndReload deletes snapshots above the LEO and at or below the log start, then reloads', async () => {
    const { io, psm } = await newManager();
    for (let i = 0; i < 4; i++) {
      appendData(psm, { pid: i, epoch: 0, seq: 0, count: 10, offset: i * 10 });
      await psm.takeSnapshot(); // 10, 20, 30, 40
    }
    await psm.truncateAndReload(10, 25, 0);
    expect(psm.snapshotOffsets()).toEqual([20]);
    expect(await io.readdir(DIR)).toEqual(['00000000000000000020.snapshot']);
    expect(psm.mapEndOffset).toBe(20);
    expect([...psm.activeProducers().keys()].sort()).toEqual([0, 1]);
    // no snapshot at all: empty state at the log start
    await psm.truncateAndReload(20, 20, 0);
    expect(psm.snapshotOffsets()).toEqual([]);
    expect(psm.mapEndOffset).toBe(20); // unchanged map end: state kept, only the start moved
    expect([...psm.activeProducers().keys()].sort()).toEqual([0, 1]);
    await psm.truncateAndReload(5, 15, 0);
    expect(psm.mapEndOffset).toBe(5);
    expect(psm.activeProducers().size).toBe(0);
  });

  it('truncateFullyAndStartAt clears everything and deletes every snapshot', async () => {
    const { io, psm } = await newManager();
    appendData(psm, { pid: 1, epoch: 0, seq: 0, offset: 0, txn: true });
    await psm.takeSnapshot();
    await psm.truncateFullyAndStartAt(4);
    expect(psm.mapEndOffset).toBe(4);
    expect(psm.activeProducers().size).toBe(0);
    expect(psm.firstUnstableOffset()).toBeNull();
    expect(await io.readdir(DIR)).toEqual([]);
    appendData(psm, { pid: 1, epoch: 0, seq: 0, offset: 4 });
    expect(await psm.takeSnapshot()).toBe(5);
  });

  it('deleteSnapshotsBelow/Above, deleteSnapshot and the stray-snapshot rule', async () => {
    const { io, psm } = await newManager();
    for (const end of [10, 20, 30, 40, 45, 50]) {
      psm.updateMapEndOffset(end);
      await psm.takeSnapshot();
    }
    await psm.deleteSnapshotsBelow(20);
    await psm.deleteSnapshotsAbove(45);
    expect(psm.snapshotOffsets()).toEqual([20, 30, 40, 45]);
    await psm.deleteSnapshot(30);
    expect(psm.snapshotOffsets()).toEqual([20, 40, 45]);
    // segments at 0 and 20: 40 is stray, 45 is the largest stray above the highest base (kept)
    await psm.removeStraySnapshots([0, 20]);
    expect(psm.snapshotOffsets()).toEqual([20, 45]);
    expect(await io.readdir(DIR)).toEqual(['00000000000000000020.snapshot', '00000000000000000045.snapshot']);
    expect(psm.latestSnapshotOffset()).toBe(45);
    expect(psm.oldestSnapshotOffset()).toBe(20);
  });

  it('open() lists existing snapshots and removes leftover temporary files', async () => {
    const { io, psm } = await newManager();
    psm.updateMapEndOffset(7);
    await psm.takeSnapshot();
    const tmp = await io.open(`${DIR}/00000000000000000009.snapshot.tmp`, { create: true });
    await tmp.close();
    const { psm: reopened } = await newManager({ io });
    expect(reopened.snapshotOffsets()).toEqual([7]);
    expect(await io.readdir(DIR)).toEqual(['00000000000000000007.snapshot']);
  });

  it('onLogStartOffsetIncremented moves the map end offset up and drops unreplicated txns below it', async () => {
    const { psm } = await newManager();
    appendData(psm, { pid: 1, epoch: 0, seq: 0, offset: 0, txn: true });
    appendMarker(psm, { pid: 1, epoch: 0, type: 'COMMIT', offset: 1 });
    expect(psm.firstUnstableOffset()).toBe(0);
    psm.onLogStartOffsetIncremented(2);
    expect(psm.firstUnstableOffset()).toBeNull();
    psm.onLogStartOffsetIncremented(10);
    expect(psm.mapEndOffset).toBe(10);
    expect(psm.lastEntry(1)).toBeDefined(); // entries stay (Kafka keeps them)
  });
});

describe('replayBatch (recovery) over real record batches', () => {
  it('rebuilds state and the aborted-txn LSOs from the bytes of the log', async () => {
    const { psm } = await newManager();
    const batches = [
      buildBatch({ baseOffset: 0, producerId: 1, producerEpoch: 0, baseSequence: 0, transactional: true, records: [{ value: 'a', timestamp: 10 }, { value: 'b', timestamp: 11 }] }),
      buildBatch({ baseOffset: 2, producerId: 2, producerEpoch: 0, baseSequence: 0, transactional: true, records: [{ value: 'c', timestamp: 12 }] }),
      buildBatch({ baseOffset: 3, records: [{ value: 'plain', timestamp: 13 }] }),
      buildControlBatch({ type: 'ABORT', producerId: 1, producerEpoch: 0, coordinatorEpoch: 3, timestamp: 14, baseOffset: 4 }),
      buildControlBatch({ type: 'COMMIT', producerId: 2, producerEpoch: 0, coordinatorEpoch: 3, timestamp: 15, baseOffset: 5 }),
    ].map((bytes) => new RecordBatch(bytes));
    const replayed = batches.map((batch) => psm.replayBatch(batch));
    expect(replayed).toEqual([
      null,
      null,
      null,
      { txn: { producerId: 1, firstOffset: 0, lastOffset: 4, isAborted: true }, lastStableOffset: 2 },
      { txn: { producerId: 2, firstOffset: 2, lastOffset: 5, isAborted: false }, lastStableOffset: 6 },
    ]);
    expect(psm.mapEndOffset).toBe(6);
    expect(psm.lastEntry(1)).toMatchObject({ lastSeq: 1, coordinatorEpoch: 3, lastTimestamp: 14, currentTxnFirstOffset: null });
    expect(psm.lastEntry(2)?.batches).toEqual([{ firstSeq: 0, lastSeq: 0, firstOffset: 2, lastOffset: 2, offsetDelta: 0, timestamp: 12 }]);
  });
});

// ------------------------------------------------- model-based sequences

interface RefProducer {
  epoch: number;
  /** Accepted batches of the current epoch, the last 8 (the duplicate window is the last 5 of them). */
  history: { first: number; last: number; firstOffset: number; lastOffset: number }[];
}

describe('sequence validation against a trivial reference', () => {
  it('agrees with per-producer (epoch, expected next sequence, last-5 window)', async () => {
    const nearMax = fc.integer({ min: INT32_MAX - 6, max: INT32_MAX });
    const attempt = fc.record({
      producer: fc.integer({ min: 0, max: 1 }),
      epochDelta: fc.constantFrom(0, 0, 0, 0, 0, 0, 0, 0, 1, -1),
      seqMode: fc.constantFrom('next' as const, 'next' as const, 'next' as const, 'window' as const, 'off' as const, 'zero' as const, 'max' as const),
      windowIndex: fc.nat(7),
      off: fc.integer({ min: -3, max: 3 }),
      max: nearMax,
      count: fc.integer({ min: 1, max: 4 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(attempt, { minLength: 1, maxLength: 80, size: 'max' }), async (attempts) => {
        const { psm } = await newManager();
        const ref = new Map<number, RefProducer>();
        let leo = 0;
        for (const a of attempts) {
          const r = ref.get(a.producer);
          const epoch = Math.max(0, (r?.epoch ?? 0) + a.epochDelta);
          const lastInWindow = r?.history[r.history.length - 1];
          const window = r?.history.slice(-5) ?? [];
          const expectedNext = lastInWindow === undefined ? 0 : lastInWindow.last === INT32_MAX ? 0 : lastInWindow.last + 1;
          let seq: number;
          let count = a.count;
          if (a.seqMode === 'next') seq = expectedNext;
          else if (a.seqMode === 'zero') seq = 0;
          else if (a.seqMode === 'max') seq = a.max;
          else if (a.seqMode === 'off') seq = Math.max(0, expectedNext + a.off);
          else {
            // any of the last 8: inside the window (duplicate) or older (out of order)
            const w = r?.history[r.history.length - 1 - (a.windowIndex % Math.max(1, r.history.length))];
            seq = w?.first ?? 0;
            if (w !== undefined) count = w.lastOffset - w.firstOffset + 1;
          }
          const last = (seq + count - 1) % (INT32_MAX + 1);
          // the reference decision
          let expected: 'appended' | 'duplicate' | 'FENCED' | 'OUT_OF_ORDER';
          let dup: { firstOffset: number; lastOffset: number } | undefined;
          if (r === undefined) expected = 'appended';
          else if (epoch === r.epoch && (dup = window.find((w) => w.first === seq && w.last === last)) !== undefined) expected = 'duplicate';
          else if (epoch < r.epoch) expected = 'FENCED';
          else if (epoch > r.epoch) expected = seq === 0 ? 'appended' : 'OUT_OF_ORDER';
          else expected = seq === expectedNext ? 'appended' : 'OUT_OF_ORDER';

          let actual: string;
          let answered: { firstOffset: number; lastOffset: number } | undefined;
          try {
            const result = appendData(psm, { pid: a.producer, epoch, seq, count, offset: leo });
            actual = result.kind;
            if (result.kind === 'duplicate') answered = { firstOffset: result.batch.firstOffset, lastOffset: result.batch.lastOffset };
          } catch (error) {
            const code = (error as { code?: string }).code;
            actual = code === 'SEGLOG_ERR_PRODUCER_FENCED_EPOCH' ? 'FENCED' : code === 'SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE' ? 'OUT_OF_ORDER' : String(code);
          }
          expect(actual).toBe(expected);
          if (expected === 'duplicate') expect(answered).toEqual({ firstOffset: dup?.firstOffset, lastOffset: dup?.lastOffset });
          if (expected === 'appended') {
            const next: RefProducer = r === undefined || epoch !== r.epoch ? { epoch, history: [] } : r;
            next.history.push({ first: seq, last, firstOffset: leo, lastOffset: leo + count - 1 });
            if (next.history.length > 8) next.history.shift();
            ref.set(a.producer, next);
            leo += count;
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
