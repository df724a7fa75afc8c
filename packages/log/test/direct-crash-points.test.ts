// Crash-point enumeration of a direct-mode Log on SimIo (reliability.md §3.5):
// O_DIRECT writer with tail-page rewrites, zero-filled reservation steps
// (preallocate), rolls, durable waits, an epoch change, a clean close and a
// reopen that continues a partial page. The workload runs once to count its
// crash points K; then for every k in 1..K it halts at k and the machine is
// recovered as after kill -9, a clean power loss, an ordered power loss and a
// chaotic one. Each recovered disk is opened with the highest durable offset
// the log reported as its recovery point, and must hold:
// - every acknowledged-durable record (every written one after kill -9),
// - a gap-free prefix of the appended batches, byte for byte (reservation
//   zeros and page padding are never data), read through the indexes,
// - a usable log: an append at the recovered end, durable, survives a second
//   clean power loss.
// (test/crash-points.test.ts runs the buffered workload; this is its direct-
// mode counterpart until that test is parameterized.)
// Replay one case: SEGLOG_DIRECT_CRASH_ONLY=<k>:<mode>. The SimIo is wrapped by
// copying() (see there: SimIo's pending writes alias the caller's buffer).
import { SimIo } from '@seglog/io';
import type { CrashMode, IoFile } from '@seglog/io';
import { describe, expect, it } from 'vitest';
import { Log } from '../src/log/log.js';
import { config, DIR, producerBatch } from './log-helpers.js';

const cfg = config({ writeMode: 'direct', preallocate: true, segmentBytes: 6 * 1024, indexIntervalBytes: 512 });
const MODES: readonly CrashMode[] = ['process', 'power-clean', 'power-ordered', 'power-chaotic'];

interface Ledger {
  /** Batches appended (accepted), in offset order, with their patched bytes. */
  readonly batches: Buffer[];
  durable: number;
  written: number;
}

/**
 * SimIo keeps a pending write's bytes with `bytes.slice(0, n)` (rawWrite in
 * packages/io/src/sim-io.ts), which for a Buffer is a view, not a copy: a
 * writer that reuses its memory after the write completed (the direct
 * writer's staging chunks; VERIFY poisons released chunks with 0xA5) changes
 * what a later fdatasync makes durable. Until SimIo copies, this test hands
 * SimIo a copy of every written buffer (unknownDirectBuffers: 'allow' lets
 * the unaligned copy through; alignment of positions and lengths is still
 * checked).
 */
