// A fast-check model run of the Log API with crash and fault commands
// (reliability.md §3.7). The model is an array of batch base offsets plus
// `durable` (every offset below it acknowledged durable) and `end`; the real
// system is a Log on SimIo with the expected batches (expected-log.ts).
//
// Commands: Append(n) (n appends in flight), Durable (wait for the end),
// Flush, Roll, Read(from) (the first batch read equals the expected bytes),
// Retention (deleteRecords to the HW, deleteOldSegments), CloseReopen,
// Crash(mode, seed) (the machine halts; recovered, reopened with the
// recovery point; the crash checker runs; the real end m must lie in
// [durable, end] — the model ADOPTS m), Fault(kind) (the next matching I/O
// fails: the next mutation must fail typed and the log go offline; then a
// process-crash reopen, as an operator restart).

import fc from 'fast-check';
import type { SimIo } from '@seglog/io';
import type { Log } from '@seglog/log';
import { splitBatches } from '@seglog/records';
import { Ledger, openLog } from './crash-workload.js';
import { expectedBatchAt, producerBatchAt, recordCountAt } from './expected-log.js';
import { CheckFailure, checkRecoveredLog } from './log-checker.js';
import { codeOf, isTyped, newMachine } from './reliability-fixture.js';

export interface Real {
  io: SimIo;
  log: Log;
  readonly ledger: Ledger;
  crashes: number;
  faults: number;
}

export interface Model {
  durable: number;
  end: number;
  start: number;
}

type Cmd = fc.AsyncCommand<Model, Real>;

async function reopen(real: Real, io: SimIo, model: Model, processCrash: boolean): Promise<void> {
  real.io = io;
  const recoveryPoint = real.ledger.claimedDurable;
  real.log = await openLog(io, { recoveryPoint, logStartOffset: real.ledger.checkpointLogStart, hadCleanShutdown: false });
  await checkRecoveredLog(io, real.log, real.ledger.expectation({ checkpoints: true, processCrash }));
  const m = real.log.logEndOffset;
  if (m < model.durable || m > model.end) throw new CheckFailure('model', `recovered end ${m} outside [durable ${model.durable}, end ${model.end}]`);
  // Adopt the recovered length: offsets at and above m may be reused by later appends.
  model.end = m;
  real.ledger.next = m;
  real.ledger.written = Math.min(real.ledger.written, m);
  model.start = real.log.logStartOffset;
}

class Append implements Cmd {
  constructor(readonly n: number) {}
  check = (): boolean => true;
  async run(model: Model, real: Real): Promise<void> {
    const appends: Promise<unknown>[] = [];
    for (let i = 0; i < this.n; i++) {
      const base = real.ledger.next;
      real.ledger.epochs.set(base, 0);
      real.ledger.next = base + recordCountAt(base);
      appends.push(real.log.appendAsLeader(producerBatchAt(base), { leaderEpoch: 0 }).then((r) => {
        if (r.firstOffset !== base) throw new CheckFailure('model', `append expected at ${base} got ${r.firstOffset}`);
      }));
    }
    await Promise.all(appends);
    model.end = real.ledger.next;
    real.ledger.observe(real.log);
  }
  toString = (): string => `Append(${this.n})`;
}

class Durable implements Cmd {
  check = (m: Readonly<Model>): boolean => m.end > m.start;
  async run(model: Model, real: Real): Promise<void> {
    await real.log.durable(model.end - 1);
    real.ledger.ack(model.end);
    model.durable = model.end;
    real.ledger.observe(real.log);
  }
  toString = (): string => 'Durable';
}

class Roll implements Cmd {
  check = (): boolean => true;
  async run(_model: Model, real: Real): Promise<void> {
    await real.log.forceRoll();
    real.ledger.observe(real.log);
  }
  toString = (): string => 'Roll';
}

class Read implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>): boolean => m.end > m.start;
  async run(model: Model, real: Real): Promise<void> {
    await real.log.written(model.end - 1);
    const offset = model.start + (this.pick % (model.end - model.start));
    const plan = await real.log.read(offset, 1);
    try {
      const batch = splitBatches(await plan.toBuffer(), { mode: 'memory' })[0];
      if (batch === undefined) throw new CheckFailure('model', `read(${offset}) returned nothing below the end ${model.end}`);
      const expected = expectedBatchAt(batch.baseOffset, real.ledger.epochs.get(batch.baseOffset) ?? -1);
      if (!batch.bytes().equals(expected) || offset < batch.baseOffset || offset > batch.lastOffset) {
        throw new CheckFailure('model', `read(${offset}) returned the batch at ${batch.baseOffset}, not the appended one holding ${offset}`);
      }
    } finally {
      await plan.release();
    }
  }
  toString = (): string => `Read(${this.pick})`;
}

