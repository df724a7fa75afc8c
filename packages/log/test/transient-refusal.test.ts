// Issue 23 item 8: a failure that happens before any byte of a batch is at
// risk (creating a partition directory or a new segment's files: EMFILE,
// ENFILE, ENOSPC) is a retriable refusal, SEGLOG_ERR_LOG_RESOURCE_UNAVAILABLE
// (Kafka NOT_ENOUGH_REPLICAS), and the log and the data directory stay open
// and work once the cause is gone. Before the fix it took the whole
// directory offline until restart. A write or sync failure after bytes are
// at risk stays fail-stop.
import { SimIo } from '@seglog/io';
import { describe, expect, it } from 'vitest';
import { LogManager } from '../src/log-manager.js';
import type { LogManagerOptions } from '../src/log-manager.js';
import type { Log } from '../src/log/log.js';
import { thrown } from './helpers.js';
import { clock, config, producerBatch, readAll } from './log-helpers.js';

const DATA = '/data';

async function machine(): Promise<SimIo> {
  const io = new SimIo({ seed: 3 });
  await io.mkdir(DATA);
  await io.fsyncDir('/');
  return io;
}

function open(io: SimIo, options: Partial<LogManagerOptions> = {}): Promise<LogManager> {
  return LogManager.open(io, DATA, { defaultConfig: config({ segmentIndexBytes: 4096, segmentBytes: 1024 }), minFreeBytes: 0, checkpointIntervalMs: 0, ...options });
}

async function refusal(promise: Promise<unknown>): Promise<{ code: string; retriable: boolean; kafka: string }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code?: unknown; retriable?: unknown; kafka?: unknown };
    return { code: String(e.code), retriable: e.retriable === true, kafka: String(e.kafka) };
  }
  return { code: 'resolved', retriable: false, kafka: '' };
}

const REFUSED = { code: 'SEGLOG_ERR_LOG_RESOURCE_UNAVAILABLE', retriable: true, kafka: 'NOT_ENOUGH_REPLICAS' };

async function appendAndWait(log: Log, tag: number): Promise<number> {
  const result = await log.appendAsLeader(producerBatch(2, { tag, valueBytes: 100 }), { leaderEpoch: 0 });
  await log.durable(result.lastOffset);
  return result.lastOffset;
}

