// The same building blocks on the real file system (NodeIo): what SimIo
// accepts, Linux must accept too (pwrite of mirror slices, ftruncate to grow
// and trim, rename over, directory fsync).

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NodeIo } from '@seglog/io';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileNames } from '../src/file-names.js';
import { LeaderEpochCache } from '../src/checkpoint/leader-epoch-cache.js';
import { OffsetCheckpoint } from '../src/checkpoint/offset-checkpoint.js';
import { OffsetIndex } from '../src/segment/offset-index.js';
import { TimeIndex } from '../src/segment/time-index.js';
import { TxnIndex } from '../src/segment/txn-index.js';
import { vector } from './helpers.js';

describe('building blocks on NodeIo', () => {
  let dir: string;
  const io = new NodeIo();
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'seglog-log-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes the fixture index entries and trims on close', async () => {
    const indexPath = path.join(dir, FileNames.segmentFileName(100, 'index'));
    const timePath = path.join(dir, FileNames.segmentFileName(100, 'timeindex'));
    const txnPath = path.join(dir, FileNames.segmentFileName(0, 'txnindex'));
    const offsets = await OffsetIndex.open(io, indexPath, { baseOffset: 100, maxIndexBytes: 10 * 1024 * 1024 });
    const times = await TimeIndex.open(io, timePath, { baseOffset: 100, maxIndexBytes: 10 * 1024 * 1024 });
    const txns = await TxnIndex.open(io, txnPath, { baseOffset: 0 });
    expect(statSync(indexPath).size).toBe(10485760);
    expect(statSync(timePath).size).toBe(10485756);
    offsets.append(105, 4096);
    times.maybeAppend(1_700_000_000_000, 105);
    txns.append({ producerId: 1000, firstOffset: 0, lastOffset: 29, lastStableOffset: 8 });
    await Promise.all([offsets.flush(), times.flush(), txns.flush()]);
    expect(readFileSync(indexPath).subarray(0, 8).toString('hex')).toBe(vector('.index').hex);
    await Promise.all([offsets.close(), times.close(), txns.close()]);
    expect(readFileSync(indexPath).toString('hex')).toBe(vector('.index').hex);
    expect(readFileSync(timePath).toString('hex')).toBe(vector('.timeindex').hex);
    expect(readFileSync(txnPath).toString('hex')).toBe(vector('.txnindex').hex);
    const reopened = await OffsetIndex.open(io, indexPath, { baseOffset: 100, maxIndexBytes: 10 * 1024 * 1024 });
    expect(reopened.lookup(200)).toEqual({ offset: 105, position: 4096 });
    await reopened.close();
  });

  it('writes checkpoints atomically and reloads the epoch cache', async () => {
    const checkpoint = new OffsetCheckpoint(io, path.join(dir, FileNames.recoveryPointCheckpoint));
    await checkpoint.write([{ topic: 'orders', partition: 0, offset: 1234 }]);
    await checkpoint.write([{ topic: 'orders', partition: 1, offset: 99 }, { topic: 'orders', partition: 0, offset: 1234 }]);
    expect(readFileSync(checkpoint.path, 'utf8')).toBe('0\n2\norders 0 1234\norders 1 99\n');
    const epochPath = path.join(dir, FileNames.leaderEpochCheckpoint);
    const cache = await LeaderEpochCache.load(io, epochPath);
    await cache.assign(0, 104);
    await cache.assign(1, 106);
    cache.truncateFromEnd(106);
    await cache.flush();
    expect(readFileSync(epochPath, 'utf8')).toBe('0\n1\n0 104\n');
    expect((await LeaderEpochCache.load(io, epochPath)).epochEntries()).toEqual([{ epoch: 0, startOffset: 104 }]);
  });
});
