// BlackholeLog: the same answers as Log for any produce history (offsets or
// error codes, HW, LSO, byte counts), and no reads.
import { buildBatch, buildControlBatch } from '@seglog/records';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BlackholeLog } from '../src/blackhole-log.js';
import type { AppendResult, Log } from '../src/log/log.js';
import { rejected } from './helpers.js';
import { clock, config, newIo, openLog, T0 } from './log-helpers.js';

const INT32_MAX = 0x7fffffff;

type Op =
  | { readonly kind: 'produce'; readonly pid: number; readonly epochDelta: number; readonly seqMode: 'next' | 'retry' | 'old' | 'gap' | 'zero' | 'wrap'; readonly count: number; readonly transactional: boolean }
  | { readonly kind: 'plain'; readonly count: number }
  | { readonly kind: 'marker'; readonly pid: number; readonly type: 'COMMIT' | 'ABORT'; readonly epochDelta: number; readonly coordinatorDelta: number }
  | { readonly kind: 'hw'; readonly at: number }
  | { readonly kind: 'corrupt' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({
    kind: fc.constant('produce' as const), pid: fc.integer({ min: 1, max: 3 }), epochDelta: fc.constantFrom(0, 0, 0, 0, -1, 1),
    seqMode: fc.constantFrom('next', 'next', 'next', 'retry', 'old', 'gap', 'zero', 'wrap'), count: fc.integer({ min: 1, max: 3 }), transactional: fc.boolean(),
  }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('plain' as const), count: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 2, arbitrary: fc.record({
    kind: fc.constant('marker' as const), pid: fc.integer({ min: 1, max: 3 }), type: fc.constantFrom('COMMIT' as const, 'ABORT' as const),
    epochDelta: fc.constantFrom(0, 0, 0, -1, 1), coordinatorDelta: fc.constantFrom(0, 0, -1, 1),
  }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('hw' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'corrupt' as const }) },
);

/** The generator's idea of each producer (it may be wrong on purpose: that is the point). */
interface Sent { epoch: number; nextSeq: number; coordinatorEpoch: number; last: Buffer | null; older: Buffer | null }

function batchFor(op: Extract<Op, { kind: 'produce' }>, sent: Sent): Buffer {
  const epoch = Math.max(0, sent.epoch + op.epochDelta);
  if (op.seqMode === 'retry' && sent.last !== null) return Buffer.from(sent.last);
  if (op.seqMode === 'old' && sent.older !== null) return Buffer.from(sent.older);
  let seq = sent.nextSeq;
  if (op.seqMode === 'gap') seq += 2;
  else if (op.seqMode === 'zero') seq = 0;
  else if (op.seqMode === 'wrap') seq = INT32_MAX - op.count + 1;
  const records = [];
  for (let i = 0; i < op.count; i++) records.push({ value: `${op.pid}:${seq + i}`, timestamp: T0 + i });
  const bytes = buildBatch({ records, producerId: op.pid, producerEpoch: epoch, baseSequence: seq, transactional: op.transactional });
  sent.older = sent.last;
  sent.last = Buffer.from(bytes);
  sent.epoch = epoch;
  sent.nextSeq = seq + op.count > INT32_MAX ? seq + op.count - INT32_MAX - 1 : seq + op.count;
  return bytes;
}

function outcome(result: PromiseSettledResult<AppendResult>): unknown {
  if (result.status === 'fulfilled') return result.value;
  return (result.reason as { code?: string }).code ?? String(result.reason);
}

