// LogManager on SimIo: the directory lock, the clean-shutdown marker and what
// it means for recovery, the offset checkpoints byte for byte, the free-space
// guard with an injected clock, fail-stop across the directory, deleteLog and
// open's handling of other directory entries. Every test ends with no open
// handle.

import type { SimIo } from '@seglog/io';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FileNames } from '../src/file-names.js';
import { LogManager } from '../src/log-manager.js';
import type { LogManagerOptions } from '../src/log-manager.js';
import type { LogConfig } from '../src/log-config.js';
import { rejected } from './helpers.js';
import { clock, config, newIo, producerBatch, readAll } from './log-helpers.js';

const DATA = '/data/d';
const SIZE = producerBatch(1).length;
const MARKER = `${DATA}/.kafka_cleanshutdown`;
const RECOVERY = `${DATA}/recovery-point-offset-checkpoint`;
const LOG_START = `${DATA}/log-start-offset-checkpoint`;

/** Small indexes so preallocated index files do not dominate the disk-space arithmetic. */
function smallConfig(overrides: Parameters<typeof config>[0] = {}): LogConfig {
  return config({ segmentIndexBytes: 4096, ...overrides });
}

function open(io: SimIo, options: Partial<LogManagerOptions> = {}): Promise<LogManager> {
  return LogManager.open(io, DATA, { defaultConfig: smallConfig(), minFreeBytes: 0, checkpointIntervalMs: 0, ...options });
}

function segmentLog(topic: string, partition: number, base: number): string {
  return `${DATA}/${topic}-${partition}/${FileNames.segmentFileName(base, 'log')}`;
}

async function appendRecords(manager: LogManager, topic: string, partition: number, count: number): Promise<number> {
  const log = await manager.getOrCreateLog(topic, partition);
  let last = -1;
  for (let i = 0; i < count; i++) last = (await log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 })).lastOffset;
  return last;
}

async function text(io: SimIo, path: string): Promise<string> {
  return (await io.readFile(path)).toString('utf8');
}

describe('LogManager: the directory lock', () => {
  it('a second open of the directory gets SEGLOG_ERR_LOG_LOCKED until the first closes', async () => {
    const io = await newIo();
    const first = await open(io);
    const error = await rejected(open(io));
    expect(error.code).toBe('SEGLOG_ERR_LOG_LOCKED');
    expect(io.openHandles()).toEqual([`${DATA}/.lock`]);
    await first.close();
    expect(io.openHandles()).toEqual([]);
    const second = await open(io);
    expect(second.hadCleanShutdown).toBe(true);
    await second.close();
    expect(io.openHandles()).toEqual([]);
  });
});

describe('LogManager: names', () => {
  it('illegal topics and partitions are typed errors and create nothing', async () => {
    const io = await newIo();
    const manager = await open(io);
    const before = await io.readdir(DATA);
    const illegalTopic = fc.oneof(
      fc.constantFrom('', '.', '..', 'a/b', '../x', 'a b', 'x'.repeat(250), 'é', 'a\0b'),
      fc.string({ minLength: 1, maxLength: 20 }).filter((s) => !/^[a-zA-Z0-9._-]+$/.test(s)),
    );
    await fc.assert(
      fc.asyncProperty(illegalTopic, fc.nat(10), async (topic, partition) => {
        expect((await rejected(manager.getOrCreateLog(topic, partition))).code).toBe('SEGLOG_ERR_LOG_INVALID_TOPIC');
      }),
      { numRuns: 100 },
    );
    for (const partition of [-1, 1.5, 2 ** 31, Number.NaN]) {
      expect((await rejected(manager.getOrCreateLog('ok', partition))).code).toBe('SEGLOG_ERR_LOG_INVALID_PARTITION');
    }
    expect(await io.readdir(DATA)).toEqual(before);
    expect(await io.readdir('/data')).toEqual(['d']);
    expect(manager.logs()).toEqual([]);
    await manager.close();
    expect(io.openHandles()).toEqual([]);
  });
});

