import fc from 'fast-check';
import { CrashMode, SimIo } from '@seglog/io';
import { describe, expect, it } from 'vitest';
import { CheckpointFile } from '../src/checkpoint/checkpoint-file.js';
import { LeaderEpochCheckpoint, leaderEpochCheckpointFormat } from '../src/checkpoint/leader-epoch-checkpoint.js';
import type { EpochEntry } from '../src/checkpoint/leader-epoch-checkpoint.js';
import { OffsetCheckpoint, offsetCheckpointFormat } from '../src/checkpoint/offset-checkpoint.js';
import type { OffsetCheckpointEntry } from '../src/checkpoint/offset-checkpoint.js';
import { rejected, thrown } from './helpers.js';

const DIR = '/data';
const PATH = `${DIR}/recovery-point-offset-checkpoint`;
const EPOCH_PATH = `${DIR}/t-0/leader-epoch-checkpoint`;

async function newIo(options: ConstructorParameters<typeof SimIo>[0] = {}): Promise<SimIo> {
  const io = new SimIo(options);
  await io.mkdir(`${DIR}/t-0`, { recursive: true });
  return io;
}

const decodeOffsets = (text: string): OffsetCheckpointEntry[] => CheckpointFile.decode(offsetCheckpointFormat, text, PATH);
const decodeEpochs = (text: string): EpochEntry[] => CheckpointFile.decode(leaderEpochCheckpointFormat, text, EPOCH_PATH);

describe('CheckpointFile text format', () => {
  it("encodes Kafka's example", () => {
    const entries = [
      { topic: 'orders', partition: 0, offset: 1234 },
      { topic: 'orders', partition: 1, offset: 99 },
    ];
    const text = CheckpointFile.encode(offsetCheckpointFormat, entries);
    expect(text).toBe('0\n2\norders 0 1234\norders 1 99\n');
    expect(decodeOffsets(text)).toEqual(entries);
    expect(CheckpointFile.encode(leaderEpochCheckpointFormat, [{ epoch: 0, startOffset: 104 }, { epoch: 1, startOffset: 106 }])).toBe('0\n2\n0 104\n1 106\n');
  });

  it('round-trips any entries', () => {
    const topic = fc.stringMatching(/^[a-zA-Z0-9._-]{1,40}$/).filter((t) => t !== '.' && t !== '..');
    const entry = fc.record({ topic, partition: fc.integer({ min: 0, max: 2 ** 31 - 1 }), offset: fc.maxSafeNat() });
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 20 }), (entries) => {
        expect(decodeOffsets(CheckpointFile.encode(offsetCheckpointFormat, entries))).toEqual(entries);
      }),
    );
    const epoch = fc.record({ epoch: fc.integer({ min: 0, max: 2 ** 31 - 1 }), startOffset: fc.maxSafeNat() });
    fc.assert(
      fc.property(fc.array(epoch, { maxLength: 20 }), (entries) => {
        expect(decodeEpochs(CheckpointFile.encode(leaderEpochCheckpointFormat, entries))).toEqual(entries);
      }),
    );
  });

  it("reads what Kafka's reader accepts", () => {
    expect(decodeOffsets('')).toEqual([]);
    expect(decodeOffsets('0\n')).toEqual([]); // no count line
    expect(decodeOffsets('0')).toEqual([]);
    expect(decodeOffsets('0\n0\n')).toEqual([]);
    expect(decodeOffsets('0\n1\norders 0 5')).toEqual([{ topic: 'orders', partition: 0, offset: 5 }]); // last line unterminated
    expect(decodeOffsets('0\r\n1\r\norders 0 5\r\n')).toEqual([{ topic: 'orders', partition: 0, offset: 5 }]);
    expect(decodeOffsets('0\n1\norders\t0   5  \n')).toEqual([{ topic: 'orders', partition: 0, offset: 5 }]);
    expect(decodeOffsets('+0\n+1\norders +0 +5\n')).toEqual([{ topic: 'orders', partition: 0, offset: 5 }]);
    expect(decodeEpochs('0\n1\n3 9007199254740991\n')).toEqual([{ epoch: 3, startOffset: Number.MAX_SAFE_INTEGER }]);
  });

  it('rejects everything else with SEGLOG_ERR_CHECKPOINT_CORRUPT', () => {
    const bad = [
      '1\n0\n', // wrong version
      'x\n0\n',
      ' 0\n0\n',
      '\n0\n',
      '0\nx\n',
      '0\n2\norders 0 5\n', // fewer lines than the count
      '0\n0\norders 0 5\n', // more lines than the count
      '0\n1\norders 0\n',
      '0\n1\norders 0 5 7\n',
      '0\n1\n orders 0 5\n', // leading whitespace: empty first field
      '0\n1\n\n',
      '0\n1\norders 0 5x\n',
      '0\n1\norders -1 5\n',
      '0\n1\norders 0 -5\n',
      '0\n1\nor/ders 0 5\n',
      '0\n1\norders 2147483648 5\n',
      '0\n1\norders 0 9007199254740992\n',
      '0\n1\norders 0 9223372036854775808\n',
      '0\n-1\n',
      '0\n2147483648\n',
    ];
    for (const text of bad) expect(thrown(() => decodeOffsets(text)).code, JSON.stringify(text)).toBe('SEGLOG_ERR_CHECKPOINT_CORRUPT');
    for (const text of ['0\n1\n-1 5\n', '0\n1\n1 -5\n', '0\n1\n1\n', '0\n1\n1 2 3\n', '0\n1\n2147483648 0\n']) {
      expect(thrown(() => decodeEpochs(text)).code, JSON.stringify(text)).toBe('SEGLOG_ERR_CHECKPOINT_CORRUPT');
    }
    const error = thrown(() => decodeOffsets('0\n2\norders 0 5\norders x 6\n'));
    expect(error.context).toMatchObject({ path: PATH, line: 4 });
  });
});