class Retention implements Cmd {
  check = (): boolean => true;
  async run(model: Model, real: Real): Promise<void> {
    const hw = real.log.updateHighWatermark(real.log.durableOffset);
    real.ledger.logStartCeiling = Math.max(real.ledger.logStartCeiling, hw);
    const start = await real.log.deleteRecords(hw);
    real.ledger.checkpointLogStart = Math.max(real.ledger.checkpointLogStart, start);
    await real.log.deleteOldSegments(Number.MAX_SAFE_INTEGER);
    real.ledger.retainedFrom = Math.max(real.ledger.retainedFrom, real.log.segmentBaseOffsets()[0]!);
    model.start = real.log.logStartOffset;
    real.ledger.observe(real.log);
  }
  toString = (): string => 'Retention';
}

class Crash implements Cmd {
  constructor(readonly mode: 'process' | 'power-clean' | 'power-chaotic', readonly seed: number) {}
  check = (): boolean => true;
  async run(model: Model, real: Real): Promise<void> {
    real.ledger.observe(real.log);
    real.io.halt();
    await real.log.close().catch(() => undefined);
    real.crashes++;
    await reopen(real, real.io.recover(this.mode, { seed: this.seed }), model, this.mode === 'process');
    if (this.mode !== 'process') model.durable = Math.min(model.durable, model.end);
  }
  toString = (): string => `Crash(${this.mode}, ${this.seed})`;
}

class Fault implements Cmd {
  constructor(readonly kind: 'writeEio' | 'syncEio') {}
  check = (m: Readonly<Model>): boolean => m.end >= m.start;
  async run(model: Model, real: Real): Promise<void> {
    real.io.setFaults({ [this.kind]: { nth: 1, path: /\.log$/ } });
    const base = real.ledger.next;
    real.ledger.epochs.set(base, 0);
    real.ledger.next = base + recordCountAt(base);
    const outcome = await real.log.appendAsLeader(producerBatchAt(base), { leaderEpoch: 0 })
      .then(() => real.log.durable(base))
      .then(() => null, (e: unknown) => e);
    model.end = real.ledger.next;
    const injected = real.io.injected[this.kind];
    if (injected > 0) {
      real.faults++;
      if (outcome === null) throw new CheckFailure('error-iff-fault', `${this.kind} injected, yet append + durable resolved`);
      if (!isTyped(outcome)) throw new CheckFailure('typed', `untyped: ${String(outcome)}`);
      if (real.log.state !== 'offline') throw new CheckFailure('fail-stop', `log ${real.log.state} after ${codeOf(outcome)}`);
    } else if (outcome !== null) {
      throw new CheckFailure('error-iff-fault', `no fault injected, yet ${codeOf(outcome)}`);
    } else {
      real.ledger.ack(base + 1);
      model.durable = Math.max(model.durable, real.log.durableOffset);
    }
    real.io.setFaults({});
    real.ledger.observe(real.log);
    // Operator restart: the process dies, a fresh view reopens.
    real.io.halt();
    await real.log.close().catch(() => undefined);
    await reopen(real, real.io.recover('process'), model, true);
  }
  toString = (): string => `Fault(${this.kind})`;
}

export const commandsArb = fc.commands([
  fc.integer({ min: 1, max: 4 }).map((n) => new Append(n)),
  fc.constant(new Durable()),
  fc.constant(new Roll()),
  fc.nat().map((p) => new Read(p)),
  fc.constant(new Retention()),
  fc.tuple(fc.constantFrom('process', 'power-clean', 'power-chaotic' as const), fc.nat()).map(([m, s]) => new Crash(m, s)),
  fc.constantFrom('writeEio', 'syncEio' as const).map((k) => new Fault(k)),
], { maxCommands: 40 });

export interface ModelStats {
  runs: number;
  crashes: number;
  faults: number;
  failure: string | null;
}

export async function runModel(options: { seed: number; runs: number; path?: string }): Promise<ModelStats> {
  const stats: ModelStats = { runs: 0, crashes: 0, faults: 0, failure: null };
  const property = fc.asyncProperty(commandsArb, async (commands) => {
    const io = await newMachine();
    const ledger = new Ledger();
    const log = await openLog(io, { recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: false });
    const real: Real = { io, log, ledger, crashes: 0, faults: 0 };
    try {
      await fc.asyncModelRun(() => ({ model: { durable: 0, end: 0, start: 0 }, real }), commands);
    } finally {
      stats.runs++;
      stats.crashes += real.crashes;
      stats.faults += real.faults;
      await real.log.close().catch(() => undefined);
    }
  });
  const details = await fc.check(property, { seed: options.seed, numRuns: options.runs, ...(options.path === undefined ? {} : { path: options.path }) });
  if (details.failed) stats.failure = `${String(details.errorInstance).split('\n')[0]}\n  counterexample: ${fc.stringify(details.counterexample)}\n  replay: SEGLOG_MODEL_SEED=${details.seed} SEGLOG_MODEL_PATH=${details.counterexamplePath} npx vitest run test/reliability-model`;
  return stats;
}