describe('LogManager: clean shutdown marker', () => {
  it('clean close writes the marker; reopening consumes it before loading and trusts the files (no recovery)', async () => {
    const io = await newIo();
    const manager = await open(io, { brokerEpoch: 7 });
    expect(manager.hadCleanShutdown).toBe(false);
    await appendRecords(manager, 't', 0, 5);
    await manager.close();
    expect(await text(io, MARKER)).toBe('{"version":0,"brokerEpoch":7}');
    expect(await io.exists(`${MARKER}.tmp`)).toBe(false);
    expect(await text(io, RECOVERY)).toBe('0\n1\nt 0 5\n');
    // Damage after the clean close that only a recovery scan would see: a
    // flipped payload byte in the last batch (offset 4) fails its CRC.
    const path = segmentLog('t', 0, 0);
    expect((await io.stat(path)).size).toBe(SIZE * 5);
    const file = await io.open(path);
    const byte = Buffer.alloc(1);
    await file.pread(byte, SIZE * 5 - 1);
    byte[0] = (byte[0] as number) ^ 0xff;
    await file.pwrite(byte, SIZE * 5 - 1);
    await file.fdatasync();
    await file.close();

    const reopened = await open(io);
    expect(reopened.hadCleanShutdown).toBe(true);
    expect(reopened.previousBrokerEpoch).toBe(7);
    expect(await io.exists(MARKER)).toBe(false);
    // Trusted: nothing scanned, nothing cut.
    expect(reopened.getLog('t', 0)?.logEndOffset).toBe(5);
    expect((await io.stat(path)).size).toBe(SIZE * 5);
    // The marker is gone durably: after a power loss the start is unclean and
    // recovery (from the checkpointed recovery point 5, segment 0) finds the
    // damage below it.
    const survivor = io.recover('power-clean');
    expect((await rejected(open(survivor))).code).toBe('SEGLOG_ERR_LOG_CORRUPTION');
    const afterCrash = await open(survivor, { onCorruption: 'truncate' });
    expect(afterCrash.hadCleanShutdown).toBe(false);
    expect(afterCrash.getLog('t', 0)?.logEndOffset).toBe(4);
    expect((await survivor.stat(path)).size).toBe(SIZE * 4);
    await afterCrash.close();
    expect(survivor.openHandles()).toEqual([]);
  });

  it('a crash while loading counts as unclean on the next start', async () => {
    const io = await newIo();
    const manager = await open(io);
    await appendRecords(manager, 't', 0, 3);
    await manager.close();
    const crashing = io.recover('process', { onCrashPoint: (p) => p.path.startsWith(`${DATA}/t-0/`) });
    expect((await rejected(open(crashing))).code).toBe('SEGLOG_ERR_IO_CRASHED');
    const next = crashing.recover('power-clean');
    const reopened = await open(next);
    expect(reopened.hadCleanShutdown).toBe(false);
    expect(reopened.getLog('t', 0)?.logEndOffset).toBe(3);
    await reopened.close();
    expect(next.openHandles()).toEqual([]);
  });
});

