// The child of test/kill9.test.ts: opens the Log in `dir` on NodeIo (real
// disk), recovering it (hadCleanShutdown false, the given recovery point),
// and appends the expected-log batches (expected-log.ts, KILL9_BATCHES) at
// the log end under `leaderEpoch`, forever, until the parent kills it with
// SIGKILL. Up to 16 appends are in flight; every batch is followed by a
// written() wait and every fourth by a durable() wait. It reports over IPC,
// only after the promise resolved:
//   { kind: 'ready', logEndOffset, logStartOffset }   after open
//   { kind: 'written', end }                          written(end - 1) resolved
//   { kind: 'durable', end }                          durable(end - 1) resolved
//   { kind: 'error', message }                        then exits 1
// Usage: node --conditions=source --import tsx kill9-child.ts <dir> <leaderEpoch> <recoveryPoint>

import { NodeIo } from '@seglog/io';
import { Log } from '@seglog/log';
import { KILL9_BATCHES, kill9Config } from './kill9-shared.js';
import { producerBatchAt, recordCountAt } from './expected-log.js';

const MAX_IN_FLIGHT = 16;

function send(message: Record<string, unknown>): void {
  process.send?.(message);
}

async function main(): Promise<void> {
  const [dir, epochArg, recoveryArg] = process.argv.slice(2);
  if (dir === undefined || epochArg === undefined || recoveryArg === undefined) throw new Error('usage: kill9-child <dir> <leaderEpoch> <recoveryPoint>');
  const leaderEpoch = Number(epochArg);
  const recoveryPoint = Number(recoveryArg);
  const io = new NodeIo();
  const log = await Log.open(io, dir, kill9Config(), { topic: 'kill9', partition: 0, recoveryPoint, logStartOffset: 0, hadCleanShutdown: false });
  send({ kind: 'ready', logEndOffset: log.logEndOffset, logStartOffset: log.logStartOffset });
  let next = log.logEndOffset;
  let inFlight = 0;
  let sequence = 0;
  let wake: (() => void) | null = null;
  const fail = (error: unknown): void => {
    send({ kind: 'error', message: (error as Error).stack ?? String(error) });
    process.exitCode = 1;
    setTimeout(() => process.exit(1), 50);
  };
  for (;;) {
    while (inFlight >= MAX_IN_FLIGHT) await new Promise<void>((resolve) => (wake = resolve));
    const base = next;
    const last = base + recordCountAt(base, KILL9_BATCHES) - 1;
    next = last + 1;
    inFlight++;
    const wantDurable = sequence++ % 4 === 3;
    log.appendAsLeader(producerBatchAt(base, KILL9_BATCHES), { leaderEpoch })
      .then((result) => {
        if (result.firstOffset !== base) throw new Error(`append at ${base} got offset ${result.firstOffset}`);
        return log.written(last);
      })
      .then(() => {
        send({ kind: 'written', end: last + 1 });
        if (!wantDurable) return undefined;
        return log.durable(last).then(() => send({ kind: 'durable', end: last + 1 }));
      })
      .then(() => {
        inFlight--;
        const resume = wake;
        wake = null;
        resume?.();
      }, fail);
    // Let I/O completions run between appends (the loop would otherwise only yield when full).
    if (sequence % 4 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

main().catch((error: unknown) => {
  send({ kind: 'error', message: (error as Error).stack ?? String(error) });
  process.exit(1);
});
