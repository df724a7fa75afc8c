// Differential: the engine's loader and `seglog recover --dry-run` on the
// same bytes (issue 23 item 0). For every damage case of the corruption
// tests (packages/log/test/recovery-refusal.test.ts, log-recovery.test.ts,
// log-manager.test.ts, this package's verify-recover.test.ts, and the
// issue's 0a/0b), on a data directory written by the engine (NodeIo, real
// temp dirs):
// - LogManager.open on a copy with the clean-shutdown marker removed (the
//   facts `recover` itself recovers under) and `recover --dry-run --json` on
//   the data directory and on the partition directory reach the same
//   verdict: refused (SEGLOG_ERR_LOG_CORRUPTION) or accepted with the same
//   log end offset and the same bytes cut;
// - LogManager.open on a copy as it is (the broker's start, marker and all)
//   is never more destructive than the dry run: it refuses, or cuts at most
//   what the dry run cuts (a clean start scans less, so it may accept damage
//   it never read; reads report that, see the fetch tests).
// Each case is one line of CASES; the verdicts are printed as a table.

import { afterAll, describe, expect, it } from 'vitest';
import { cpSync, existsSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { NodeIo } from '@seglog/io';
import { LogConfig, LogManager } from '@seglog/log';
import { appendBytes, logFiles, removeDir, runSeglog, tempDir, writeDataDir } from './helpers.js';
import type { WrittenDataDir } from './helpers.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});

function batchPosition(file: string, n: number): number {
  const bytes = readFileSync(file);
  let position = 0;
  for (let i = 0; i < n; i++) position += bytes.readInt32BE(position + 8) + 12;
  return position;
}

function flip(file: string, position: number): void {
  const bytes = readFileSync(file);
  bytes[position] = (bytes[position] as number) ^ 0x5a;
  writeFileSync(file, bytes);
}

const sealed = (w: WrittenDataDir): string => logFiles(w.partitionDir)[0] as string;
const active = (w: WrittenDataDir): string => logFiles(w.partitionDir).at(-1) as string;
const unclean = (w: WrittenDataDir): void => rmSync(path.join(w.dataDir, '.kafka_cleanshutdown'), { force: true });

/** Damage cases: name → what is done to a freshly written data directory (60 batches of 2 records, 4 KiB segments). */
const CASES: ReadonlyArray<readonly [string, (w: WrittenDataDir) => void]> = [
  ['no damage', () => undefined],
  ['torn tail: garbage after the active segment', (w) => appendBytes(active(w), Buffer.from('this is not a record batch, it is garbage!'))],
  ['torn tail: a partial batch after the active segment', (w) => appendBytes(active(w), readFileSync(active(w)).subarray(0, 90))],
  ['torn tail, unclean stop', (w) => { unclean(w); appendBytes(active(w), Buffer.alloc(30, 0x41)); }],
  ['CRC failure in the active segment (below the recovery point)', (w) => flip(active(w), batchPosition(active(w), 3) + 70)],
  ['CRC failure in the active segment, unclean stop', (w) => { unclean(w); flip(active(w), batchPosition(active(w), 3) + 70); }],
  ['CRC failure in a sealed segment', (w) => flip(sealed(w), batchPosition(sealed(w), 5) + 70)],
  ['CRC failure in a sealed segment, unclean stop', (w) => { unclean(w); flip(sealed(w), batchPosition(sealed(w), 5) + 70); }],
  ['missing .index of a sealed segment', (w) => rmSync(sealed(w).replace(/\.log$/, '.index'))],
  ['.index entry off by one', (w) => {
    const index = sealed(w).replace(/\.log$/, '.index');
    const bytes = readFileSync(index);
    bytes.writeInt32BE(bytes.readInt32BE(12) + 1, 12);
    writeFileSync(index, bytes);
  }],
  ['0a: a sealed .log cut 1500 bytes short (its .index fails its check)', (w) => truncateSync(sealed(w), statSync(sealed(w)).size - 1500)],
  ['0a: a sealed .log cut 100 bytes short', (w) => truncateSync(sealed(w), statSync(sealed(w)).size - 100)],
  ['0a: a sealed .log cut short, unclean stop', (w) => { unclean(w); truncateSync(sealed(w), statSync(sealed(w)).size - 1500); }],
  ['0b: garbage recovery-point checkpoint, unclean stop, CRC failure in a sealed segment', (w) => {
    unclean(w);
    writeFileSync(path.join(w.dataDir, 'recovery-point-offset-checkpoint'), 'garbage\n');
    flip(sealed(w), batchPosition(sealed(w), 3) + 70);
  }],
  ['0b: garbage recovery-point checkpoint, unclean stop, torn tail', (w) => {
    unclean(w);
    writeFileSync(path.join(w.dataDir, 'recovery-point-offset-checkpoint'), 'garbage\n');
    appendBytes(active(w), Buffer.alloc(30, 0x41));
  }],
  ['0b: garbage recovery-point checkpoint, unclean stop, no damage', (w) => {
    unclean(w);
    writeFileSync(path.join(w.dataDir, 'recovery-point-offset-checkpoint'), 'garbage\n');
  }],
  ['recovery point beyond the log end, unclean stop', (w) => {
    unclean(w);
    writeFileSync(path.join(w.dataDir, 'recovery-point-offset-checkpoint'), '0\n1\norders 0 999\n');
  }],
  ['the last segment deleted, unclean stop (the log ends below the recovery point)', (w) => {
    unclean(w);
    for (const suffix of ['.log', '.index', '.timeindex']) rmSync(active(w).replace(/\.log$/, suffix), { force: true });
  }],
];

interface Verdict {
  /** 'refused <code>' or 'log end offset N, cut B bytes'. */
  readonly text: string;
  readonly refused: boolean;
  readonly cutBytes: number;
}

function logBytes(partitionDir: string): Map<string, number> {
  const map = new Map<string, number>();
  if (!existsSync(partitionDir)) return map;
  for (const name of readdirSync(partitionDir).filter((n) => n.endsWith('.log'))) map.set(name, statSync(path.join(partitionDir, name)).size);
  return map;
}

/** Bytes removed from .log files (cut tails and deleted segments) between two listings. */
function cut(before: Map<string, number>, after: Map<string, number>): number {
  let bytes = 0;
  for (const [name, size] of before) bytes += Math.max(0, size - (after.get(name) ?? 0));
  return bytes;
}

async function loaderVerdict(w: WrittenDataDir, asIs: boolean): Promise<Verdict> {
  const copy = tempDir('verdict-loader');
  dirs.push(copy);
  cpSync(w.dataDir, copy, { recursive: true });
  if (!asIs) rmSync(path.join(copy, '.kafka_cleanshutdown'), { force: true });
  const partitionDir = path.join(copy, 'orders-0');
  const before = logBytes(partitionDir);
  try {
    const manager = await LogManager.open(new NodeIo(), copy, {
      defaultConfig: new LogConfig().with({ segmentBytes: 4096, indexIntervalBytes: 300 }), minFreeBytes: 0, checkpointIntervalMs: 0,
    });
    const end = manager.getLog('orders', 0)?.logEndOffset;
    await manager.close();
    const bytes = cut(before, logBytes(partitionDir));
    return { text: `log end offset ${String(end)}, cut ${bytes} bytes`, refused: false, cutBytes: bytes };
  } catch (error) {
    return { text: `refused ${String((error as { code?: unknown }).code)}`, refused: true, cutBytes: 0 };
  }
}

async function dryRunVerdict(target: string): Promise<Verdict> {
  const result = await runSeglog(['recover', '--dry-run', '--json', target]);
  const code = /SEGLOG_ERR_[A-Z_]+/.exec(result.stderr)?.[0];
  if (code !== undefined) return { text: `refused ${code}`, refused: true, cutBytes: 0 };
  const lines = result.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  const partition = lines.find((l) => l['type'] === 'partition');
  const summary = lines.find((l) => l['type'] === 'summary');
  if (partition === undefined || summary === undefined) throw new Error(`unexpected recover output (exit ${result.code}): ${result.stdout}${result.stderr}`);
  const bytes = Number(summary['cutBytes']);
  return { text: `log end offset ${String(partition['logEndOffset'])}, cut ${bytes} bytes`, refused: false, cutBytes: bytes };
}

describe('the loader and recover --dry-run reach the same verdict on every damage case', () => {
  const table: string[] = [];
  afterAll(() => {
    console.log(`verdicts (loader unclean = recover --dry-run data dir = partition dir | broker start as is):\n${table.join('\n')}`);
  });

  for (const [name, damage] of CASES) {
    it(name, async () => {
      const dataDir = tempDir('verdict');
      dirs.push(dataDir);
      const w = await writeDataDir(dataDir, 60);
      damage(w);
      const loader = await loaderVerdict(w, false);
      const dryData = await dryRunVerdict(w.dataDir);
      const dryPartition = await dryRunVerdict(w.partitionDir);
      const broker = await loaderVerdict(w, true);
      table.push(`  ${name}: ${loader.text} | ${broker.text}`);
      expect(dryData.text, 'recover --dry-run <data dir>').toBe(loader.text);
      expect(dryPartition.text, 'recover --dry-run <partition dir>').toBe(loader.text);
      // The broker's start never cuts more than recover would; when recover refuses, it cuts nothing.
      if (loader.refused) expect(broker.cutBytes, broker.text).toBe(0);
      else expect(broker.cutBytes, broker.text).toBeLessThanOrEqual(loader.cutBytes);
    });
  }
});