describe('CheckpointFile through Io', () => {
  it('writes via a tmp file and reads back; a missing file has no entries', async () => {
    const io = await newIo();
    const checkpoint = new OffsetCheckpoint(io, PATH);
    expect(await checkpoint.read()).toEqual([]);
    await checkpoint.write([
      { topic: 'orders', partition: 1, offset: 99 },
      { topic: 'a', partition: 7, offset: 1 },
      { topic: 'orders', partition: 0, offset: 1234 },
    ]);
    expect((await io.readFile(PATH)).toString('utf8')).toBe('0\n3\na 7 1\norders 0 1234\norders 1 99\n');
    expect(await io.readdir(DIR)).toEqual(['recovery-point-offset-checkpoint', 't-0']);
    await checkpoint.write([{ topic: 'b', partition: 0, offset: 5 }]);
    expect(await checkpoint.read()).toEqual([{ topic: 'b', partition: 0, offset: 5 }]);
    expect(OffsetCheckpoint.toMap(await checkpoint.read())).toEqual(new Map([['b-0', 5]]));
    expect(io.openHandles()).toEqual([]);
  });

  it('survives power loss once write() resolved', async () => {
    const io = await newIo();
    await io.fsyncDir('/');
    await io.fsyncDir(DIR);
    await io.fsyncDir(`${DIR}/t-0`);
    const checkpoint = new LeaderEpochCheckpoint(io, EPOCH_PATH);
    await checkpoint.write([{ epoch: 0, startOffset: 104 }, { epoch: 2, startOffset: 110 }]);
    for (const mode of [CrashMode.powerClean, CrashMode.powerChaotic, CrashMode.powerOrdered]) {
      const after = io.recover(mode, { seed: 7 });
      expect(await new LeaderEpochCheckpoint(after, EPOCH_PATH).read(), mode).toEqual([{ epoch: 0, startOffset: 104 }, { epoch: 2, startOffset: 110 }]);
    }
  });

  it('leaves the old or the new content after a crash at any point of a write', async () => {
    const oldEntries = [{ topic: 'orders', partition: 0, offset: 10 }];
    const newEntries = [{ topic: 'orders', partition: 0, offset: 20 }, { topic: 'orders', partition: 1, offset: 30 }];
    // Count the crash points of one write over an existing checkpoint.
    const probe = await newIo();
    await new OffsetCheckpoint(probe, PATH).write(oldEntries);
    const before = probe.crashPoints;
    await new OffsetCheckpoint(probe, PATH).write(newEntries);
    const points = probe.crashPoints - before;
    expect(points).toBeGreaterThanOrEqual(5); // open, truncate, pwrite, fdatasync, rename, fsyncDir
    const outcomes = new Set<string>();
    for (let n = 1; n <= points; n++) {
      let haltAt = Number.POSITIVE_INFINITY;
      const io = await newIo({ onCrashPoint: (p) => p.point === haltAt });
      await io.fsyncDir('/');
      await io.fsyncDir(DIR);
      await new OffsetCheckpoint(io, PATH).write(oldEntries);
      haltAt = io.crashPoints + n;
      const error = await rejected(new OffsetCheckpoint(io, PATH).write(newEntries));
      expect(error.code).toBe('SEGLOG_ERR_IO_CRASHED');
      for (const mode of [CrashMode.process, CrashMode.powerClean, CrashMode.powerChaotic, CrashMode.powerOrdered]) {
        for (const seed of [1, 2, 3]) {
          const after = io.recover(mode, { seed });
          const read = await new OffsetCheckpoint(after, PATH).read();
          expect([oldEntries, newEntries], `crash point ${n}, ${mode}, seed ${seed}`).toContainEqual(read);
          outcomes.add(JSON.stringify(read));
        }
      }
    }
    // Both outcomes occur: the test can tell them apart.
    expect(outcomes.size).toBe(2);
  });

  it('fails with the I/O error and keeps the old content when the tmp file cannot be synced', async () => {
    const io = await newIo({ faults: { syncEio: { nth: 1, path: `${PATH}.tmp` } } });
    const checkpoint = new OffsetCheckpoint(io, PATH);
    const error = await rejected(checkpoint.write([{ topic: 'orders', partition: 0, offset: 1 }]));
    expect(error.code).toBe('SEGLOG_ERR_IO_EIO');
    expect(await io.exists(PATH)).toBe(false);
    expect(io.openHandles()).toEqual([]);
    // The next write (the fault fired once) succeeds.
    await checkpoint.write([{ topic: 'orders', partition: 0, offset: 2 }]);
    expect(await checkpoint.read()).toEqual([{ topic: 'orders', partition: 0, offset: 2 }]);
  });

  it('rejects bad UTF-8 and oversized files as corrupt', async () => {
    const io = await newIo();
    const file = await io.open(PATH, { create: true });
    await file.pwrite(Buffer.from([0x30, 0x0a, 0x31, 0x0a, 0xff, 0x20, 0x30, 0x20, 0x31, 0x0a]), 0);
    await file.truncate(10);
    await file.close();
    expect((await rejected(new OffsetCheckpoint(io, PATH).read())).code).toBe('SEGLOG_ERR_CHECKPOINT_CORRUPT');
    const big = await io.open(PATH);
    await big.truncate(64 * 1024 * 1024 + 1);
    await big.close();
    expect((await rejected(new OffsetCheckpoint(io, PATH).read())).code).toBe('SEGLOG_ERR_CHECKPOINT_CORRUPT');
  });

  it('validates entries before writing', async () => {
    const io = await newIo();
    const checkpoint = new OffsetCheckpoint(io, PATH);
    expect((await rejected(checkpoint.write([{ topic: 'bad topic', partition: 0, offset: 1 }]))).code).toBe('SEGLOG_ERR_LOG_INVALID_TOPIC');
    expect((await rejected(checkpoint.write([{ topic: 't', partition: -1, offset: 1 }]))).code).toBe('SEGLOG_ERR_LOG_INVALID_PARTITION');
    expect(await io.exists(PATH)).toBe(false);
  });
});
