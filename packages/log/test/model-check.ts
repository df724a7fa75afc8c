// The model check shared by the model-based LogManager tests
// (handle-cache-model, index-budget-model); not a test file itself. A
// ModelCheck drives a LogManager on SimIo (topic `t`, partitions 0..n-1) and
// keeps one model per partition: model[offset] is the hex of the record's
// value. Every read is checked against the model record by record, so a test
// that drives the logs through these steps checks every byte it reads back;
// what each test asserts about its budget stays in the test.

import type { SimIo } from '@seglog/io';
import { splitBatches } from '@seglog/records';
import fc from 'fast-check';
import { expect } from 'vitest';
import type { FetchPlan } from '../src/fetch-plan.js';
import type { Log } from '../src/log/log.js';
import type { LogManager } from '../src/log-manager.js';
import { newIo, producerBatch } from './log-helpers.js';

/** The commands both tests generate; each test adds its own and picks the weights. */
export type AppendCommand = { readonly kind: 'append'; readonly p: number; readonly records: number };
export type ReadCommand = { readonly kind: 'read'; readonly p: number; readonly at: number };
export type RetainCommand = { readonly kind: 'retain'; readonly p: number; readonly at: number };
export type ReopenCommand = { readonly kind: 'reopen' };

/** An append of 1 to 3 records to one of `partitions` partitions. */
export function appendCommand(partitions: number): fc.Arbitrary<AppendCommand> {
  return fc.record({ kind: fc.constant('append' as const), p: fc.nat(partitions - 1), records: fc.integer({ min: 1, max: 3 }) });
}

/** A read from anywhere in one of `partitions` partitions. */
export function readCommand(partitions: number): fc.Arbitrary<ReadCommand> {
  return fc.record({ kind: fc.constant('read' as const), p: fc.nat(partitions - 1), at: fc.double({ min: 0, max: 1, noNaN: true }) });
}

/** Retention up to at most `atMax` (0 to 1) of the way to a partition's high watermark. */
export function retainCommand(partitions: number, atMax: number): fc.Arbitrary<RetainCommand> {
  return fc.record({ kind: fc.constant('retain' as const), p: fc.nat(partitions - 1), at: fc.double({ min: 0, max: atMax, noNaN: true }) });
}

export function reopenCommand(): fc.Arbitrary<ReopenCommand> {
  return fc.record({ kind: fc.constant('reopen' as const) });
}

/** The records of a plan's bytes at offsets ≥ from, checked against the model. */
export async function check(plan: FetchPlan, model: readonly (string | undefined)[], from: number): Promise<number> {
  const bytes = await plan.toBuffer();
  let seen = 0;
  for (const batch of splitBatches(bytes)) {
    expect(batch.isValid()).toBe(true);
    for (const record of batch.toRecords()) {
      if (record.offset < from) continue;
      expect(record.value?.toString('hex')).toBe(model[record.offset]);
      seen++;
    }
  }
  return seen;
}

export interface ModelRead {
  readonly plan: FetchPlan;
  readonly p: number;
  readonly from: number;
}

export class ModelCheck {
  readonly models: string[][];
  private current: LogManager;
  private tag = 0;

  private constructor(
    private readonly io: SimIo,
    private readonly open: (io: SimIo) => Promise<LogManager>,
    manager: LogManager,
    partitions: number,
  ) {
    this.models = Array.from({ length: partitions }, () => []);
    this.current = manager;
  }

  /** A fresh SimIo, the manager `open` makes on it, and every partition's log created. */
  static async start(open: (io: SimIo) => Promise<LogManager>, partitions: number): Promise<ModelCheck> {
    const io = await newIo();
    const run = new ModelCheck(io, open, await open(io), partitions);
    for (let p = 0; p < partitions; p++) await run.log(p);
    return run;
  }

  /** The manager now open (a reopen replaces it). */
  get manager(): LogManager {
    return this.current;
  }

  async log(p: number): Promise<Log> {
    return this.current.getLog('t', p) ?? this.current.getOrCreateLog('t', p);
  }

  /** Appends a batch of `records` 64-byte values to partition p as leader, records it in the model and moves the high watermark to the end. */
  async append(p: number, records: number): Promise<void> {
    const target = await this.log(p);
    const batch = producerBatch(records, { valueBytes: 64, tag: ++this.tag });
    // Before the append: the log patches the base offset into the buffer.
    const values = (splitBatches(batch)[0]?.toRecords() ?? []).map((record) => record.value?.toString('hex') ?? '');
    const result = await target.appendAsLeader(batch, { leaderEpoch: 0 });
    values.forEach((value, i) => (this.models[p]![result.firstOffset + i] = value));
    target.updateHighWatermark(target.logEndOffset);
  }

  /** A read of up to 700 bytes from the offset `at` (0 to 1) of the way from p's start to its end; undefined when p is empty. */
  async read(p: number, at: number): Promise<ModelRead | undefined> {
    const target = await this.log(p);
    const span = target.logEndOffset - target.logStartOffset;
    if (span === 0) return undefined;
    const from = target.logStartOffset + Math.min(span - 1, Math.floor(at * span));
    return { plan: await target.read(from, 700), p, from };
  }

  /** Checks a read against p's model (it must hold a record at or above `from`), then releases it. */
  async checkAndRelease(read: ModelRead): Promise<void> {
    expect(await check(read.plan, this.models[read.p]!, read.from)).toBeGreaterThan(0);
    await read.plan.release();
  }

  /** deleteRecords up to `at` (0 to 1) of the way to p's high watermark, then retention deletes the segments below it. */
  async retain(p: number, at: number): Promise<void> {
    const target = await this.log(p);
    const span = target.highWatermark - target.logStartOffset;
    await target.deleteRecords(target.logStartOffset + Math.floor(at * span));
    await target.deleteOldSegments();
    // Lets the delete timers (fileDeleteDelayMs 0) fire and unlink the `.deleted` files.
    await new Promise((resolve) => setTimeout(resolve, 1));
    await new Promise((resolve) => setImmediate(resolve));
  }

  /** A clean close and open of the manager on the same SimIo. */
  async reopen(): Promise<void> {
    await this.current.close();
    this.current = await this.open(this.io);
  }

  /** Reads all of p, start to end, in 4096-byte plans; each must hold records and match the model. */
  async checkAll(p: number): Promise<void> {
    const target = await this.log(p);
    for (let offset = target.logStartOffset; offset < target.logEndOffset;) {
      const plan = await target.read(offset, 4096);
      await this.checkAndRelease({ plan, p, from: offset });
      offset = plan.nextOffset;
    }
  }

  /** Closes the manager, ignoring a failure (for `finally`: the test's own failure is the one to report). */
  async close(): Promise<void> {
    await this.current.close().catch(() => undefined);
  }
}