describe('transient resource failures before any byte is at risk are retriable refusals', () => {
  // Every open of the new partition's creation, one at a time (n = 1, 2, …
  // until creation no longer reaches n).
  it('EMFILE while auto-creating a topic: refused, the directory stays open, the retry works', async () => {
    let n = 1;
    for (; n < 50; n++) {
      const io = await machine();
      const manager = await open(io);
      const existing = await manager.getOrCreateLog('old', 0);
      await appendAndWait(existing, 1);
      io.setFaults({ openEmfile: { nth: n, path: '/data/new-0' } });
      const first = await refusal(manager.getOrCreateLog('new', 0));
      const fired = io.injected.openEmfile > 0;
      io.setFaults({});
      if (!fired) {
        expect(first.code).toBe('resolved');
        await manager.close();
        break;
      }
      expect(first, `open #${n} of the creation failed with EMFILE`).toEqual(REFUSED);
      expect(manager.state).toBe('open');
      // The directory keeps working: the other log, and the same create once descriptors are back.
      await appendAndWait(existing, 2);
      const created = await manager.getOrCreateLog('new', 0);
      expect(created.state).toBe('open');
      await appendAndWait(created, 3);
      expect((await readAll(created)).length).toBe(2);
      await manager.close();
      expect(io.openHandles()).toEqual([]);
      // The clean close wrote the marker: nothing about the refusal made the directory dirty.
      expect(await io.exists(`${DATA}/.kafka_cleanshutdown`)).toBe(true);
    }
    expect(n, 'the creation path has a bounded number of opens').toBeGreaterThan(2);
  });

  it('ENOSPC while auto-creating a topic (another process filled the disk): refused, works once space returns', async () => {
    const io = await machine();
    const manager = await open(io);
    const existing = await manager.getOrCreateLog('old', 0);
    await appendAndWait(existing, 1);
    io.setFaults({ quotaBytes: 0 });
    expect(await refusal(manager.getOrCreateLog('new', 0))).toEqual(REFUSED);
    expect(io.injected.nospc).toBeGreaterThan(0);
    expect(manager.state).toBe('open');
    expect(existing.state).toBe('open');
    io.setFaults({});
    const created = await manager.getOrCreateLog('new', 0);
    await appendAndWait(created, 2);
    await appendAndWait(existing, 3);
    await manager.close();
    expect(await io.exists(`${DATA}/.kafka_cleanshutdown`)).toBe(true);
  });

  it('EMFILE while rolling to a new segment: the append is refused, the old segment stays active, the retry rolls', async () => {
    for (const path of [/\.log$/, /\.index$/, /\.timeindex$/]) {
      const io = await machine();
      const manager = await open(io);
      const log = await manager.getOrCreateLog('t', 0);
      // 1 KiB segments: a few 2 × 100 B batches fill one.
      let last = -1;
      let refused = 0;
      while (log.numberOfSegments === 1 && last < 20) {
        io.setFaults({ openEmfile: { nth: 1, persistent: true, path } });
        const outcome = await refusal(appendAndWait(log, last + 1));
        io.setFaults({});
        if (outcome.code === 'resolved') {
          last = log.logEndOffset - 1;
          continue;
        }
        expect(outcome, `roll with EMFILE on ${String(path)}`).toEqual(REFUSED);
        refused++;
        expect(log.state).toBe('open');
        expect(manager.state).toBe('open');
        expect(log.numberOfSegments).toBe(1);
        // Descriptors are back: the same append rolls and is acknowledged.
        last = await appendAndWait(log, last + 1);
        expect(log.numberOfSegments).toBe(2);
      }
      expect(log.numberOfSegments, String(path)).toBe(2);
      expect(refused, String(path)).toBe(1);
      const records = await readAll(log);
      expect(records.map(([offset]) => offset)).toEqual([...Array(last + 1).keys()]);
      await manager.close();
      expect(io.openHandles()).toEqual([]);
      // A clean reopen sees every acknowledged record and no leftover file of the refused roll.
      const again = await open(io);
      const reopened = again.getLog('t', 0) as Log;
      expect(reopened.logEndOffset).toBe(last + 1);
      expect(await readAll(reopened)).toEqual(records);
      await again.close();
    }
  });

  it('ENOSPC while growing a reservation (another process took the space after statfs): refused, the retry grows', async () => {
    let armed = false;
    const io: SimIo = new SimIo({
      seed: 3,
      // The disk fills between the reservation's statfs and its zero fill.
      onCrashPoint: (point) => {
        if (armed && point.op === 'fallocate') {
          armed = false;
          io.setFaults({ quotaBytes: 0 });
        }
      },
    });
    await io.mkdir(DATA);
    await io.fsyncDir('/');
    const manager = await LogManager.open(io, DATA, {
      defaultConfig: config({ segmentIndexBytes: 4096, segmentBytes: 1024 * 1024, preallocate: true, minFreeBytes: 0 }), minFreeBytes: 0, checkpointIntervalMs: 0,
    });
    const log = await manager.getOrCreateLog('t', 0);
    armed = true;
    const outcome = await refusal(appendAndWait(log, 0));
    expect(io.injected.nospc).toBe(1);
    expect(outcome).toEqual(REFUSED);
    expect(log.state).toBe('open');
    expect(manager.state).toBe('open');
    io.setFaults({});
    const last = await appendAndWait(log, 1);
    expect(last).toBe(1);
    expect((await readAll(log)).map(([offset]) => offset)).toEqual([0, 1]);
    await manager.close();
    expect(io.openHandles()).toEqual([]);
  });

  it('an EMFILE storm (every open fails): rolls and checkpoints are refused, appends into the active segment go on', async () => {
    const io = await machine();
    const manager = await open(io);
    const log = await manager.getOrCreateLog('t', 0);
    await appendAndWait(log, 0);
    io.setFaults({ openEmfile: { nth: 1, persistent: true, path: '/' } });
    const outcomes = new Set<string>();
    let last = 1;
    // Appends into the active segment need no open; the one that rolls (snapshot, new files) is refused.
    for (let i = 0; i < 20; i++) {
      const outcome = await refusal(appendAndWait(log, 10 + i));
      outcomes.add(outcome.code);
      if (outcome.code === 'resolved') last = log.logEndOffset - 1;
      else expect(outcome).toEqual(REFUSED);
    }
    expect([...outcomes].sort()).toEqual(['SEGLOG_ERR_LOG_RESOURCE_UNAVAILABLE', 'resolved']);
    // The periodic checkpoint (tmp file) is refused too, without taking the directory offline.
    expect(await refusal(manager.checkpoint())).toEqual(REFUSED);
    expect(io.injected.openEmfile).toBeGreaterThan(1);
    expect(log.state).toBe('open');
    expect(manager.state).toBe('open');
    // Descriptors are back: the roll and the checkpoint go through.
    io.setFaults({});
    last = await appendAndWait(log, 99);
    expect(log.numberOfSegments).toBe(2);
    await manager.checkpoint();
    expect((await readAll(log)).map(([offset]) => offset)).toEqual([...Array(last + 1).keys()]);
    await manager.close();
    expect(io.openHandles()).toEqual([]);
    expect(await io.exists(`${DATA}/.kafka_cleanshutdown`)).toBe(true);
  });

  it('EMFILE for the O_DIRECT handle of a new segment: that segment is written buffered', async () => {
    const io = await machine();
    const manager = await open(io, { defaultConfig: config({ segmentIndexBytes: 4096, segmentBytes: 1024, writeMode: 'direct' }) });
    const log = await manager.getOrCreateLog('t', 0);
    expect(log.writeMode).toBe('direct');
    let last = -1;
    // The roll opens the new .log twice: Segment.create, then the O_DIRECT handle (the 2nd fails).
    io.setFaults({ openEmfile: { nth: 2, path: /\.log$/ } });
    while (log.numberOfSegments === 1 && last < 40) last = await appendAndWait(log, last + 1);
    expect(io.injected.openEmfile).toBe(1);
    expect(log.state).toBe('open');
    expect(log.writeMode).toBe('buffered');
    expect(log.metrics.directFallbacks).toBe(1);
    io.setFaults({});
    last = await appendAndWait(log, last + 1);
    expect((await readAll(log)).map(([offset]) => offset)).toEqual([...Array(last + 1).keys()]);
    await manager.close();
    expect(io.openHandles()).toEqual([]);
  });

  it('a data write that runs out of space (bytes at risk) stays fail-stop', async () => {
    const io = await machine();
    const manager = await open(io);
    const log = await manager.getOrCreateLog('t', 0);
    await appendAndWait(log, 0);
    const { availableBytes } = await io.statfs(DATA);
    const used = (await io.statfs(DATA)).totalBytes - availableBytes;
    io.setFaults({ quotaBytes: used + 50 });
    const outcome = await refusal(appendAndWait(log, 1));
    expect(outcome.code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    expect(log.state).toBe('offline');
    expect(manager.state).toBe('offline');
    await manager.close();
  });
});

describe('every offline transition is reported once, with its cause', () => {
  it('a log write failure: one notice naming the partition and the I/O error; refusals report nothing', async () => {
    const io = await machine();
    const notices: Array<{ partition: string | null; message: string }> = [];
    const manager = await open(io, { onOffline: (n) => notices.push({ partition: n.partition, message: n.message }) });
    const a = await manager.getOrCreateLog('a', 0);
    const b = await manager.getOrCreateLog('b', 0);
    await appendAndWait(a, 0);
    // A retriable refusal is not an offline transition.
    io.setFaults({ quotaBytes: 0 });
    expect(await refusal(manager.getOrCreateLog('c', 0))).toEqual(REFUSED);
    expect(notices).toEqual([]);
    io.setFaults({ writeEio: { nth: 1, persistent: true, path: '/data/a-0/' } });
    expect((await refusal(appendAndWait(a, 1))).code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    // The other log goes offline with its directory; still one notice.
    expect(b.state).toBe('offline');
    expect((await refusal(appendAndWait(b, 2))).code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    expect(notices).toHaveLength(1);
    expect(notices[0]?.partition).toBe('a-0');
    expect(notices[0]?.message).toContain('data directory /data is OFFLINE (first failure in partition a-0)');
    expect(notices[0]?.message).toContain('SEGLOG_ERR_IO_EIO');
    await manager.close();
    expect(notices).toHaveLength(1);
  });

  it('a checkpoint write failure: one notice without a partition', async () => {
    const io = await machine();
    const notices: Array<{ partition: string | null; message: string }> = [];
    const manager = await open(io, { onOffline: (n) => notices.push({ partition: n.partition, message: n.message }) });
    const log = await manager.getOrCreateLog('a', 0);
    await appendAndWait(log, 0);
    io.setFaults({ syncEio: { nth: 1, path: /recovery-point-offset-checkpoint/ } });
    expect((await refusal(manager.checkpoint())).code).toBe('SEGLOG_ERR_LOG_OFFLINE');
    expect(log.state).toBe('offline');
    expect(notices).toHaveLength(1);
    expect(notices[0]?.partition).toBeNull();
    expect(notices[0]?.message).toMatch(/^seglog: data directory \/data is OFFLINE: SEGLOG_ERR_IO_EIO: /);
    await manager.close();
  });
});

describe('retriable refusals are reported, rate-limited', () => {
  it('the first at once, then one per interval with the count suppressed in between', async () => {
    const io = await machine();
    const c = clock();
    const notices: Array<{ partition: string | null; suppressed: number; message: string }> = [];
    const manager = await open(io, { now: c.fn, refusalNoticeIntervalMs: 1000, onRefusal: (n) => notices.push({ partition: n.partition, suppressed: n.suppressed, message: n.message }) });
    io.setFaults({ openEmfile: { nth: 1, persistent: true, path: '/' } });
    for (let i = 0; i < 5; i++) expect(await refusal(manager.getOrCreateLog('new', 0))).toEqual(REFUSED);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ partition: 'new-0', suppressed: 0 });
    expect(notices[0]?.message).toContain('seglog: data directory /data refused a write to new-0 (retriable, nothing written): SEGLOG_ERR_LOG_RESOURCE_UNAVAILABLE');
    expect(notices[0]?.message).toContain('SEGLOG_ERR_IO_TOO_MANY_FILES');
    c.now += 1000;
    expect(await refusal(manager.checkpoint())).toEqual(REFUSED);
    expect(notices).toHaveLength(2);
    expect(notices[1]).toMatchObject({ partition: null, suppressed: 4 });
    expect(notices[1]?.message).toContain('[4 more refusals since the last notice]');
    io.setFaults({});
    expect(manager.state).toBe('open');
    await manager.close();
  });
});

describe('the leader-epoch checkpoint at an epoch change', () => {
  // Written before the first batch of the new epoch: nothing of the batch is at risk yet.
  for (const fault of ['openEmfile', 'nospc'] as const) {
    it(`${fault === 'openEmfile' ? 'EMFILE' : 'ENOSPC'} writing it refuses the append; the log stays open and the retry writes it`, async () => {
      const io = await machine();
      const manager = await open(io);
      const log = await manager.getOrCreateLog('t', 0);
      await appendAndWait(log, 1);
      const tmp = `${DATA}/t-0/leader-epoch-checkpoint.tmp`;
      if (fault === 'openEmfile') {
        io.setFaults({ openEmfile: { nth: 1, path: tmp } });
      } else {
        const stat = await io.statfs(DATA);
        io.setFaults({ quotaBytes: stat.totalBytes - stat.availableBytes });
      }
      const first = await refusal(log.appendAsLeader(producerBatch(2, { tag: 2, valueBytes: 100 }), { leaderEpoch: 1 }));
      io.setFaults({});
      expect(first).toEqual(REFUSED);
      expect(log.state).toBe('open');
      expect(manager.state).toBe('open');
      expect(log.logEndOffset).toBe(2);
      const retried = await log.appendAsLeader(producerBatch(2, { tag: 2, valueBytes: 100 }), { leaderEpoch: 1 });
      await log.durable(retried.lastOffset);
      expect(retried.firstOffset).toBe(2);
      expect((await io.readFile(`${DATA}/t-0/leader-epoch-checkpoint`)).toString('utf8')).toBe('0\n2\n0 0\n1 2\n');
      await manager.close();
      // A later power loss keeps both epochs and every record.
      const survivor = io.recover('power-clean');
      const reopened = await open(survivor);
      const back = await reopened.getOrCreateLog('t', 0);
      expect(back.epochCache.epochEntries()).toEqual([{ epoch: 0, startOffset: 0 }, { epoch: 1, startOffset: 2 }]);
      expect((await readAll(back)).length).toBe(4);
      await reopened.close();
    });
  }
});

describe('the free-space floor', () => {
  it('refuses with a message that does not contradict itself, in human sizes', async () => {
    const MiB = 1024 * 1024;
    const io = await machine();
    const manager = await open(io, { minFreeBytes: 64 * MiB, diskCheckIntervalMs: 0 });
    const log = await manager.getOrCreateLog('t', 0);
    // The case: 1000 B above the 64 MiB floor, and an append of several KiB.
    const stat = await io.statfs(DATA);
    io.setFaults({ quotaBytes: stat.totalBytes - stat.availableBytes + 64 * MiB + 1000 });
    await manager.diskGuard.refresh();
    const available = manager.diskGuard.availableBytes;
    expect(available).toBe(64 * MiB + 1000);
    const error = thrown(() => log.tryAppendAsLeader(producerBatch(40, { valueBytes: 200 }), { leaderEpoch: 0 }));
    expect(error.code).toBe('SEGLOG_ERR_LOG_DISK_FULL');
    const message = error.message;
    // Before: "has 67109864 bytes available, below the floor of 67108864" (available is above the floor).
    expect(message).toMatch(/accepting [\d.]+ KiB would leave 6\d(\.\d)? MiB \(\d+ B\) free, below the floor of 64 MiB \(67108864 B\) \(64 MiB \(67109864 B\) available/);
    const left = Number(/leave [\d.]+ MiB \((\d+) B\)/.exec(message)?.[1]);
    expect(left).toBeLessThan(64 * MiB);
    expect(error.context).toMatchObject({ minFreeBytes: 64 * MiB, availableBytes: available });
    expect(log.state).toBe('open');
    io.setFaults({});
    await manager.close();
  });
});