describe('LogManager: unclean stop', () => {
  async function crashedWithDamage(): Promise<{ survivor: SimIo; recoveryPoint: number }> {
    const io = await newIo();
    const manager = await open(io, { defaultConfig: smallConfig({ segmentBytes: SIZE * 4 }) });
    const log = await manager.getOrCreateLog('t', 0);
    for (let i = 0; i < 10; i++) await log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 });
    await log.durable(9);
    await manager.checkpoint();
    const recoveryPoint = log.durableOffset;
    expect(log.segmentBaseOffsets()).toEqual([0, 4, 8]);
    const survivor = io.recover('process');
    // Damage below the recovery point, in segment 0: a flipped payload byte
    // fails the CRC of offset 1. Recovery from the checkpoint (segment 8)
    // never reads it; recovery from 0 would report it.
    const first = await survivor.open(segmentLog('t', 0, 0));
    const byte = Buffer.alloc(1);
    await first.pread(byte, SIZE * 2 - 1);
    byte[0] = (byte[0] as number) ^ 0xff;
    await first.pwrite(byte, SIZE * 2 - 1);
    await first.close();
    // A torn tail after the last batch of the active segment.
    const active = await survivor.open(segmentLog('t', 0, 8));
    await active.pwrite(Buffer.alloc(30, 0x77), SIZE * 2);
    await active.close();
    return { survivor, recoveryPoint };
  }

  it('recovers from the checkpointed recovery point: cuts the torn tail, leaves durable segments unread', async () => {
    const { survivor, recoveryPoint } = await crashedWithDamage();
    expect(recoveryPoint).toBe(10);
    expect(await text(survivor, RECOVERY)).toBe('0\n1\nt 0 10\n');
    expect(await survivor.exists(MARKER)).toBe(false);
    const manager = await open(survivor, { defaultConfig: smallConfig({ segmentBytes: SIZE * 4 }) });
    expect(manager.hadCleanShutdown).toBe(false);
    const log = manager.getLog('t', 0);
    expect(log?.logEndOffset).toBe(10);
    expect((await survivor.stat(segmentLog('t', 0, 8))).size).toBe(SIZE * 2);
    await manager.close();
    expect(survivor.openHandles()).toEqual([]);
  });

  it('an unreadable recovery-point checkpoint means "recovery point unknown": the damage is refused, nothing is cut (issue 23 0b)', async () => {
    const { survivor } = await crashedWithDamage();
    const file = await survivor.open(RECOVERY);
    await file.pwrite(Buffer.from('9\n'), 0);
    await file.close();
    const sizes = await Promise.all([0, 4, 8].map(async (base) => (await survivor.stat(segmentLog('t', 0, base))).size));
    // Before the fix the garbage read as recovery point 0: every segment was scanned and the CRC failure at
    // offset 1 licensed cutting segment 0 to one batch and deleting segments 4 and 8 (9 of 10 durable records).
    const error = await rejected(open(survivor, { defaultConfig: smallConfig({ segmentBytes: SIZE * 4 }) }));
    expect(error.code).toBe('SEGLOG_ERR_LOG_CORRUPTION');
    expect(error.message).toContain('recovery point is unknown');
    expect(error.context).toMatchObject({ path: segmentLog('t', 0, 0), position: SIZE, offset: 1, recoveryPoint: null });
    expect(await Promise.all([0, 4, 8].map(async (base) => (await survivor.stat(segmentLog('t', 0, base))).size))).toEqual(sizes);
    expect(survivor.openHandles()).toEqual([]);
  });

  it('an unreadable recovery-point checkpoint with undamaged segments: full scan, only the zero tail may go, noted', async () => {
    const io = await newIo();
    const manager = await open(io, { defaultConfig: smallConfig({ segmentBytes: SIZE * 4 }) });
    const log = await manager.getOrCreateLog('t', 0);
    for (let i = 0; i < 10; i++) await log.appendAsLeader(producerBatch(1, { tag: i }), { leaderEpoch: 0 });
    await log.durable(9);
    await manager.checkpoint();
    const survivor = io.recover('process');
    const file = await survivor.open(RECOVERY);
    await file.pwrite(Buffer.from('garbage\n'), 0);
    await file.close();
    const reopened = await open(survivor, { defaultConfig: smallConfig({ segmentBytes: SIZE * 4 }) });
    expect(reopened.notes.some((n) => n.includes('recovery-point-offset-checkpoint') && n.includes('unknown'))).toBe(true);
    expect(reopened.getLog('t', 0)?.logEndOffset).toBe(10);
    expect(reopened.getLog('t', 0)?.durableOffset).toBe(10);
    await reopened.close();
    expect(survivor.openHandles()).toEqual([]);
  });
});

