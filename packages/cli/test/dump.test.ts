// `seglog dump`: a segment written from the shared fixture batches prints the
// fixture's fields exactly; indexes, snapshots and checkpoints print their
// entries; a torn tail is reported, not fatal.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { RecordBatch } from '@seglog/records';
import { appendBytes, logFiles, removeDir, repoRoot, runSeglog, tempDir, writeDataDir } from './helpers.js';

interface Fixture {
  batches: { name: string; size: number; crc: string; hex: string }[];
  indexEntries: { file: string; hex: string }[];
  producerSnapshots: { hex: string }[];
}
const fixture = JSON.parse(readFileSync(path.resolve(repoRoot, 'test/fixtures/kafka-v2-vectors.json'), 'utf8')) as Fixture;
const byName = (name: string): Fixture['batches'][number] => {
  const found = fixture.batches.find((b) => b.name === name);
  if (found === undefined) throw new Error(`fixture batch ${name} missing`);
  return found;
};

// Base offsets patched so offsets increase through the file (the base offset is outside the CRC).
const LAYOUT = [
  { name: 'single-record', base: 0 },
  { name: 'three-records-with-header', base: 1 },
  { name: 'idempotent', base: 4 },
  { name: 'single-record-log-append-time', base: 6 },
  { name: 'commit-marker', base: 10 },
] as const;

let dir: string;
let logPath: string;
const positions: number[] = [];

beforeAll(() => {
  dir = tempDir('dump');
  const parts: Buffer[] = [];
  let position = 0;
  for (const { name, base } of LAYOUT) {
    const bytes = Buffer.from(byName(name).hex, 'hex');
    new RecordBatch(bytes).setBaseOffset(base);
    parts.push(bytes);
    positions.push(position);
    position += bytes.length;
  }
  logPath = path.join(dir, '00000000000000000000.log');
  writeFileSync(logPath, Buffer.concat(parts));
});
afterAll(() => removeDir(dir));