describe('BlackholeLog', () => {
  it('answers any produce history exactly as Log does (offsets or codes, HW, LSO, bytes)', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 60 }), fc.integer({ min: 200, max: 2000 }), async (ops, segmentBytes) => {
        const io = await newIo();
        const cfg = config({ segmentBytes });
        const c = clock(T0 + 5000);
        const log = await openLog(io, cfg, { now: c.fn });
        const hole = await BlackholeLog.open(cfg, { topic: 't', partition: 0, now: c.fn });
        const sent = new Map<number, Sent>();
        let accepted = 0;
        for (const op of ops) {
          c.now++;
          if (op.kind === 'hw') {
            const target = Math.floor(op.at * (log.logEndOffset + 1));
            expect(hole.updateHighWatermark(target)).toBe(log.updateHighWatermark(target));
          } else {
            let bytes: Buffer | null = null;
            let run: (target: Log | BlackholeLog, input: Buffer | null) => Promise<AppendResult>;
            if (op.kind === 'marker') {
              const s = sent.get(op.pid) ?? { epoch: 0, nextSeq: 0, coordinatorEpoch: 0, last: null, older: null };
              const m = { type: op.type, producerId: op.pid, producerEpoch: Math.max(0, s.epoch + op.epochDelta), coordinatorEpoch: Math.max(0, s.coordinatorEpoch + op.coordinatorDelta), leaderEpoch: 0, timestamp: c.now };
              // A lower coordinator epoch is a stale coordinator: the real one keeps its epoch.
              if (op.coordinatorDelta >= 0) s.coordinatorEpoch = m.coordinatorEpoch;
              sent.set(op.pid, s);
              run = (target) => target.appendMarker(m);
            } else {
              if (op.kind === 'produce') {
                const s = sent.get(op.pid) ?? { epoch: 0, nextSeq: 0, coordinatorEpoch: 0, last: null, older: null };
                sent.set(op.pid, s);
                bytes = batchFor(op, s);
              } else if (op.kind === 'plain') {
                bytes = buildBatch({ records: Array.from({ length: op.count }, (_, i) => ({ value: `v${i}`, timestamp: T0 + i })) });
              } else {
                bytes = buildBatch({ records: [{ value: 'bad', timestamp: T0 }] });
                bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 0xff;
              }
              run = (target, input) => target.appendAsLeader(Buffer.from(input as Buffer), { leaderEpoch: 0 });
            }
            const [a, b] = await Promise.allSettled([run(log, bytes), run(hole, bytes)]);
            expect(outcome(b)).toEqual(outcome(a));
            if (a.status === 'fulfilled') accepted++;
            if (a.status === 'fulfilled' && a.value.sizeInBytes === 0) seen.add('duplicate');
            if (a.status === 'rejected') seen.add(String(outcome(a)));
          }
          expect([hole.logEndOffset, hole.highWatermark, hole.lastStableOffset]).toEqual([log.logEndOffset, log.highWatermark, log.lastStableOffset]);
          if (log.lastStableOffset < log.highWatermark) seen.add('lso<hw');
        }
        expect(hole.size).toBe(log.size);
        expect(hole.metrics.appends).toBe(accepted - hole.metrics.duplicates);
        await log.close();
      }),
      {
        numRuns: 60,
        examples: [[[
          { kind: 'produce', pid: 1, epochDelta: 0, seqMode: 'next', count: 2, transactional: true },
          { kind: 'plain', count: 1 },
          { kind: 'hw', at: 0.99 },
          { kind: 'marker', pid: 1, type: 'ABORT', epochDelta: 0, coordinatorDelta: 1 },
          { kind: 'hw', at: 0.99 },
          { kind: 'marker', pid: 1, type: 'COMMIT', epochDelta: 0, coordinatorDelta: -1 },
        ], 1000]],
      },
    );
    // The histories did exercise every path (otherwise the parity proves little).
    for (const path of ['duplicate', 'lso<hw', 'SEGLOG_ERR_PRODUCER_OUT_OF_ORDER_SEQUENCE', 'SEGLOG_ERR_PRODUCER_FENCED_EPOCH',
      'SEGLOG_ERR_PRODUCER_INVALID_TXN_STATE', 'SEGLOG_ERR_PRODUCER_COORDINATOR_FENCED', 'SEGLOG_ERR_RECORDS_CRC_MISMATCH']) {
      expect(seen).toContain(path);
    }
  });

  it('follower appends (with markers) give the same offsets, HW and LSO; reads are refused with a reason', async () => {
    const io = await newIo();
    const cfg = config();
    const log = await openLog(io, cfg);
    const hole = await BlackholeLog.open(cfg, { topic: 't', partition: 0 });
    const data = buildBatch({ baseOffset: 0, records: [{ value: 'a', timestamp: T0 }, { value: 'b', timestamp: T0 + 1 }], producerId: 8, producerEpoch: 0, baseSequence: 0, transactional: true });
    for (const target of [log, hole]) await target.appendAsFollower(Buffer.from(data));
    log.updateHighWatermark(2);
    hole.updateHighWatermark(2);
    expect([hole.lastStableOffset, log.lastStableOffset]).toEqual([0, 0]);
    const abort = buildControlBatch({ type: 'ABORT', producerId: 8, producerEpoch: 0, coordinatorEpoch: 0, timestamp: T0, baseOffset: 2 });
    const answers = [await log.appendAsFollower(Buffer.from(abort)), await hole.appendAsFollower(Buffer.from(abort))];
    expect(answers[1]).toEqual(answers[0]);
    expect([log.updateHighWatermark(3), hole.updateHighWatermark(3)]).toEqual([3, 3]);
    expect([hole.lastStableOffset, log.lastStableOffset]).toEqual([3, 3]);
    await log.written(2);
    const plan = await log.read(0, 1000, { isolation: 'read_committed' });
    expect(plan.abortedTransactions).toEqual([{ producerId: 8, firstOffset: 0, lastOffset: 2, lastStableOffset: 3 }]);
    await plan.release();
    const error = await rejected(hole.read(0, 100));
    expect(error.code).toBe('SEGLOG_ERR_LOG_BLACKHOLE_READ');
    expect(error.message).toContain('discarded');
    expect(await hole.written(1)).toBeUndefined();
    await log.close();
    await hole.close();
    expect((await rejected(hole.appendAsLeader(Buffer.from(data), { leaderEpoch: 0 }))).code).toBe('SEGLOG_ERR_LOG_CLOSED');
  });
});