function copying(sim: SimIo): SimIo {
  return new Proxy(sim, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (prop === 'open') {
        return async (path: string, options?: object): Promise<IoFile> => {
          const file = await target.open(path, options);
          return new Proxy(file, {
            get(f, fp) {
              const fv = Reflect.get(f, fp, f) as unknown;
              if (fp === 'pwrite') return (buffer: Uint8Array, position: number) => file.pwrite(Uint8Array.prototype.slice.call(buffer), position);
              if (fp === 'pwritev') return (buffers: readonly Uint8Array[], position: number) => file.pwritev(buffers.map((b) => Uint8Array.prototype.slice.call(b)), position);
              return typeof fv === 'function' ? (fv as (...a: unknown[]) => unknown).bind(f) : fv;
            },
          });
        };
      }
      if (prop === 'recover') return (mode: CrashMode, options?: object) => copying(target.recover(mode, options));
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

function open(io: SimIo, recoveryPoint: number, hadCleanShutdown: boolean): Promise<Log> {
  return Log.open(io, DIR, cfg, { topic: 't', partition: 0, recoveryPoint, logStartOffset: 0, hadCleanShutdown, reservationStepBytes: 4096 });
}

async function append(log: Log, ledger: Ledger, tag: number, epoch: number): Promise<number> {
  const buffer = producerBatch(1 + (tag % 3), { valueBytes: 40 + ((tag * 37) % 300), tag });
  const result = await log.appendAsLeader(buffer, { leaderEpoch: epoch });
  ledger.batches.push(Buffer.from(buffer));
  return result.lastOffset;
}

async function workload(io: SimIo, ledger: Ledger): Promise<void> {
  await io.mkdir('/data');
  await io.fsyncDir('/');
  let log = await open(io, 0, true);
  const track = (offset: number): void => {
    void log.written(offset).then(() => { ledger.written = Math.max(ledger.written, offset + 1); }, () => undefined);
  };
  for (let i = 0; i < 40; i++) {
    const last = await append(log, ledger, i, i < 25 ? 0 : 1);
    track(last);
    if (i % 4 === 3) {
      await log.durable(last);
      ledger.durable = Math.max(ledger.durable, last + 1);
    }
  }
  await log.close();
  ledger.durable = ledger.batches.length === 0 ? 0 : Math.max(ledger.durable, log.logEndOffset);
  log = await open(io, log.logEndOffset, true);
  for (let i = 40; i < 52; i++) {
    const last = await append(log, ledger, i, 1);
    track(last);
    if (i % 5 === 4) {
      await log.durable(last);
      ledger.durable = Math.max(ledger.durable, last + 1);
    }
  }
  await log.flush();
  ledger.durable = log.logEndOffset;
  await log.close();
}

async function readBack(log: Log): Promise<Buffer> {
  const parts: Buffer[] = [];
  let offset = log.logStartOffset;
  while (offset < log.logEndOffset) {
    const plan = await log.read(offset, 4096);
    const bytes = await plan.toBuffer();
    await plan.release();
    if (bytes.length === 0) throw new Error(`empty read at ${offset} below ${log.logEndOffset}`);
    parts.push(bytes);
    offset = plan.nextOffset;
  }
  return Buffer.concat(parts);
}

/** The checks on one recovered disk; returns a failure description or null. */
async function check(crashed: SimIo, ledger: Ledger, mode: CrashMode): Promise<string | null> {
  // The data directory's parent is made durable by its owner (LogManager); a crash before that is not this test's subject.
  await crashed.fsyncDir('/');
  const log = await open(crashed, ledger.durable, false);
  const mustHave = mode === 'process' ? Math.max(ledger.durable, ledger.written) : ledger.durable;
  if (log.logEndOffset < mustHave) return `log end ${log.logEndOffset} below the acknowledged ${mustHave}`;
  let records = 0;
  let count = 0;
  while (records < log.logEndOffset && count < ledger.batches.length) records += producerRecordCount(ledger.batches[count++]!);
  if (records !== log.logEndOffset) return `log end ${log.logEndOffset} is not a batch boundary of the appends`;
  const expected = Buffer.concat(ledger.batches.slice(0, count));
  const actual = await readBack(log);
  if (!actual.equals(expected)) return `read-back differs from the first ${count} appended batches`;
  // A second life: append at the recovered end, durable, then a clean power loss.
  const end = log.logEndOffset;
  const last = (await log.appendAsLeader(producerBatch(2, { valueBytes: 77, tag: 999 }), { leaderEpoch: 2 })).lastOffset;
  await log.durable(last);
  const again = copying(crashed.recover('power-clean'));
  let reopened: Log;
  try {
    reopened = await open(again, last + 1, false);
  } catch (error) {
    return `second life: reopen threw ${(error as { code?: string }).code ?? String(error)} ${(error as Error).message} ${JSON.stringify((error as { context?: unknown }).context)}`;
  }
  if (reopened.logEndOffset !== end + 2) return `second life lost its durable append (end ${reopened.logEndOffset}, want ${end + 2})`;
  await reopened.close();
  return null;
}

function producerRecordCount(batch: Buffer): number {
  return batch.readInt32BE(23) + 1;
}

describe('direct-mode crash points', () => {
  it('every crash point under kill -9 and power loss keeps acknowledged records and recovers a clean prefix', async () => {
    const full = copying(new SimIo({ seed: 1, unknownDirectBuffers: 'allow' }));
    const fullLedger: Ledger = { batches: [], durable: 0, written: 0 };
    await workload(full, fullLedger);
    const points = full.crashPoints;
    expect(points).toBeGreaterThan(100);
    const only = process.env['SEGLOG_DIRECT_CRASH_ONLY'];
    const all = process.env['SEGLOG_DIRECT_CRASH_ALL'];
    const failures: string[] = [];
    let checked = 0;
    for (let k = 1; k <= points; k++) {
      if (only !== undefined && Number(only.split(':')[0]) !== k) continue;
      const io = copying(new SimIo({ seed: 1, crashAt: k, unknownDirectBuffers: 'allow' }));
      const ledger: Ledger = { batches: [], durable: 0, written: 0 };
      await workload(io, ledger).catch((error: unknown) => {
        if ((error as { code?: string }).code !== 'SEGLOG_ERR_IO_CRASHED' && (error as { code?: string }).code !== 'SEGLOG_ERR_LOG_OFFLINE') throw error;
      });
      expect(io.halted).toBe(true);
      for (const mode of MODES) {
        // CI: kill -9 and clean power loss at every point, ordered and chaotic power loss at every 4th (SEGLOG_DIRECT_CRASH_ALL=1: all).
        if (all === undefined && only === undefined && (mode === 'power-ordered' || mode === 'power-chaotic') && k % 4 !== (mode === 'power-ordered' ? 1 : 3)) continue;
        if (only !== undefined && only.split(':')[1] !== undefined && only.split(':')[1] !== mode) continue;
        const crashed = io.recover(mode, { seed: k });
        if (!(await crashed.exists('/data'))) continue;
        let failure: string | null;
        try {
          failure = await check(crashed, ledger, mode);
        } catch (error) {
          failure = `open/read threw ${(error as { code?: string }).code ?? String(error)} ${(error as Error).message} ${String((error as { cause?: unknown }).cause)} ${JSON.stringify((error as { context?: unknown }).context)}`;
        }
        checked++;
        if (failure !== null) failures.push(`SEGLOG_DIRECT_CRASH_ONLY=${k}:${mode} — ${failure}`);
      }
    }
    if (failures.length > 0) console.log(failures.slice(0, 20).join('\n'));
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(points);
  });
});
