// Hostile connections against the broker as a child process, so that its RSS
// (/proc/<pid>/status VmRSS) is its own (issue 23 items 4 and 7):
// - 2,000 connections that never speak, go idle after a request, send half a
//   frame, or pipeline requests and stop reading: all closed after
//   --connections-max-idle-ms (never before it), the broker serving another
//   client meanwhile, its RSS bounded while they are open;
// - one 64 MiB Produce request sent slowly (the first 8 MiB in 1-byte writes
//   with TCP_NODELAY, the rest in 64 KiB writes: 64 MiB of 1-byte writes take
//   minutes on loopback) raises the broker's RSS by at most 2× its size
//   while it arrives (measured with the last byte held back; it was ~10–90
//   bytes of RSS per byte received: 1.6 GB after 18 MB in the issue), and by
//   at most 3.5× until it is answered (the tail cache copies appended bytes,
//   pinned until written; kept small here with --tail-cache-bytes).
// Sized by the open-file limit (each connection costs a descriptor here and
// one in the broker); every wait is a generous upper bound, not a speed.

import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { FrameReader, ProtocolWriter, decodeResponse, encodeRequest } from '@seglog/protocol';
import type { RequestBodies } from '@seglog/protocol';
import { Codec, buildBatch } from '@seglog/records';
import { startBrokerChild } from './lib/broker-process.js';
import type { BrokerChild } from './lib/broker-process.js';

const children: BrokerChild[] = [];
const dirs: string[] = [];
const sockets: net.Socket[] = [];

afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const c of children.splice(0)) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function start(args: string[]): Promise<BrokerChild> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-broker-conns-'));
  dirs.push(dir);
  const child = await startBrokerChild(['--data-dir', dir, ...args]);
  children.push(child);
  return child;
}

function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error('no VmRSS');
  return Number(match[1]) * 1024;
}

/** Samples a process's RSS every 50 ms; stop() returns the maximum seen. */
function rssSampler(pid: number): { stop: () => number } {
  let max = rssBytes(pid);
  const timer = setInterval(() => {
    max = Math.max(max, rssBytes(pid));
  }, 50);
  return { stop: () => {
    clearInterval(timer);
    return Math.max(max, rssBytes(pid));
  } };
}

const MiB = 1024 * 1024;

function openFileLimit(): number {
  const match = /Max open files\s+(\d+|unlimited)/.exec(readFileSync('/proc/self/limits', 'utf8'));
  return match === null || match[1] === 'unlimited' ? 1 << 20 : Number(match[1]);
}

function frameOf<N extends keyof RequestBodies>(api: N, version: number, body: RequestBodies[N], correlationId = 1): Buffer {
  const message = encodeRequest(new ProtocolWriter(), { api, apiVersion: version, correlationId, clientId: 'hostile' }, body);
  return Buffer.concat(message.parts as Buffer[]);
}

const API_VERSIONS = (id: number): Buffer => frameOf('API_VERSIONS', 3, { clientSoftwareName: 'hostile', clientSoftwareVersion: '1' }, id);

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => resolve(socket));
    sockets.push(socket);
    socket.once('error', reject);
  });
}

/** Sends `frame` and resolves with the first complete response frame. */
function roundTrip(socket: net.Socket, frame: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const reader = new FrameReader({ maxFrameBytes: 64 * MiB });
    const onData = (chunk: Buffer): void => {
      reader.push(chunk);
      const response = reader.next();
      if (response === null) return;
      socket.off('data', onData);
      resolve(response);
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error('closed before the response')));
    socket.write(frame);
  });
}