describe('seglog dump <.log> of the fixture batches', () => {
  it('prints every header field of every batch exactly', async () => {
    const r = await runSeglog(['dump', logPath]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout.trimEnd().split('\n');
    const single = byName('single-record');
    expect(lines).toContain(
      `baseOffset: 0 lastOffset: 0 count: 1 position: 0 size: ${single.size} magic: 2 partitionLeaderEpoch: 0 attributes: 0x0000 compresscodec: none ` +
      `timestampType: CreateTime baseTimestamp: 1700000000000 maxTimestamp: 1700000000000 producerId: -1 producerEpoch: -1 baseSequence: -1 lastSequence: -1 ` +
      `isTransactional: false isControl: false crc: ${single.crc} crcValid: true`);
    const three = byName('three-records-with-header');
    expect(lines).toContain(
      `baseOffset: 1 lastOffset: 3 count: 3 position: ${positions[1]} size: ${three.size} magic: 2 partitionLeaderEpoch: 5 attributes: 0x0000 compresscodec: none ` +
      `timestampType: CreateTime baseTimestamp: 1700000000000 maxTimestamp: 1700000000020 producerId: -1 producerEpoch: -1 baseSequence: -1 lastSequence: -1 ` +
      `isTransactional: false isControl: false crc: ${three.crc} crcValid: true`);
    const idempotent = byName('idempotent');
    expect(lines).toContain(
      `baseOffset: 4 lastOffset: 5 count: 2 position: ${positions[2]} size: ${idempotent.size} magic: 2 partitionLeaderEpoch: 0 attributes: 0x0000 compresscodec: none ` +
      `timestampType: CreateTime baseTimestamp: 1700000000000 maxTimestamp: 1700000000000 producerId: 1000 producerEpoch: 0 baseSequence: 0 lastSequence: 1 ` +
      `isTransactional: false isControl: false crc: ${idempotent.crc} crcValid: true`);
    const lat = byName('single-record-log-append-time');
    expect(lines).toContain(
      `baseOffset: 6 lastOffset: 6 count: 1 position: ${positions[3]} size: ${lat.size} magic: 2 partitionLeaderEpoch: 0 attributes: 0x0008 compresscodec: none ` +
      `timestampType: LogAppendTime baseTimestamp: 1700000000000 maxTimestamp: 1700000000005 producerId: -1 producerEpoch: -1 baseSequence: -1 lastSequence: -1 ` +
      `isTransactional: false isControl: false crc: ${lat.crc} crcValid: true`);
    const marker = byName('commit-marker');
    expect(lines).toContain(
      `baseOffset: 10 lastOffset: 10 count: 1 position: ${positions[4]} size: ${marker.size} magic: 2 partitionLeaderEpoch: 3 attributes: 0x0030 compresscodec: none ` +
      `timestampType: CreateTime baseTimestamp: 1700000000000 maxTimestamp: 1700000000000 producerId: 1000 producerEpoch: 0 baseSequence: -1 lastSequence: -1 ` +
      `isTransactional: true isControl: true crc: ${marker.crc} crcValid: true marker: COMMIT coordinatorEpoch: 7`);
    const total = LAYOUT.reduce((sum, { name }) => sum + byName(name).size, 0);
    expect(lines).toContain(`end of data at position ${total}`);
    expect(lines.at(-1)).toBe(`5 batches (0 with an invalid CRC or header), ${total} bytes of whole batches, file size ${total}`);
  });

  it('--records prints offsets, timestamps, keys, values and headers', async () => {
    const r = await runSeglog(['dump', '--records', logPath]);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines).toContain('| offset: 0 timestamp: 1700000000000 sequence: -1 keySize: -1 key: null valueSize: 4 value: "test" headers: []');
    expect(lines).toContain('| offset: 2 timestamp: 1700000000010 sequence: -1 keySize: 2 key: "k1" valueSize: 2 value: "v1" headers: ["h"="x"]');
    expect(lines).toContain('| offset: 3 timestamp: 1700000000020 sequence: -1 keySize: -1 key: null valueSize: -1 value: null headers: []');
    expect(lines).toContain('| offset: 5 timestamp: 1700000000000 sequence: 1 keySize: -1 key: null valueSize: 1 value: "b" headers: []');
    // LogAppendTime: every record reads as the batch max timestamp.
    expect(lines).toContain('| offset: 6 timestamp: 1700000000005 sequence: -1 keySize: -1 key: null valueSize: 4 value: "test" headers: []');
    // The marker's key (version 0, type 1) and value are binary: hex.
    expect(lines).toContain('| offset: 10 timestamp: 1700000000000 sequence: -1 keySize: 4 key: hex:00000001 valueSize: 6 value: hex:000000000007 headers: []');
  });

  it('--max-bytes truncates keys and values and says how much is left', async () => {
    const r = await runSeglog(['dump', '--records', '--max-bytes', '2', logPath]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('valueSize: 4 value: "te"…(+2 bytes)');
    expect(r.stdout).toContain('key: hex:0000…(+2 bytes)');
  });

  it('--json prints one parseable object per line with the same fields', async () => {
    const r = await runSeglog(['dump', '--json', '--records', logPath]);
    expect(r.code).toBe(0);
    const objects = r.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const batches = objects.filter((o) => o['type'] === 'batch');
    expect(batches.map((b) => [b['baseOffset'], b['lastOffset'], b['size'], b['crc'], b['crcValid']])).toEqual(
      LAYOUT.map(({ name, base }) => [base, base + (name === 'three-records-with-header' ? 2 : name === 'idempotent' ? 1 : 0), byName(name).size, byName(name).crc, true]));
    expect(batches[2]).toMatchObject({ producerId: 1000, producerEpoch: 0, baseSequence: 0, lastSequence: 1, attributes: '0x0000' });
    expect(objects.filter((o) => o['type'] === 'record')).toHaveLength(8);
    expect(objects.at(-1)).toMatchObject({ type: 'end', stop: 'end', batches: 5, invalidBatches: 0 });
  });

  it('reports a flipped payload byte as a CRC mismatch with both CRCs and goes on', async () => {
    const damaged = path.join(dir, 'damaged', '00000000000000000000.log');
    const bytes = readFileSync(logPath);
    const at = (positions[1] as number) + 70;
    bytes[at] = (bytes[at] as number) ^ 0x01;
    (await import('node:fs')).mkdirSync(path.dirname(damaged), { recursive: true });
    writeFileSync(damaged, bytes);
    const r = await runSeglog(['dump', damaged]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`baseOffset: 1 lastOffset: 3 .* crc: ${byName('three-records-with-header').crc} crcValid: false computedCrc: [0-9a-f]{8}\\n`));
    expect(r.stdout).toContain('5 batches (1 with an invalid CRC or header)');
  });
});