describe('LogManager: checkpoints', () => {
  it('writes Kafka text: every recovery point, and log starts above the first segment base', async () => {
    const io = await newIo();
    const manager = await open(io);
    await appendRecords(manager, 'b', 0, 2);
    await appendRecords(manager, 'a', 1, 3);
    await appendRecords(manager, 'a', 0, 5);
    for (const log of manager.logs()) await log.flush();
    const a0 = manager.getLog('a', 0);
    a0?.updateHighWatermark(5);
    await a0?.deleteRecords(3);
    await manager.checkpoint();
    expect(await text(io, RECOVERY)).toBe('0\n3\na 0 5\na 1 3\nb 0 2\n');
    expect(await text(io, LOG_START)).toBe('0\n1\na 0 3\n');
    await manager.close();
    const reopened = await open(io);
    expect(reopened.getLog('a', 0)?.logStartOffset).toBe(3);
    expect(reopened.logs().map((l) => `${l.topic}-${l.partition}:${l.logEndOffset}`).sort()).toEqual(['a-0:5', 'a-1:3', 'b-0:2']);
    await reopened.close();
    expect(io.openHandles()).toEqual([]);
  });

  it('the periodic checkpoint runs on its timer', async () => {
    const io = await newIo();
    const manager = await open(io, { checkpointIntervalMs: 20 });
    const last = await appendRecords(manager, 't', 0, 2);
    await manager.getLog('t', 0)?.durable(last);
    for (let i = 0; i < 100 && !(await io.exists(RECOVERY)) ; i++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 60));
    expect(await text(io, RECOVERY)).toBe('0\n1\nt 0 2\n');
    await manager.close();
    expect(io.openHandles()).toEqual([]);
  });
});

describe('LogManager: free-space guard', () => {
  it('refuses appends below the floor (retriable, nothing written) and accepts them after space returns and the interval passes', async () => {
    const io = await newIo();
    const c = clock();
    const manager = await open(io, { minFreeBytes: 100_000, diskCheckIntervalMs: 1000, now: c.fn });
    const log = await manager.getOrCreateLog('t', 0);
    await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    await log.written(0);
    const guard = manager.diskGuard;
    const checks = guard.checks;
    // Shrink the disk to leave 50 000 bytes free: unseen until the next statfs.
    const { availableBytes, totalBytes } = await io.statfs(DATA);
    io.setFaults({ quotaBytes: totalBytes - availableBytes + 50_000 });
    await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    expect(guard.checks).toBe(checks);
    c.now += 1000;
    await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 }); // decided on the old value; starts a statfs
    await guard.idle();
    expect(guard.checks).toBe(checks + 1);
    await log.written(2);
    const size = (await io.stat(segmentLog('t', 0, 0))).size;
    const error = await rejected(log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 }));
    expect(error.code).toBe('SEGLOG_ERR_LOG_DISK_FULL');
    expect((error as unknown as { retriable: boolean }).retriable).toBe(true);
    expect(await rejected(log.appendAsFollower(producerBatch(1)))).toMatchObject({ code: 'SEGLOG_ERR_LOG_DISK_FULL' });
    expect(log.logEndOffset).toBe(3);
    expect((await io.stat(segmentLog('t', 0, 0))).size).toBe(size);
    // Space returns; still refused until a statfs after the interval sees it.
    io.setFaults({});
    c.now += 999;
    expect((await rejected(log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 }))).code).toBe('SEGLOG_ERR_LOG_DISK_FULL');
    expect(guard.checks).toBe(checks + 1);
    c.now += 1;
    expect((await rejected(log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 }))).code).toBe('SEGLOG_ERR_LOG_DISK_FULL');
    await guard.idle();
    expect(guard.checks).toBe(checks + 2);
    expect((await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 })).firstOffset).toBe(3);
    expect(manager.state).toBe('open');
    await manager.close();
    expect(await io.exists(MARKER)).toBe(true);
    expect(io.openHandles()).toEqual([]);
  });

  it('counts bytes accepted since the last statfs against the floor (no statfs per append)', async () => {
    const io = await newIo();
    const c = clock();
    const manager = await open(io, { minFreeBytes: 1000, diskCheckIntervalMs: 1000, now: c.fn });
    const log = await manager.getOrCreateLog('t', 0);
    const { availableBytes, totalBytes } = await io.statfs(DATA);
    io.setFaults({ quotaBytes: totalBytes - availableBytes + 1000 + SIZE * 3 + Math.floor(SIZE / 2) });
    await manager.diskGuard.refresh();
    const checks = manager.diskGuard.checks;
    for (let i = 0; i < 3; i++) await log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    const error = await rejected(log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 }));
    expect(error.code).toBe('SEGLOG_ERR_LOG_DISK_FULL');
    expect(error.context).toMatchObject({ minFreeBytes: 1000, availableBytes: 1000 + Math.floor(SIZE / 2) });
    expect(manager.diskGuard.checks).toBe(checks);
    expect(manager.diskGuard.refusals).toBe(1);
    expect(log.logEndOffset).toBe(3);
    await manager.close();
    expect(io.openHandles()).toEqual([]);
  });
});

