// Model test of the log cleaner (issue 20, Done when 1): random keyed
// appends (tombstones, idempotent producers, committed and aborted
// transactions), rolls, clock steps, reopens and cleaning passes at random
// points. After every pass, against a reference list of every record
// appended:
// - per key, the last record read (aborted data left out) is the latest
//   committed record of the reference; a key whose latest is a tombstone may
//   be missing only when delete.retention.ms has passed since its append;
// - every record read has the offset, key and value it was appended with,
//   offsets strictly increase, every batch passes its CRC (readBatches) and
//   the follower validation;
// - the LSO, the log end offset and the producers' deduplication (a retry
//   of each idempotent producer's last batch answers its original offsets)
//   are unchanged.
// Bounded by counts (runs × commands), not time.
import fc from 'fast-check';
import { buildBatch, validateFollowerBatch } from '@seglog/records';
import { describe, expect, it } from 'vitest';
import type { Log } from '../src/log/log.js';
import { DIR, clock, config, newIo, openLog, T0 } from './log-helpers.js';
import { cleanerFor, dataRecords, readBatches } from './cleaner-helpers.js';

const KEYS = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
const RETENTION_MS = 5_000;
const TXN_PID = 900;

type Command =
  | { readonly kind: 'put'; readonly key: number; readonly tombstone: boolean; readonly count: number }
  | { readonly kind: 'idempotent'; readonly producer: number; readonly key: number }
  | { readonly kind: 'txn'; readonly keys: readonly number[]; readonly commit: boolean }
  | { readonly kind: 'roll' }
  | { readonly kind: 'tick'; readonly ms: number }
  | { readonly kind: 'clean' }
  | { readonly kind: 'reopen' };

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('put' as const), key: fc.nat(KEYS.length - 1), tombstone: fc.boolean(), count: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('idempotent' as const), producer: fc.integer({ min: 1, max: 2 }), key: fc.nat(KEYS.length - 1) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('txn' as const), keys: fc.array(fc.nat(KEYS.length - 1), { minLength: 1, maxLength: 3 }), commit: fc.boolean() }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'roll' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 4_000 }) }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'clean' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reopen' as const }) },
);

interface RefRecord {
  readonly offset: number;
  readonly key: string;
  readonly value: string | null;
  readonly appendedMs: number;
  aborted: boolean;
}

interface ProducerRef {
  sequence: number;
  lastBatch: Buffer | null;
  lastOffsets: [number, number];
}

class Model {
  readonly records: RefRecord[] = [];
  readonly byOffset = new Map<number, RefRecord>();
  readonly producers = new Map<number, ProducerRef>();
  txnSequence = 0;

  add(record: RefRecord): void {
    this.records.push(record);
    this.byOffset.set(record.offset, record);
  }

  latest(): Map<string, RefRecord> {
    const out = new Map<string, RefRecord>();
    for (const record of this.records) if (!record.aborted) out.set(record.key, record);
    return out;
  }
}

const CFG = config({ cleanupPolicy: 'compact', segmentBytes: 700, minCleanableDirtyRatio: 0.01, deleteRetentionMs: RETENTION_MS });

async function checkLog(log: Log, model: Model, nowMs: number): Promise<void> {
  const batches = await readBatches(log);
  let previous = -1;
  for (const batch of batches) {
    validateFollowerBatch(batch.bytes());
    expect(batch.baseOffset).toBeGreaterThan(previous);
    previous = batch.lastOffset;
  }
  const read = dataRecords(batches).filter((r) => model.byOffset.get(r.offset)?.aborted !== true);
  let last = -1;
  const seen = new Map<string, string | null>();
  for (const record of read) {
    expect(record.offset).toBeGreaterThan(last);
    last = record.offset;
    const appended = model.byOffset.get(record.offset);
    expect(appended, `offset ${record.offset} was appended`).toBeDefined();
    expect([record.key, record.value]).toEqual([appended?.key, appended?.value]);
    seen.set(record.key as string, record.value);
  }
  const latest = model.latest();
  for (const [key, ref] of latest) {
    if (seen.has(key)) {
      expect(seen.get(key), `latest value of ${key}`).toBe(ref.value);
    } else {
      expect(ref.value, `${key} lost its latest value`).toBeNull();
      expect(nowMs - ref.appendedMs, `tombstone of ${key} dropped before delete.retention.ms`).toBeGreaterThanOrEqual(RETENTION_MS);
    }
  }
  for (const key of seen.keys()) expect(latest.has(key)).toBe(true);
}

async function checkDedup(log: Log, model: Model): Promise<void> {
  for (const producer of model.producers.values()) {
    if (producer.lastBatch === null) continue;
    const end = log.logEndOffset;
    const retry = await log.appendAsLeader(Buffer.from(producer.lastBatch));
    expect([retry.firstOffset, retry.lastOffset]).toEqual(producer.lastOffsets);
    expect(log.logEndOffset).toBe(end);
  }
}

/** Over all runs: what the passes did, so the property cannot hold by cleaning nothing. */
const totals = { removedRecords: 0, droppedTombstones: 0, droppedAborted: 0, emptyProducerBatches: 0 };