describe('seglog dump of index, snapshot and checkpoint files', () => {
  it('prints the fixture index entries with absolute offsets (base from the file name)', async () => {
    const hex = (file: string): Buffer => Buffer.from(fixture.indexEntries.find((e) => e.file === file)?.hex ?? '', 'hex');
    writeFileSync(path.join(dir, '00000000000000000100.index'), hex('.index'));
    writeFileSync(path.join(dir, '00000000000000000100.timeindex'), hex('.timeindex'));
    writeFileSync(path.join(dir, '00000000000000000100.txnindex'), hex('.txnindex'));
    const [index, time, txn] = await Promise.all([
      runSeglog(['dump', path.join(dir, '00000000000000000100.index')]),
      runSeglog(['dump', path.join(dir, '00000000000000000100.timeindex')]),
      runSeglog(['dump', path.join(dir, '00000000000000000100.txnindex'), '--json']),
    ]);
    expect(index.code).toBe(0);
    expect(index.stdout.split('\n')).toContain('offset: 105 position: 4096');
    expect(time.stdout.split('\n')).toContain('timestamp: 1700000000000 offset: 105');
    expect(JSON.parse(txn.stdout.split('\n')[0] as string)).toEqual({ type: 'aborted-txn', producerId: 1000, firstOffset: 0, lastOffset: 29, lastStableOffset: 8 });
  });

  it('prints producer snapshot entries', async () => {
    const file = path.join(dir, '00000000000000000002.snapshot');
    writeFileSync(file, Buffer.from(fixture.producerSnapshots[0]?.hex ?? '', 'hex'));
    const r = await runSeglog(['dump', file]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toContain(
      'producerId: 1000 producerEpoch: 0 lastSequence: 1 lastOffset: 1 offsetDelta: 1 timestamp: 1700000000000 coordinatorEpoch: -1 currentTxnFirstOffset: -1');
    expect(r.stdout).toContain('1 entries');
  });

  it('prints a corrupt snapshot as one typed error line, exit 1', async () => {
    const file = path.join(dir, '00000000000000000003.snapshot');
    const bytes = Buffer.from(fixture.producerSnapshots[0]?.hex ?? '', 'hex');
    bytes[20] = (bytes[20] as number) ^ 0xff;
    writeFileSync(file, bytes);
    const r = await runSeglog(['dump', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^seglog: SEGLOG_ERR_SNAPSHOT_CORRUPT: .*crc/);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('dumps an engine-written partition: index entries point into the .log, checkpoints parse', async () => {
    const data = tempDir('dump-engine');
    try {
      const { partitionDir } = await writeDataDir(data, 40);
      const [index, epochs, recovery] = await Promise.all([
        runSeglog(['dump', '--json', path.join(partitionDir, '00000000000000000000.index')]),
        runSeglog(['dump', path.join(partitionDir, 'leader-epoch-checkpoint')]),
        runSeglog(['dump', path.join(data, 'recovery-point-offset-checkpoint')]),
      ]);
      const entries = index.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string; offset: number; position: number });
      expect(entries.filter((e) => e.type === 'offset-index-entry').length).toBeGreaterThan(3);
      expect(entries[0]).toMatchObject({ type: 'offset-index-entry' });
      expect(epochs.stdout.split('\n')).toContain('epoch: 0 startOffset: 0');
      expect(recovery.stdout.split('\n')).toContain('topic: orders partition: 0 offset: 80');
    } finally {
      removeDir(data);
    }
  });
});

describe('seglog dump of a torn segment', () => {
  it('reports garbage after the last batch as a torn tail and exits 0', async () => {
    const data = tempDir('dump-torn');
    try {
      const { partitionDir } = await writeDataDir(data, 10);
      const active = logFiles(partitionDir).at(-1) as string;
      const size = readFileSync(active).length;
      appendBytes(active, Buffer.from('0000000000000000000000ffgarbage-after-close', 'utf8'));
      const r = await runSeglog(['dump', active]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`torn tail at position ${size}: 43 bytes of a partial batch`);
      expect(r.stdout).toContain('10 batches (0 with an invalid CRC or header)');
    } finally {
      removeDir(data);
    }
  });

  it('reports a half-written batch as a torn tail', async () => {
    const data = tempDir('dump-partial');
    try {
      const { partitionDir } = await writeDataDir(data, 10);
      const active = logFiles(partitionDir).at(-1) as string;
      const bytes = readFileSync(active);
      appendBytes(active, bytes.subarray(0, 100)); // the first 100 bytes of a 125-byte batch
      const r = await runSeglog(['dump', active]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`torn tail at position ${bytes.length}: 100 bytes of a partial batch (its header declares 125 bytes)`);
    } finally {
      removeDir(data);
    }
  });
});