/** A client that behaves: creates a topic, produces `count` records and reads them back. Returns ms taken. */
async function healthyClient(port: number, topic: string, count: number): Promise<number> {
  const started = Date.now();
  const socket = await connect(port);
  const created = decodeResponse(await roundTrip(socket, frameOf('CREATE_TOPICS', 4, {
    topics: [{ name: topic, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false,
  })), 'CREATE_TOPICS', 4);
  expect(created.body.topics[0]?.errorCode).toBe(0);
  const records = buildBatch({ records: Array.from({ length: count }, (_, i) => ({ value: Buffer.from(`healthy ${i}`), timestamp: Date.now() })), compression: Codec.none as 0 });
  const produced = decodeResponse(await roundTrip(socket, frameOf('PRODUCE', 9, {
    transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
  })), 'PRODUCE', 9);
  expect(produced.body.responses[0]?.partitionResponses[0]?.errorCode).toBe(0);
  const fetched = decodeResponse(await roundTrip(socket, frameOf('FETCH', 12, {
    clusterId: null, replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [], rackId: '',
  })), 'FETCH', 12);
  expect(fetched.body.responses[0]?.partitions[0]).toMatchObject({ errorCode: 0, highWatermark: count });
  socket.destroy();
  return Date.now() - started;
}

type Kind = 'silent' | 'idle' | 'half' | 'unread';
const KINDS: readonly Kind[] = ['silent', 'idle', 'half', 'unread'];

interface Hostile {
  readonly kind: Kind;
  readonly socket: net.Socket;
  /** A time before the broker's last progress on it: its idle timer cannot run out before lastActive + limit. */
  lastActive: number;
  closedAt: number | null;
}

async function openHostile(port: number, kind: Kind): Promise<Hostile> {
  // Taken before anything the broker could count as progress (accept, the request, its response).
  const before = Date.now();
  const socket = await connect(port);
  const hostile: Hostile = { kind, socket, lastActive: before, closedAt: null };
  socket.on('error', () => undefined);
  socket.on('close', () => {
    hostile.closedAt = Date.now();
  });
  if (kind === 'idle') {
    hostile.lastActive = Date.now();
    await roundTrip(socket, API_VERSIONS(1));
  } else if (kind === 'half') {
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(64 * 1024, 0);
    socket.write(Buffer.concat([prefix, Buffer.alloc(32 * 1024, 7)]));
  } else if (kind === 'unread') {
    socket.pause();
    socket.write(Buffer.concat(Array.from({ length: 20 }, (_, i) => API_VERSIONS(i + 1))));
    hostile.lastActive = Date.now();
  }
  return hostile;
}

async function waitFor(condition: () => boolean, limitMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('broker under hostile connections (child process)', () => {
  it('closes 2,000 silent, idle, half-frame and non-reading connections after the idle limit, serving others with bounded RSS', async () => {
    const IDLE_MS = 5000;
    const limit = openFileLimit();
    // Each connection costs one descriptor here and one in the broker (which inherits this limit).
    const count = Math.min(2000, Math.floor((limit - 500) / 2));
    expect(count, `open-file limit ${limit} is too low for this test`).toBeGreaterThanOrEqual(400);
    const broker = await start(['--connections-max-idle-ms', String(IDLE_MS)]);
    await healthyClient(broker.port, 'warm-up', 100);
    const base = rssBytes(broker.child.pid as number);
    const sampler = rssSampler(broker.child.pid as number);
    const hostiles: Hostile[] = [];
    const openedFrom = Date.now();
    for (let at = 0; at < count; at += 100) {
      hostiles.push(...await Promise.all(Array.from({ length: Math.min(100, count - at) }, (_, i) => openHostile(broker.port, KINDS[(at + i) % 4] as Kind))));
    }
    const openMs = Date.now() - openedFrom;
    const openNow = hostiles.filter((h) => h.closedAt === null).length;
    const healthyMs = await healthyClient(broker.port, 'served-meanwhile', 1000);
    const whileOpen = sampler.stop();

    // Silent, idle and half-frame ones see their close; non-reading ones see it once they read again.
    await waitFor(() => hostiles.every((h) => h.kind === 'unread' || h.closedAt !== null), IDLE_MS + 180_000,
      () => `${hostiles.filter((h) => h.closedAt === null && h.kind !== 'unread').length} connections to close`);
    await new Promise((r) => setTimeout(r, Math.max(0, Math.max(...hostiles.map((h) => h.lastActive)) + IDLE_MS + 1000 - Date.now())));
    for (const h of hostiles) if (h.kind === 'unread') h.socket.resume();
    await waitFor(() => hostiles.every((h) => h.closedAt !== null), 180_000, () => `${hostiles.filter((h) => h.closedAt === null).length} non-reading connections to close`);
    for (const h of hostiles) {
      if (h.kind !== 'unread') expect(h.closedAt as number - h.lastActive, h.kind).toBeGreaterThanOrEqual(IDLE_MS - 5);
    }
    const after = rssBytes(broker.child.pid as number);
    await healthyClient(broker.port, 'served-after', 10);
    const report = {
      connections: count, openFileLimit: limit, openMs, openWhenServing: openNow, healthyMs,
      rssBaseMiB: +(base / MiB).toFixed(1), rssMaxWhileOpenMiB: +(whileOpen / MiB).toFixed(1), rssAfterCloseMiB: +(after / MiB).toFixed(1),
    };
    console.log(`hostile connections: ${JSON.stringify(report)}`);
    // 500 half frames reserve 64 KiB each (32 MiB, half touched); sockets cost a few KiB each.
    expect(whileOpen - base).toBeLessThan(256 * MiB);
  });

  it('a 64 MiB Produce sent in 1-byte writes (the first 8 MiB, or SEGLOG_SLOW_SENDER_ONE_BYTE_MIB) then 64 KiB writes costs the broker at most 2× its size in RSS while it arrives', async () => {
    // The tail cache copies appended bytes (engine memory bounded by --tail-cache-bytes, default 256 MiB):
    // keep it small so that what is measured is the request's cost.
    const broker = await start(['--tail-cache-bytes', String(8 * MiB)]);
    await healthyClient(broker.port, 'warm-up', 100);
    const admin = await connect(broker.port);
    const created = decodeResponse(await roundTrip(admin, frameOf('CREATE_TOPICS', 4, {
      topics: [{ name: 'slow', numPartitions: 64, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false,
    })), 'CREATE_TOPICS', 4);
    expect(created.body.topics[0]?.errorCode).toBe(0);
    admin.destroy();
    // One batch of one ~1 MiB record (max.message.bytes is 1 MiB + 12) for each of 64 partitions, in one request.
    const value = Buffer.alloc(MiB - 600, 0x61);
    const partitionData = Array.from({ length: 64 }, (_, index) => ({ index, records: buildBatch({ records: [{ value, timestamp: Date.now() }], compression: Codec.none as 0 }) }));
    const frame = frameOf('PRODUCE', 9, { transactionalId: null, acks: 1, timeoutMs: 30_000, topicData: [{ name: 'slow', partitionData }] }, 7);
    expect(frame.length).toBeGreaterThan(63 * MiB);
    const pid = broker.child.pid as number;
    await new Promise((r) => setTimeout(r, 500));
    const base = rssBytes(pid);
    const sampler = rssSampler(pid);
    const socket = await connect(broker.port);
    socket.setNoDelay(true);
    const response = roundTrip(socket, Buffer.alloc(0));
    // 8 MiB of 1-byte writes in the suite (a few seconds); the whole request in
    // 1-byte writes with SEGLOG_SLOW_SENDER_ONE_BYTE_MIB=64 (~160 s here:
    // partial growth 0.59x the request, peak until answered 1.59x).
    const ONE_BYTE_PART = Math.min(frame.length, Number(process.env['SEGLOG_SLOW_SENDER_ONE_BYTE_MIB'] ?? 8) * MiB);
    const started = Date.now();
    let sent = 0;
    // All but the last byte: the broker holds one partial frame.
    const last = frame.length - 1;
    while (sent < last) {
      const size = sent < ONE_BYTE_PART ? 1 : 64 * 1024;
      // Up to 1000 writes per turn of the event loop, then let them go out.
      for (let i = 0; i < 1000 && sent < last; i++) {
        const end = Math.min(last, sent + size);
        socket.write(frame.subarray(sent, end));
        sent = end;
      }
      if (socket.writableNeedDrain) await new Promise((r) => socket.once('drain', r));
      else await new Promise((r) => setImmediate(r));
    }
    await new Promise((r) => setTimeout(r, 1000));
    const sendMs = Date.now() - started;
    const partialPeak = sampler.stop();
    const afterSampler = rssSampler(pid);
    socket.write(frame.subarray(last));
    const answer = decodeResponse(await response, 'PRODUCE', 9);
    const peak = Math.max(partialPeak, afterSampler.stop());
    expect(answer.correlationId).toBe(7);
    expect(answer.body.responses[0]?.partitionResponses.map((p) => p.errorCode)).toEqual(Array(64).fill(0));
    const report = {
      requestMiB: +(frame.length / MiB).toFixed(1), oneByteWritesMiB: ONE_BYTE_PART / MiB, sendMs,
      rssBaseMiB: +(base / MiB).toFixed(1), rssPeakPartialMiB: +(partialPeak / MiB).toFixed(1), rssPeakMiB: +(peak / MiB).toFixed(1),
      partialGrowthPerRequestByte: +((partialPeak - base) / frame.length).toFixed(2), growthPerRequestByte: +((peak - base) / frame.length).toFixed(2),
    };
    console.log(`slow sender: ${JSON.stringify(report)}`);
    expect(socket.destroyed).toBe(false);
    expect(partialPeak - base).toBeLessThanOrEqual(2 * frame.length);
    // Until answered: the frame, the tail cache's copies of it (pinned until written) and young-generation
    // garbage (bounded by V8's semi-spaces, ~48 MiB): measured 1.9–2.6×.
    expect(peak - base).toBeLessThanOrEqual(3.5 * frame.length);
  });
});
