import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { SimIo } from '@seglog/io';
import { crc32c } from '@seglog/records';
import { describe, expect, it } from 'vitest';
import {
  decodeSnapshot,
  encodeSnapshot,
  latestValidSnapshot,
  PRODUCER_SNAPSHOT_ENTRY_BYTES,
  snapshotOffsets,
  snapshotPath,
  writeSnapshotFile,
} from '../src/producer/producer-snapshot.js';
import type { ProducerSnapshotEntry } from '../src/producer/producer-snapshot.js';
import { thrown } from './helpers.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface SnapshotVector {
  readonly description: string;
  readonly hex: string;
}

function snapshotVectors(): SnapshotVector[] {
  const fixture = JSON.parse(readFileSync(path.resolve(repoRoot, 'test/fixtures/kafka-v2-vectors.json'), 'utf8')) as {
    producerSnapshots: SnapshotVector[];
  };
  return fixture.producerSnapshots;
}

const T0 = 1_700_000_000_000;
const FIXTURE_ENTRY: ProducerSnapshotEntry = {
  producerId: 1000,
  producerEpoch: 0,
  lastSequence: 1,
  lastOffset: 1,
  offsetDelta: 1,
  timestamp: T0,
  coordinatorEpoch: -1,
  currentTxnFirstOffset: -1,
};

const entryArb: fc.Arbitrary<ProducerSnapshotEntry> = fc
  .record({
    producerId: fc.maxSafeNat(),
    producerEpoch: fc.integer({ min: -1, max: 0x7fff }),
    lastSequence: fc.integer({ min: -1, max: 0x7fffffff }),
    lastOffset: fc.integer({ min: -1, max: Number.MAX_SAFE_INTEGER }),
    offsetDelta: fc.integer({ min: 0, max: 0x7fffffff }),
    timestamp: fc.integer({ min: -1, max: Number.MAX_SAFE_INTEGER }),
    coordinatorEpoch: fc.integer({ min: -0x80000000, max: 0x7fffffff }),
    currentTxnFirstOffset: fc.integer({ min: -1, max: Number.MAX_SAFE_INTEGER }),
  })
  .map((e) => ({ ...e, offsetDelta: e.lastOffset < 0 ? 0 : Math.min(e.offsetDelta, e.lastOffset) }));

describe('producer snapshot format (Kafka v1)', () => {
  it('reproduces the fixture bytes exactly: one entry and empty', () => {
    const vectors = snapshotVectors();
    expect(vectors).toHaveLength(2);
    const [one, empty] = vectors as [SnapshotVector, SnapshotVector];
    expect(encodeSnapshot([FIXTURE_ENTRY]).toString('hex')).toBe(one.hex);
    expect(decodeSnapshot(Buffer.from(one.hex, 'hex'))).toEqual([FIXTURE_ENTRY]);
    expect(encodeSnapshot([]).toString('hex')).toBe(empty.hex);
    expect(decodeSnapshot(Buffer.from(empty.hex, 'hex'))).toEqual([]);
    expect(Buffer.from(one.hex, 'hex')).toHaveLength(10 + PRODUCER_SNAPSHOT_ENTRY_BYTES);
  });

  it('round-trips any entries', () => {
    fc.assert(
      fc.property(fc.uniqueArray(entryArb, { maxLength: 12, selector: (e) => e.producerId }), (entries) => {
        expect(decodeSnapshot(encodeSnapshot(entries))).toEqual(entries);
      }),
    );
  });

  it('rejects a version other than 1, a bad length and a bad CRC', () => {
    const good = encodeSnapshot([FIXTURE_ENTRY]);
    const version = Buffer.from(good);
    version.writeInt16BE(2, 0);
    expect(thrown(() => decodeSnapshot(version)).code).toBe('SEGLOG_ERR_SNAPSHOT_CORRUPT');
    expect(thrown(() => decodeSnapshot(version)).message).toMatch(/version 2/);
    expect(thrown(() => decodeSnapshot(good.subarray(0, good.length - 1))).message).toMatch(/expected 56/);
    expect(thrown(() => decodeSnapshot(Buffer.concat([good, Buffer.alloc(1)]))).code).toBe('SEGLOG_ERR_SNAPSHOT_CORRUPT');
    expect(thrown(() => decodeSnapshot(good.subarray(0, 9))).message).toMatch(/shorter/);
    const count = Buffer.from(good);
    count.writeInt32BE(-1, 6);
    expect(thrown(() => decodeSnapshot(count)).message).toMatch(/negative/);
    const twice = encodeSnapshot([FIXTURE_ENTRY, FIXTURE_ENTRY]);
    expect(thrown(() => decodeSnapshot(twice)).message).toMatch(/listed twice/);
  });

  it('detects every single-bit flip after the version (CRC-32C over [6, EOF))', () => {
    const good = encodeSnapshot([FIXTURE_ENTRY, { ...FIXTURE_ENTRY, producerId: 7, currentTxnFirstOffset: 3 }]);
    fc.assert(
      fc.property(fc.integer({ min: 2 * 8, max: good.length * 8 - 1 }), (bit) => {
        const bad = Buffer.from(good);
        bad[bit >> 3]! ^= 1 << (bit & 7);
        expect(thrown(() => decodeSnapshot(bad)).code).toBe('SEGLOG_ERR_SNAPSHOT_CORRUPT');
      }),
    );
  });

  it('rejects a CRC-valid entry with an unsafe int64', () => {
    const bad = encodeSnapshot([FIXTURE_ENTRY]);
    bad.writeInt32BE(0x7fffffff, 10); // producerId high half: beyond 2^53
    bad.writeUInt32BE(crc32c(bad.subarray(6)), 2);
    expect(thrown(() => decodeSnapshot(bad)).message).toMatch(/producerId/);
  });
});

describe('snapshot files', () => {
  it('lists only well-named .snapshot files, ascending', () => {
    expect(
      snapshotOffsets([
        '00000000000000000100.snapshot',
        '00000000000000000005.snapshot',
        '00000000000000000005.log',
        '00000000000000000007.snapshot.deleted',
        '00000000000000000009.snapshot.tmp',
        'leader-epoch-checkpoint',
        'x.snapshot',
      ]),
    ).toEqual([5, 100]);
  });

  it('picks the newest valid snapshot and reports the corrupt newer ones', async () => {
    const io = new SimIo({ seed: 1 });
    await io.mkdir('/d', { recursive: true });
    await writeSnapshotFile(io, '/d', 10, encodeSnapshot([FIXTURE_ENTRY]));
    await writeSnapshotFile(io, '/d', 20, encodeSnapshot([]));
    const file = await io.open(snapshotPath('/d', 30), { create: true });
    await file.pwrite(Buffer.from('garbage!!!!!'), 0);
    await file.close();
    const result = await latestValidSnapshot(io, '/d', snapshotOffsets(await io.readdir('/d')));
    expect(result.corruptOffsets).toEqual([30]);
    expect(result.found).toEqual({ offset: 20, entries: [] });
    const none = await latestValidSnapshot(io, '/d', [30, 40]);
    expect(none).toEqual({ found: null, corruptOffsets: [30] });
  });
});
