// Small shared pieces of the reliability suite (test/reliability*.test.ts,
// test/faults*.test.ts, test/mutants*.test.ts, fuzz/targets/segment-file.ts,
// fuzz/targets/index-file.ts): a machine with a closed log of the expected
// batches (expected-log.ts) on SimIo, byte mutation helpers and the error
// classification every criterion uses.

import { isSeglogError } from '@seglog/common';
import { SimIo } from '@seglog/io';
import type { Log } from '@seglog/log';
import { DIR, Ledger, openLog } from './crash-workload.js';
import { producerBatchAt } from './expected-log.js';

/** A typed operating error (SeglogError with a SEGLOG_ERR_ code): the only kind of failure hostile input may cause. */
export function isTyped(error: unknown): boolean {
  return isSeglogError(error) && typeof error.code === 'string' && error.code.startsWith('SEGLOG_ERR_');
}

export function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : `${(error as Error | null)?.name ?? typeof error}: ${(error as Error | null)?.message ?? String(error)}`;
}

export async function newMachine(options: ConstructorParameters<typeof SimIo>[0] = {}): Promise<SimIo> {
  const io = new SimIo({ seed: 1, ...options });
  await io.mkdir('/data');
  await io.fsyncDir('/');
  return io;
}

/** Appends `count` expected batches at the log end (epoch 0) into the ledger; returns the last offset. */
export async function appendExpected(log: Log, count: number, ledger: Ledger, epoch = 0): Promise<number> {
  let last = log.logEndOffset - 1;
  for (let i = 0; i < count; i++) {
    const base = log.logEndOffset;
    ledger.epochs.set(base, epoch);
    ledger.next = Math.max(ledger.next, base);
    const result = await log.appendAsLeader(producerBatchAt(base), { leaderEpoch: epoch });
    last = result.lastOffset;
    ledger.next = last + 1;
  }
  return last;
}

/** A machine holding a cleanly closed log of `batches` expected batches (1 KiB segments, so several segments). */
export async function closedLog(batches: number): Promise<{ io: SimIo; ledger: Ledger; logEndOffset: number; bases: number[] }> {
  const io = await newMachine();
  const ledger = new Ledger();
  const log = await openLog(io, { recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: false });
  await appendExpected(log, batches, ledger);
  await log.close();
  ledger.ack(log.logEndOffset);
  return { io, ledger, logEndOffset: log.logEndOffset, bases: log.segmentBaseOffsets() };
}

export interface ByteEdit {
  readonly at: number;
  readonly value: number;
}

/** Rewrites a file on the machine (durably: as if the bytes had been on disk all along). */
export async function rewriteFile(io: SimIo, path: string, edit: (bytes: Buffer) => Buffer): Promise<void> {
  const bytes = edit(Buffer.from(await io.readFile(path)));
  const file = await io.open(path, { create: true });
  await file.truncate(0);
  if (bytes.length > 0) await file.pwrite(bytes, 0);
  await file.fdatasync();
  await file.close();
  await io.fsyncDir(DIR);
}

export function applyEdits(bytes: Buffer, edits: readonly ByteEdit[], options: { from?: number; skip?: (at: number) => boolean } = {}): Buffer {
  const from = options.from ?? 0;
  const span = bytes.length - from;
  if (span <= 0) return bytes;
  for (const e of edits) {
    const at = from + (e.at % span);
    if (options.skip?.(at) === true) continue;
    bytes[at] = e.value;
  }
  return bytes;
}