describe('LogManager: fail-stop across the directory', () => {
  it('one log going offline takes the directory offline: appends, creates and checkpoints fail fast; no marker', async () => {
    const io = await newIo();
    const manager = await open(io);
    const a = await manager.getOrCreateLog('a', 0);
    const b = await manager.getOrCreateLog('b', 0);
    await b.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    await b.flush();
    await a.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    await a.written(0);
    io.setFaults({ writeEio: { nth: 1, path: `${DATA}/a-0/` } });
    await a.appendAsLeader(producerBatch(1), { leaderEpoch: 0 });
    expect((await rejected(a.written(1))).code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    expect(a.state).toBe('offline');
    expect(manager.state).toBe('offline');
    expect((manager.failureCause as { code?: string }).code).toBe('SEGLOG_ERR_IO_EIO');
    const sizeB = (await io.stat(segmentLog('b', 0, 0))).size;
    expect((await rejected(b.appendAsLeader(producerBatch(1), { leaderEpoch: 0 }))).code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    expect((await rejected(b.appendAsFollower(producerBatch(1)))).code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    expect(b.logEndOffset).toBe(1);
    expect((await io.stat(segmentLog('b', 0, 0))).size).toBe(sizeB);
    expect((await rejected(manager.getOrCreateLog('c', 0))).code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    expect(await io.exists(`${DATA}/c-0`)).toBe(false);
    expect((await rejected(manager.checkpoint())).code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    expect(await io.exists(RECOVERY)).toBe(false);
    // Reads of written data continue.
    expect((await readAll(b)).length).toBe(1);
    await manager.close();
    expect(await io.exists(MARKER)).toBe(false);
    expect(io.openHandles()).toEqual([]);
    io.setFaults({});
    const reopened = await open(io);
    expect(reopened.hadCleanShutdown).toBe(false);
    await reopened.close();
    expect(io.openHandles()).toEqual([]);
  });

  it('a failed checkpoint write takes the directory offline', async () => {
    const io = await newIo();
    const manager = await open(io);
    const log = await manager.getOrCreateLog('t', 0);
    io.setFaults({ syncEio: { nth: 1, path: `${RECOVERY}.tmp` } });
    expect((await rejected(manager.checkpoint())).code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    expect(manager.state).toBe('offline');
    expect((await rejected(log.appendAsLeader(producerBatch(1), { leaderEpoch: 0 }))).code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    await manager.close();
    expect(await io.exists(MARKER)).toBe(false);
    expect(io.openHandles()).toEqual([]);
  });

  it('a failure while closing leaves no marker, rejects close, and still releases every handle', async () => {
    const io = await newIo();
    const manager = await open(io);
    await appendRecords(manager, 't', 0, 2);
    io.setFaults({ syncEio: { nth: 1, path: `${DATA}/t-0/` } });
    expect((await rejected(manager.close())).code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    expect(manager.state).toBe('closed');
    expect(await io.exists(MARKER)).toBe(false);
    expect(io.openHandles()).toEqual([]);
    expect((await rejected(manager.getOrCreateLog('t', 1))).code).toBe('SEGLOG_ERR_LOG_CLOSED');
  });
});

describe('LogManager: deleteLog and directory entries', () => {
  it('deleteLog removes the partition; open finishes interrupted deletions and skips other entries', async () => {
    const io = await newIo();
    const manager = await open(io);
    await appendRecords(manager, 'gone', 0, 2);
    await appendRecords(manager, 'kept', 3, 1);
    await manager.deleteLog('gone', 0);
    expect(manager.getLog('gone', 0)).toBeUndefined();
    expect((await io.readdir(DATA)).filter((n) => n.startsWith('gone'))).toEqual([]);
    expect((await rejected(manager.deleteLog('gone', 0))).code).toBe('SEGLOG_ERR_LOG_UNKNOWN_PARTITION');
    await manager.checkpoint();
    expect(await text(io, RECOVERY)).toBe('0\n1\nkept 3 0\n');
    await manager.close();

    // An interrupted deletion, a future and a stray directory, junk.
    await io.mkdir(`${DATA}/old-1.0123456789abcdef0123456789abcdef-delete`);
    const leftover = await io.open(`${DATA}/old-1.0123456789abcdef0123456789abcdef-delete/00000000000000000000.log`, { create: true });
    await leftover.close();
    await io.mkdir(`${DATA}/kept-4.0123456789abcdef0123456789abcdef-future`);
    await io.mkdir(`${DATA}/kept-5.0123456789abcdef0123456789abcdef-stray`);
    await io.mkdir(`${DATA}/not a partition`);
    const junk = await io.open(`${DATA}/meta.properties`, { create: true });
    await junk.close();
    const reopened = await open(io);
    expect(reopened.logs().map((l) => `${l.topic}-${l.partition}`)).toEqual(['kept-3']);
    expect(await io.exists(`${DATA}/old-1.0123456789abcdef0123456789abcdef-delete`)).toBe(false);
    expect(reopened.skipped.map((s) => s.name).sort()).toEqual([
      'kept-4.0123456789abcdef0123456789abcdef-future',
      'kept-5.0123456789abcdef0123456789abcdef-stray',
      'meta.properties',
      'not a partition',
    ]);
    await reopened.close();
    expect(io.openHandles()).toEqual([]);
  });

  it('concurrent getOrCreateLog calls share one log; topic configs apply; close waits for creations and refuses new ones', async () => {
    const io = await newIo();
    const special = smallConfig({ segmentBytes: SIZE * 2 });
    const manager = await open(io, { topicConfigs: new Map([['s', special]]) });
    const [x, y] = await Promise.all([manager.getOrCreateLog('s', 0), manager.getOrCreateLog('s', 0)]);
    expect(x).toBe(y);
    expect(x.config).toBe(special);
    expect((await manager.getOrCreateLog('other', 0)).config).toBe(manager.defaultConfig);
    // A create racing close: the one started before close is closed by it, one started after is refused.
    const before = manager.getOrCreateLog('racing', 0);
    const closing = manager.close();
    expect((await rejected(manager.getOrCreateLog('late', 0))).code).toBe('SEGLOG_ERR_LOG_CLOSED');
    await closing;
    expect((await before).state).toBe('closed');
    expect(await io.exists(`${DATA}/late-0`)).toBe(false);
    expect(await text(io, RECOVERY)).toBe('0\n3\nother 0 0\nracing 0 0\ns 0 0\n');
    expect(io.openHandles()).toEqual([]);
  });
});
