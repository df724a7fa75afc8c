// Issue 23 items 4 and 7, in process: connections that never speak, go idle
// after a request, send half a frame (even if they keep trickling bytes), or
// stop reading their responses are closed after connections.max.idle.ms; a
// request being handled (a long poll) is not idleness; the request-memory
// budget (queued.max.request.bytes) pauses readers while spent and returns to
// zero once every connection is gone. Limits are small (300 ms) and waits
// generous (10 s and more), so the assertions do not depend on machine speed.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Broker } from '../src/index.js';
import { batch, createTopic, fetch, produce } from './broker-helpers.js';
import { RawClient } from './raw-client.js';

const IDLE_MS = 300;
/** Upper bound on how long after the limit a close may come (a loaded machine; nothing here should take it). */
const SLACK_MS = 120_000;

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Resolves with the ms from `since` to the socket's close; rejects after `limitMs`. */
function closedWithin(socket: net.Socket, since: number, limitMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still open after ${limitMs} ms`)), limitMs);
    const done = (): void => {
      clearTimeout(timer);
      resolve(Date.now() - since);
    };
    if (socket.destroyed) done();
    else socket.once('close', done);
    socket.on('error', () => undefined);
    socket.resume();
  });
}

async function waitFor(condition: () => boolean, limitMs: number, what: string): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function sizePrefix(size: number): Buffer {
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(size, 0);
  return prefix;
}

describe('connection limits', () => {
  let dir: string;
  let broker: Broker;
  const notices: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-broker-limits-'));
    broker = await Broker.start({
      dataDir: dir, port: 0, autoCreatePartitions: 1, connectionsMaxIdleMs: IDLE_MS, maxRequestBytes: 4 << 20,
      queuedMaxRequestBytes: 4 << 20, log: (line) => notices.push(line),
    });
  });

  afterAll(async () => {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('closes a connection that never speaks, one idle after a request, and one that sent half a frame', async () => {
    // Each `…At` is taken before anything the broker could count as progress, so closing earlier than
    // `…At + limit` would be a bug whatever the machine's speed.
    const silentAt = Date.now();
    const silent = await connect(broker.port);
    const idle = await RawClient.connect(broker.port);
    const idleAt = Date.now();
    await idle.request('API_VERSIONS', 3, { clientSoftwareName: 'limits', clientSoftwareVersion: '1' });
    const halfAt = Date.now();
    const half = await connect(broker.port);
    half.write(Buffer.concat([sizePrefix(1000), Buffer.alloc(500, 1)]));
    const waits = await Promise.all([
      closedWithin(silent, silentAt, IDLE_MS + SLACK_MS),
      closedWithin(idle.socket, idleAt, IDLE_MS + SLACK_MS),
      closedWithin(half, halfAt, IDLE_MS + SLACK_MS),
    ]);
    // Never before the limit (5 ms for clock granularity).
    for (const ms of waits) expect(ms).toBeGreaterThanOrEqual(IDLE_MS - 5);
  });

  it('closes a half-sent request even while its bytes keep trickling in (the limit bounds its arrival)', async () => {
    const since = Date.now();
    const trickle = await connect(broker.port);
    trickle.setNoDelay(true);
    trickle.write(sizePrefix(10_000));
    let sent = 0;
    const timer = setInterval(() => {
      if (!trickle.destroyed) trickle.write(Buffer.alloc(1, sent++ & 0xff));
    }, IDLE_MS / 6);
    try {
      expect(await closedWithin(trickle, since, IDLE_MS + SLACK_MS)).toBeGreaterThanOrEqual(IDLE_MS - 5);
      expect(sent).toBeGreaterThan(0);
    } finally {
      clearInterval(timer);
    }
  });

  it('keeps a connection that makes progress, and one whose request is parked in a long poll longer than the limit', async () => {
    const busy = await RawClient.connect(broker.port);
    await createTopic(busy, 'parked');
    for (let i = 0; i < 8; i++) {
      await busy.request('API_VERSIONS', 3, { clientSoftwareName: 'limits', clientSoftwareVersion: '1' });
      await new Promise((r) => setTimeout(r, IDLE_MS / 3));
    }
    expect(busy.socket.destroyed).toBe(false);
    // A fetch parked for 3× the limit is answered on the same connection.
    const started = Date.now();
    const parked = await busy.request('FETCH', 12, fetch('parked', 0, { maxWaitMs: IDLE_MS * 3, minBytes: 1 }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(IDLE_MS * 3 - 20);
    expect(parked.body.responses[0]?.partitions[0]?.errorCode).toBe(0);
    expect(busy.socket.destroyed).toBe(false);
    busy.close();
  });

  it('closes a client that stops reading while its responses are stuck in the socket', async () => {
    await waitFor(() => broker.stats.connections === 0, SLACK_MS, 'earlier connections to close');
    const setup = await RawClient.connect(broker.port);
    await createTopic(setup, 'big');
    const value = 'v'.repeat(900 * 1024);
    for (let i = 0; i < 8; i++) await setup.request('PRODUCE', 9, produce('big', batch([value])));
    setup.close();
    await waitFor(() => broker.stats.connections === 0, SLACK_MS, 'the setup connection to close');
    const reader = await RawClient.connect(broker.port);
    await waitFor(() => broker.stats.connections === 1, SLACK_MS, 'the broker to accept');
    reader.socket.pause();
    // 40 fetches of ~1 MiB each (partitionMaxBytes): far more than the socket buffers hold.
    const requests = Array.from({ length: 40 }, () => reader.encode('FETCH', 12, fetch('big', 0, { maxBytes: 8 << 20 })));
    for (const r of requests) r.response.catch(() => undefined);
    reader.send(requests.map((r) => r.frame));
    const since = Date.now();
    await waitFor(() => broker.stats.connections === 0, IDLE_MS + SLACK_MS, 'the broker to close the slow reader');
    expect(notices).toEqual([]);
    expect(Date.now() - since).toBeGreaterThanOrEqual(IDLE_MS - 5);
    reader.close();
  });

  it('pauses readers while the request budget is spent, serves them once it is released, and leaks none of it', async () => {
    await waitFor(() => broker.requestMemory.reservedBytes === 0, SLACK_MS, 'earlier connections to release their budget');
    // Two half frames of 3 MiB declared: 4 MiB budget, non-strict (the second overshoots).
    const since = Date.now();
    const holders = [await connect(broker.port), await connect(broker.port)];
    for (const h of holders) h.write(Buffer.concat([sizePrefix(3 << 20), Buffer.alloc(100)]));
    await waitFor(() => broker.requestMemory.reservedBytes === 6 << 20, SLACK_MS, 'both frames to be reserved');
    // A third client's request waits for budget, then is answered once the holders are closed as idle.
    const waiter = await RawClient.connect(broker.port);
    const answered = waiter.request('API_VERSIONS', 3, { clientSoftwareName: 'limits', clientSoftwareVersion: '1' });
    await waitFor(() => broker.requestMemory.waiting === 1, SLACK_MS, 'the third connection to wait for budget');
    expect((await answered).body.errorCode).toBe(0);
    expect(Date.now() - since).toBeGreaterThanOrEqual(IDLE_MS - 5);
    for (const h of holders) await closedWithin(h, since, IDLE_MS + SLACK_MS);
    waiter.close();
    await waitFor(() => broker.stats.connections === 0, SLACK_MS, 'every connection to close');
    expect(broker.requestMemory.reservedBytes).toBe(0);
    expect(broker.requestMemory.waiting).toBe(0);
  });

  it('does not count a wait for request memory as idleness: a request held longer than the limit is answered', async () => {
    const small = await Broker.start({
      dataDir: path.join(dir, 'small-pool'), port: 0, autoCreatePartitions: 1, connectionsMaxIdleMs: IDLE_MS,
      queuedMaxRequestBytes: 1000, log: () => undefined,
    });
    try {
      const poller = await RawClient.connect(small.port);
      await createTopic(poller, 'poll', 40);
      // One long poll over 40 empty partitions: its ~1.4 KB frame holds the whole 1000-byte budget for 3× the limit.
      const poll = fetch('poll', 0, { maxWaitMs: IDLE_MS * 3, minBytes: 1 << 20 });
      const first = poll.topics[0] as (typeof poll.topics)[number];
      const partitions = Array.from({ length: 40 }, (_, partition) => ({ ...(first.partitions[0] as (typeof first.partitions)[number]), partition }));
      const { frame, response: polled } = poller.encode('FETCH', 12, { ...poll, topics: [{ ...first, partitions }] });
      expect(frame.length).toBeGreaterThan(1000);
      const since = Date.now();
      poller.socket.write(frame);
      await waitFor(() => small.requestMemory.reservedBytes > 1000, SLACK_MS, 'the long poll to hold the budget');
      const waiter = await RawClient.connect(small.port);
      const answered = waiter.request('API_VERSIONS', 3, { clientSoftwareName: 'limits', clientSoftwareVersion: '1' });
      await waitFor(() => small.requestMemory.waiting === 1, SLACK_MS, 'the second connection to wait for budget');
      expect((await answered).body.errorCode).toBe(0);
      expect(Date.now() - since).toBeGreaterThanOrEqual(IDLE_MS * 3 - 5);
      expect((await polled).body.responses[0]?.partitions).toHaveLength(40);
      expect(waiter.socket.destroyed).toBe(false);
      waiter.close();
      poller.close();
      await waitFor(() => small.stats.connections === 0, SLACK_MS, 'both connections to close');
      expect(small.requestMemory.reservedBytes).toBe(0);
    } finally {
      await small.stop();
    }
  });
});