async function tally(log: Log, model: Model): Promise<void> {
  const batches = await readBatches(log);
  const present = new Set(dataRecords(batches).map((r) => r.offset));
  for (const record of model.records) {
    if (present.has(record.offset) || record.offset < log.logStartOffset) continue;
    if (record.aborted) totals.droppedAborted++;
    else if (record.value === null) totals.droppedTombstones++;
  }
  totals.emptyProducerBatches += batches.filter((b) => b.producerId >= 0 && b.recordsCount === 0).length;
}

async function run(commands: readonly Command[]): Promise<void> {
  const io = await newIo();
  const c = clock();
  let log = await openLog(io, CFG, { now: c.fn });
  const model = new Model();
  const cleaner = cleanerFor(io, () => [log], c.fn, 4 * (1 + 48));
  let value = 0;
  try {
    for (const cmd of commands) {
      switch (cmd.kind) {
        case 'put': {
          const key = KEYS[cmd.key] as string;
          const records = [];
          for (let i = 0; i < cmd.count; i++) records.push({ key, value: cmd.tombstone && i === cmd.count - 1 ? null : `v${value++}`, timestamp: T0 });
          const result = await log.appendAsLeader(buildBatch({ records }));
          records.forEach((r, i) => model.add({ offset: result.firstOffset + i, key: r.key, value: r.value, appendedMs: c.now, aborted: false }));
          break;
        }
        case 'idempotent': {
          const producer = model.producers.get(cmd.producer) ?? { sequence: 0, lastBatch: null, lastOffsets: [0, 0] };
          const record = { key: KEYS[cmd.key] as string, value: `p${cmd.producer}-${value++}` };
          const batch = buildBatch({ records: [{ ...record, timestamp: T0 }], producerId: cmd.producer, producerEpoch: 0, baseSequence: producer.sequence });
          const copy = Buffer.from(batch);
          const result = await log.appendAsLeader(batch);
          producer.sequence++;
          producer.lastBatch = copy;
          producer.lastOffsets = [result.firstOffset, result.lastOffset];
          model.producers.set(cmd.producer, producer);
          model.add({ offset: result.firstOffset, ...record, appendedMs: c.now, aborted: false });
          break;
        }
        case 'txn': {
          const added: RefRecord[] = [];
          for (const k of cmd.keys) {
            const record = { key: KEYS[k] as string, value: `t${value++}` };
            const batch = buildBatch({ records: [{ ...record, timestamp: T0 }], producerId: TXN_PID, producerEpoch: 0, baseSequence: model.txnSequence++, transactional: true });
            const result = await log.appendAsLeader(batch);
            const ref = { offset: result.firstOffset, ...record, appendedMs: c.now, aborted: !cmd.commit };
            added.push(ref);
            model.add(ref);
          }
          await log.appendMarker({ type: cmd.commit ? 'COMMIT' : 'ABORT', producerId: TXN_PID, producerEpoch: 0, coordinatorEpoch: 0, leaderEpoch: -1, timestamp: T0 });
          break;
        }
        case 'roll':
          await log.forceRoll();
          break;
        case 'tick':
          c.now += cmd.ms;
          break;
        case 'clean': {
          log.updateHighWatermark(log.logEndOffset);
          const lso = log.lastStableOffset;
          const end = log.logEndOffset;
          await log.written(end - 1 < 0 ? 0 : end - 1).catch(() => undefined);
          totals.removedRecords += (await cleaner.clean(log)).removedRecords;
          expect(log.lastStableOffset).toBe(lso);
          expect(log.logEndOffset).toBe(end);
          await checkLog(log, model, c.now);
          break;
        }
        case 'reopen': {
          const end = log.logEndOffset;
          await log.close();
          log = await openLog(io, CFG, { now: c.fn, recoveryPoint: end });
          expect(log.logEndOffset).toBe(end);
          await checkLog(log, model, c.now);
          break;
        }
      }
    }
    log.updateHighWatermark(log.logEndOffset);
    await cleaner.clean(log);
    await checkLog(log, model, c.now);
    await checkDedup(log, model);
    await tally(log, model);
    const end = log.logEndOffset;
    await log.close();
    log = await openLog(io, CFG, { now: c.fn, recoveryPoint: end });
    await checkLog(log, model, c.now);
    await checkDedup(log, model);
    // Without producer snapshots the state comes from the cleaned log alone: the kept
    // last batches (dedup) and markers (no transaction left open: LSO = HW = LEO).
    await log.close();
    for (const name of await io.readdir(DIR)) if (name.endsWith('.snapshot')) await io.unlink(`${DIR}/${name}`);
    log = await openLog(io, CFG, { now: c.fn, recoveryPoint: 0, hadCleanShutdown: false });
    log.updateHighWatermark(log.logEndOffset);
    expect(log.lastStableOffset).toBe(log.logEndOffset);
    await checkLog(log, model, c.now);
    await checkDedup(log, model);
  } finally {
    await log.close();
  }
}

describe('log cleaner model', () => {
  it('after every pass the log reads as the reference, offsets, CRCs, LSO and dedup unchanged', async () => {
    await fc.assert(fc.asyncProperty(fc.array(command, { minLength: 5, maxLength: 60 }), run), { numRuns: 60 });
    expect(totals.removedRecords).toBeGreaterThan(20);
    expect(totals.droppedTombstones).toBeGreaterThan(0);
    expect(totals.droppedAborted).toBeGreaterThan(0);
    expect(totals.emptyProducerBatches).toBeGreaterThan(0);
  });
});
