// `seglog verify`, `seglog recover` and `seglog stats` against data
// directories written by the engine and then damaged the ways disks and
// crashes damage them: a torn tail (garbage or a partial batch after close),
// a flipped payload byte in a batch in the middle, a missing .index.

import { afterEach, describe, expect, it } from 'vitest';
import { cpSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { NodeIo } from '@seglog/io';
import { LogConfig, LogManager } from '@seglog/log';
import { buildBatch } from '@seglog/records';
import { T0, appendBytes, logFiles, readTree, removeDir, runSeglog, tempDir, writeDataDir } from './helpers.js';
import type { WrittenDataDir } from './helpers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});

async function written(name: string, batches = 60): Promise<WrittenDataDir> {
  const dir = tempDir(name);
  dirs.push(dir);
  return writeDataDir(dir, batches);
}

/** Flips one byte inside the payload of the batch at `position`; returns that batch's base offset. */
function flipPayloadByte(file: string, position: number): number {
  const bytes = readFileSync(file);
  bytes[position + 70] = (bytes[position + 70] as number) ^ 0x5a;
  writeFileSync(file, bytes);
  return Number(bytes.readBigInt64BE(position));
}

/** Position of the n-th batch (0-based) of a .log file. */
function batchPosition(file: string, n: number): number {
  const bytes = readFileSync(file);
  let position = 0;
  for (let i = 0; i < n; i++) position += bytes.readInt32BE(position + 8) + 12;
  return position;
}

describe('a clean data directory', () => {
  it('verify exits 0, stats counts everything, recover --dry-run has nothing to cut', async () => {
    const w = await written('clean');
    const [verify, verifyPartition, stats, dry] = await Promise.all([
      runSeglog(['verify', w.dataDir]),
      runSeglog(['verify', w.partitionDir]),
      runSeglog(['stats', '--json', w.dataDir]),
      runSeglog(['recover', '--dry-run', '--config', 'index.interval.bytes=300', w.dataDir]),
    ]);
    expect(verify.stderr).toBe(''); // not a TTY: no progress bar
    expect(verify.code).toBe(0);
    expect(verify.stdout).toContain('verified 1 partitions, 2 segments, 60 batches: OK, no problems');
    expect(verifyPartition.code).toBe(0);
    expect(stats.code).toBe(0);
    const [partition, total] = stats.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const logBytes = logFiles(w.partitionDir).reduce((sum, f) => sum + readFileSync(f).length, 0);
    expect(partition).toMatchObject({
      type: 'partition', partition: 'orders-0', segments: 2, batches: 60, records: 120, logBytes,
      logStartOffset: 0, logEndOffset: 120, oldestTimestamp: 1_700_000_000_000, newestTimestamp: 1_700_000_000_059, damagedSegments: [],
    });
    expect(total).toMatchObject({ type: 'total', partitions: 1, segments: 2, batches: 60, records: 120, logBytes });
    // The sealed (first) segment's two indexes only: what loading every sealed index would take.
    const first = logFiles(w.partitionDir)[0] as string;
    const sealedIndexBytes = statSync(first.replace(/\.log$/, '.index')).size + statSync(first.replace(/\.log$/, '.timeindex')).size;
    expect(sealedIndexBytes).toBeGreaterThan(0);
    expect(partition?.['sealedIndexBytes']).toBe(sealedIndexBytes);
    expect(total?.['sealedIndexBytes']).toBe(sealedIndexBytes);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('orders-0 (log end offset 120): nothing to change');
    expect(dry.stdout).toContain('would cut 0 bytes (0 segments cut, 0 deleted), 0 index files to rebuild');
  });

  it('stats prints a text line per partition and a total', async () => {
    const w = await written('stats-text', 10);
    const r = await runSeglog(['stats', w.partitionDir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^orders-0: segments 1, log bytes \d+, index and other bytes \d+, batches 10, records 20, log start offset 0, log end offset 20, oldest timestamp 1700000000000 \(2023-11-14T22:13:20.000Z\), newest timestamp 1700000000009/m);
    expect(r.stdout).toMatch(/^total: partitions 1, segments 1, /m);
    expect(r.stdout).toMatch(/^resources when served: 3 descriptors for active segments \(3 per partition\) \+ the handle cache \(--max-open-segment-files\), sealed indexes 0\.0 MiB when all loaded/m);
  });
});

describe('seglog stats: open transactions', () => {
  it('counts a transaction without a marker, not the ended ones', async () => {
    const dataDir = tempDir('stats-txn');
    try {
      const manager = await LogManager.open(new NodeIo(), dataDir, { defaultConfig: new LogConfig(), minFreeBytes: 0, now: () => T0 });
      const log = await manager.getOrCreateLog('tx', 0);
      const txnBatch = (producerId: number, sequence: number): Buffer => buildBatch({
        records: [{ value: 'v', timestamp: T0 }], producerId, producerEpoch: 0, baseSequence: sequence, transactional: true,
      });
      await log.appendAsLeader(txnBatch(7, 0), { leaderEpoch: 0 }); // offset 0: producer 7, committed below
      await log.appendAsLeader(txnBatch(8, 0), { leaderEpoch: 0 }); // offset 1: producer 8, left open
      await log.appendMarker({ type: 'COMMIT', producerId: 7, producerEpoch: 0, coordinatorEpoch: 0, leaderEpoch: 0 });
      await log.appendAsLeader(txnBatch(9, 0), { leaderEpoch: 0 }); // offset 3: producer 9, aborted below
      await log.appendMarker({ type: 'ABORT', producerId: 9, producerEpoch: 0, coordinatorEpoch: 0, leaderEpoch: 0 });
      await log.flush();
      await manager.close();
      const [json, text] = await Promise.all([runSeglog(['stats', '--json', dataDir]), runSeglog(['stats', dataDir])]);
      expect(json.code).toBe(0);
      const [partition, total] = json.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(partition).toMatchObject({ partition: 'tx-0', batches: 5, openTransactions: [{ producerId: 8, firstOffset: 1 }] });
      expect(total).toMatchObject({ type: 'total', openTransactions: 1 });
      expect(text.stdout).toMatch(/^tx-0: .*, open transactions 1 \(producer 8 from offset 1\)$/m);
      expect(text.stdout).toMatch(/^total: .*, open transactions 1$/m);
    } finally {
      removeDir(dataDir);
    }
  });
});

describe('a torn tail (bytes appended to the active .log after close)', () => {
  for (const [label, tail] of [
    ['garbage', (_active: Buffer) => Buffer.from('this is not a record batch, it is garbage!', 'utf8')],
    ['a partial batch', (active: Buffer) => active.subarray(0, 90)],
  ] as const) {
    it(`${label}: verify exits 1 at the tail; recover --dry-run reports the cut and changes nothing; recover; verify exits 0`, async () => {
      const w = await written(`torn-${label.replace(/ /g, '-')}`);
      const active = logFiles(w.partitionDir).at(-1) as string;
      const cleanBytes = readFileSync(active);
      const garbage = tail(cleanBytes);
      appendBytes(active, garbage);

      const verify = await runSeglog(['verify', w.dataDir]);
      expect(verify.code).toBe(1);
      expect(verify.stdout).toContain(`problem: ${active} position ${cleanBytes.length} offset 120: torn tail at position ${cleanBytes.length}: ${garbage.length} bytes`);
      expect(verify.stdout).toContain('1 problems');

      const before = readTree(w.dataDir);
      const dry = await runSeglog(['recover', '--dry-run', w.dataDir]);
      expect(dry.code).toBe(0);
      expect(dry.stdout).toContain(`${path.basename(active)}: would cut ${garbage.length} bytes at position ${cleanBytes.length} (${cleanBytes.length + garbage.length} → ${cleanBytes.length} bytes)`);
      expect(dry.stdout).toContain(`would cut ${garbage.length} bytes (1 segments cut, 0 deleted)`);
      expect(readTree(w.dataDir)).toEqual(before); // byte-identical, including the .lock and the marker

      const recover = await runSeglog(['recover', w.dataDir]);
      expect(recover.code).toBe(0);
      expect(recover.stdout).toContain(`${path.basename(active)}: cut ${garbage.length} bytes at position ${cleanBytes.length}`);
      expect(readFileSync(active)).toEqual(cleanBytes);

      const again = await runSeglog(['verify', w.dataDir]);
      expect(again.stdout).toContain('OK, no problems');
      expect(again.code).toBe(0);
    });
  }

  it('recover of a partition directory cuts the tail too', async () => {
    const w = await written('torn-partition', 20);
    const active = logFiles(w.partitionDir).at(-1) as string;
    const size = readFileSync(active).length;
    appendBytes(active, Buffer.alloc(30, 0x41));
    const recover = await runSeglog(['recover', w.partitionDir]);
    expect(recover.code).toBe(0);
    expect(recover.stdout).toContain(`cut 30 bytes at position ${size}`);
    expect((await runSeglog(['verify', w.partitionDir])).code).toBe(0);
  });
});

describe('a corrupted batch in the middle', () => {
  it('verify names its position and offset; recover refuses (below the recovery point) with one typed line', async () => {
    const w = await written('corrupt');
    const active = logFiles(w.partitionDir).at(-1) as string;
    const position = batchPosition(active, 10);
    const offset = flipPayloadByte(active, position);

    const verify = await runSeglog(['verify', w.dataDir]);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toMatch(new RegExp(`problem: ${active} position ${position} offset ${offset}: CRC mismatch in batch ${offset}\\.\\.${offset + 1} \\(\\d+ bytes\\): stored [0-9a-f]{8}, computed [0-9a-f]{8}`));

    const before = readTree(w.dataDir);
    const refuse = await runSeglog(['recover', w.dataDir]);
    expect(refuse.code).toBe(1);
    const errLines = refuse.stderr.trimEnd().split('\n');
    expect(errLines).toHaveLength(1);
    expect(errLines[0]).toMatch(/^seglog: SEGLOG_ERR_LOG_CORRUPTION: .*below the recovery point$/);
    expect(refuse.stderr).not.toContain('    at ');

    const debug = await runSeglog(['recover', '--dry-run', '--debug', w.dataDir]);
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(/^seglog: SEGLOG_ERR_LOG_CORRUPTION: /);
    expect(debug.stderr).toContain('    at '); // --debug shows the stack

    const truncate = await runSeglog(['recover', '--dry-run', '--truncate-corrupt', w.dataDir]);
    expect(truncate.code).toBe(0);
    const activeBytes = readFileSync(active).length;
    expect(truncate.stdout).toContain(`would cut ${activeBytes - position} bytes at position ${position} (${activeBytes} → ${position} bytes)`);
    expect(truncate.stdout).toContain(`orders-0 (log end offset ${offset}):`);
    // The refused recovery and both dry runs left every byte as it was (the clean-shutdown marker too).
    expect(readTree(w.dataDir)).toEqual(before);
  });

  it('in a sealed segment: recover does not rescan it and says what remains (exit 1)', async () => {
    const w = await written('corrupt-sealed');
    const sealed = logFiles(w.partitionDir)[0] as string;
    const position = batchPosition(sealed, 5);
    const offset = flipPayloadByte(sealed, position);
    const dry = await runSeglog(['recover', '--dry-run', w.dataDir]);
    expect(dry.code).toBe(1);
    expect(dry.stdout).toContain(`remaining problem (after the recovery): orders-0/${path.basename(sealed)} position ${position} offset ${offset}: CRC mismatch`);
  });
});

describe('a missing .index', () => {
  it('verify reports it; recover rebuilds it; verify exits 0', async () => {
    const w = await written('missing-index');
    const index = (logFiles(w.partitionDir)[0] as string).replace(/\.log$/, '.index');
    const original = readFileSync(index);
    rmSync(index);
    const verify = await runSeglog(['verify', w.dataDir]);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain(`problem: ${index}: offset index missing`);
    const recover = await runSeglog(['recover', '--config', 'index.interval.bytes=300', w.dataDir]);
    expect(recover.code).toBe(0);
    expect(recover.stdout).toContain(`${path.basename(index)}: created (${original.length} bytes)`);
    expect(recover.stdout).toContain('1 index files rebuilt');
    expect(readFileSync(index)).toEqual(original); // same config, same entries as the engine wrote
    expect((await runSeglog(['verify', w.dataDir])).code).toBe(0);
  });

  it('verify catches an index entry that points at the wrong batch', async () => {
    const w = await written('bad-index');
    const index = (logFiles(w.partitionDir)[0] as string).replace(/\.log$/, '.index');
    const bytes = readFileSync(index);
    bytes.writeInt32BE(bytes.readInt32BE(12) + 1, 12); // entry 1: position off by one
    writeFileSync(index, bytes);
    const verify = await runSeglog(['verify', w.partitionDir]);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toMatch(/problem: .*00000000000000000000\.index position \d+ offset \d+: entry 1 points at position \d+, which is not the start of a batch/);
  });
});

describe('checkpoints and snapshots', () => {
  it('verify reports a recovery point beyond the log end and a corrupt snapshot', async () => {
    const w = await written('checkpoints', 10);
    writeFileSync(path.join(w.dataDir, 'recovery-point-offset-checkpoint'), '0\n1\norders 0 999\n');
    const snapshot = path.join(w.partitionDir, '00000000000000000020.snapshot');
    const bytes = readFileSync(snapshot);
    writeFileSync(snapshot, bytes.subarray(0, bytes.length - 1));
    writeFileSync(path.join(w.partitionDir, 'leader-epoch-checkpoint'), '0\n2\n3 0\n2 5\n');
    const verify = await runSeglog(['verify', '--json', w.dataDir]);
    expect(verify.code).toBe(1);
    const findings = verify.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(findings).toContainEqual(expect.objectContaining({ severity: 'problem', offset: 999, what: 'recovery point 999 of orders-0 is beyond its log end offset 20' }));
    expect(findings).toContainEqual(expect.objectContaining({ severity: 'problem', file: snapshot, what: expect.stringMatching(/^SEGLOG_ERR_SNAPSHOT_CORRUPT/) }));
    expect(findings).toContainEqual(expect.objectContaining({ severity: 'problem', what: 'epoch 2 at 5 does not increase over epoch 3 at 0' }));
    expect(findings.at(-1)).toMatchObject({ type: 'summary', problems: 3 });
  });
});

// Issue 23 items 0a/0b through the CLI: `seglog recover --dry-run` and the engine's loader (LogManager.open,
// as the broker starts) must take the same decision on the same bytes, and an unreadable checkpoint must never
// license a cut. Each failed on a70d00f (0a: the loader cut what recover refused; 0b: recover cut from 0).
describe('recover and the loader agree on damage (issue 23 item 0)', () => {
  /** What LogManager.open (the broker's start) does with a copy of `dataDir`: refused (its code) or the log end offset. */
  async function loaderVerdict(dataDir: string): Promise<string> {
    const copy = tempDir('loader-copy');
    dirs.push(copy);
    cpSync(dataDir, copy, { recursive: true });
    try {
      const manager = await LogManager.open(new NodeIo(), copy, {
        defaultConfig: new LogConfig().with({ segmentBytes: 4096, indexIntervalBytes: 300 }), minFreeBytes: 0, checkpointIntervalMs: 0,
      });
      const log = manager.getLog('orders', 0);
      const end = log?.logEndOffset;
      // A clean start reads no sealed segment (issue 24: lazy, as Kafka); the first read of one meets its check.
      const read = await log?.read(0, 1 << 20).then(async (plan) => { await plan.release(); return 'read'; }, (error: unknown) => `read refused: ${String((error as { code?: unknown }).code)}`);
      await manager.close();
      return `log end offset ${String(end)}, ${String(read)}`;
    } catch (error) {
      return String((error as { code?: unknown }).code);
    }
  }

  it('0a: a sealed .log cut short after a clean stop: recover --dry-run refuses, the engine refuses the first read of it, nothing changes', async () => {
    const w = await written('cut-sealed', 80);
    const sealed = logFiles(w.partitionDir)[0] as string;
    const size = readFileSync(sealed).length;
    writeFileSync(sealed, readFileSync(sealed).subarray(0, size - 1500)); // below its last .index entries
    const before = readTree(w.dataDir);
    const dry = await runSeglog(['recover', '--dry-run', w.dataDir]);
    expect(dry.code).toBe(1);
    // (a dry run names the file in its temporary copy)
    expect(dry.stderr).toMatch(new RegExp(`^seglog: SEGLOG_ERR_LOG_CORRUPTION: corrupt segment \\S*orders-0/${path.basename(sealed)}: `));
    // Since issue 24 a clean open reads no sealed segment (Kafka's lazy load): the damage is met by the first read.
    expect(await loaderVerdict(w.dataDir)).toMatch(/^log end offset \d+, read refused: SEGLOG_ERR_LOG_CORRUPTION$/);
    expect(readTree(w.dataDir)).toEqual(before);
  });

  it('0b: a garbage recovery-point checkpoint after an unclean stop: recover refuses to cut (data and partition directory)', async () => {
    const w = await written('garbage-checkpoint', 80);
    rmSync(path.join(w.dataDir, '.kafka_cleanshutdown'));
    writeFileSync(path.join(w.dataDir, 'recovery-point-offset-checkpoint'), 'garbage\n');
    const sealed = logFiles(w.partitionDir)[0] as string;
    const position = batchPosition(sealed, 3);
    flipPayloadByte(sealed, position);
    const before = readTree(w.dataDir);
    for (const target of [w.dataDir, w.partitionDir]) {
      const dry = await runSeglog(['recover', '--dry-run', target]);
      expect(dry.code, dry.stdout).toBe(1);
      expect(dry.stderr).toContain('SEGLOG_ERR_LOG_CORRUPTION');
      expect(dry.stderr).toContain(`orders-0/${path.basename(sealed)}: invalid batch (corrupt) and the recovery point is unknown`);
    }
    expect(await loaderVerdict(w.dataDir)).toBe('SEGLOG_ERR_LOG_CORRUPTION');
    const refused = await runSeglog(['recover', w.dataDir]);
    expect(refused.code).toBe(1);
    expect(readTree(w.dataDir)).toEqual(before);
  });
});

// Issue 23 item 0c through the CLI: a damaged batch header inside a sealed segment. verify names it (file,
// position) and says where reads resume, from the engine's own survey (the one a damaged fetch runs), so the
// CLI and the broker describe the same bytes the same way. On a70d00f verify said nothing about the records after it.
describe('a damaged batch header in a sealed segment (issue 23 0c)', () => {
  for (const [label, damage] of [
    ['magic byte', (b: Buffer, at: number) => { b[at + 16] = 9; }],
    ['batch length grown by 40', (b: Buffer, at: number) => b.writeInt32BE(b.readInt32BE(at + 8) + 40, at + 8)],
  ] as const) {
    it(`${label}: verify names the damage and where reads resume; the engine's fetch agrees`, async () => {
      const w = await written(`damaged-header-${label.replace(/ /g, '-')}`, 80);
      const sealed = logFiles(w.partitionDir)[0] as string;
      const position = batchPosition(sealed, 4);
      const resume = batchPosition(sealed, 5);
      const bytes = readFileSync(sealed);
      const lostOffset = Number(bytes.readBigInt64BE(position));
      damage(bytes, position);
      writeFileSync(sealed, bytes);
      const verify = await runSeglog(['verify', w.dataDir]);
      expect(verify.code).toBe(1);
      expect(verify.stdout).toMatch(new RegExp(`problem: ${sealed} position \\d+`));
      expect(verify.stdout).toContain(`note: ${sealed} position ${position} offset ${lostOffset + 2}: reads resume at position ${resume}, offset ${lostOffset + 2}: ` +
        `offsets ${lostOffset}..${lostOffset + 1} cannot be read (damaged bytes ${position}..${resume - 1})`);
      // The engine, opened as the broker opens it, says the same and reads on from there.
      const manager = await LogManager.open(new NodeIo(), w.dataDir, { defaultConfig: new LogConfig().with({ segmentBytes: 4096, indexIntervalBytes: 300 }), minFreeBytes: 0, checkpointIntervalMs: 0 });
      try {
        const log = manager.getLog('orders', 0)!;
        const error = await log.read(lostOffset, 1 << 20).then(() => null, (e: unknown) => e as { code?: string; context?: Record<string, unknown> });
        expect(error?.code).toBe('SEGLOG_ERR_LOG_CORRUPT_BATCH');
        expect(error?.context).toMatchObject({ position, resumePosition: resume, firstOffset: lostOffset, nextOffset: lostOffset + 2 });
        const plan = await log.read(lostOffset + 2, 1 << 20);
        expect(plan.firstOffset).toBe(lostOffset + 2);
        await plan.release();
      } finally {
        await manager.close();
      }
    });
  }
});
