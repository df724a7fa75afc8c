// The broker across restarts, as a child process on a random loopback port:
// - a graceful stop (SIGTERM → exit 0, clean-shutdown marker) and a start on
//   the same data directory lose nothing, and producer ids are not reused;
// - with --sync-on-ack, a SIGKILL while kafkajs producers are sending with
//   acks=-1 loses no acknowledged record: after the restart (recovery without
//   the marker) every acknowledged record is at its acknowledged offset, once.

import { afterEach, describe, expect, it } from 'vitest';
import { CompressionTypes } from 'kafkajs';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PRODUCER_ID_FILE, parseProducerIdFile } from '@seglog/broker';
import { consumeAll, kafkaClient } from './lib/broker-kafkajs.js';
import { startBrokerChild } from './lib/broker-process.js';
import type { BrokerChild } from './lib/broker-process.js';

const children: BrokerChild[] = [];
const dirs: string[] = [];

async function start(args: string[]): Promise<BrokerChild> {
  const child = await startBrokerChild(args);
  children.push(child);
  return child;
}

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-broker-restart-'));
  dirs.push(dir);
  return dir;
}

/** The checked next id of `<dataDir>/broker-producer-id`. */
function nextProducerId(dataDir: string): number {
  const content = parseProducerIdFile(readFileSync(path.join(dataDir, PRODUCER_ID_FILE)));
  if (content.kind !== 'ok') throw new Error(`${PRODUCER_ID_FILE}: ${content.reason}`);
  return content.next;
}

afterEach(() => {
  for (const c of children.splice(0)) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('broker restarts', () => {
  it('a graceful stop and a start on the same data directory lose nothing and reuse no producer id', async () => {
    const dataDir = tempDir();
    const first = await start(['--data-dir', dataDir]);
    const kafka = kafkaClient(first.port);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const values: string[] = [];
    for (let round = 0; round < 10; round++) {
      const messages = Array.from({ length: 30 }, (_, i) => ({ key: `k${round}-${i}`, value: `restart ${round}/${i} ${'x'.repeat(i * 13)}` }));
      await producer.send({ topic: 'restart', acks: -1, compression: CompressionTypes.GZIP, messages });
      for (const m of messages) values.push(m.value);
    }
    await producer.disconnect();
    const idsBefore = nextProducerId(dataDir);
    first.child.kill('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(path.join(dataDir, '.kafka_cleanshutdown'))).toBe(true);

    const second = await start(['--data-dir', dataDir]);
    const kafka2 = kafkaClient(second.port);
    const got = await consumeAll(kafka2, 'restart');
    expect(got.map((m) => m.value?.toString())).toEqual(values);
    expect(got.map((m) => m.offset)).toEqual(values.map((_, i) => i));
    // A new idempotent producer gets an id above every id the first broker reserved.
    const producer2 = kafka2.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer2.connect();
    await producer2.send({ topic: 'restart', acks: -1, messages: [{ value: 'after restart' }] });
    await producer2.disconnect();
    expect(nextProducerId(dataDir)).toBeGreaterThan(idsBefore);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  });

  it('SIGKILL under acks=-1 load with --sync-on-ack loses no acknowledged record', async () => {
    const dataDir = tempDir();
    const first = await start(['--data-dir', dataDir, '--sync-on-ack']);
    const kafka = kafkaClient(first.port);
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'kill9', numPartitions: 1 }] });
    await admin.disconnect();
    const acked = new Map<number, string>();
    let stop = false;
    const loop = async (worker: number): Promise<void> => {
      const producer = kafkaClient(first.port, `kill9-${worker}`).producer({ retry: { retries: 0 } });
      await producer.connect();
      for (let round = 0; !stop; round++) {
        const messages = Array.from({ length: 20 }, (_, i) => ({ value: `w${worker}-r${round}-m${i}` }));
        try {
          const meta = await producer.send({ topic: 'kill9', acks: -1, compression: round % 2 === 0 ? CompressionTypes.None : CompressionTypes.GZIP, messages });
          const base = Number(meta[0]?.baseOffset);
          messages.forEach((m, i) => acked.set(base + i, m.value));
        } catch {
          break;
        }
      }
      await producer.disconnect().catch(() => undefined);
    };
    const workers = [0, 1, 2, 3].map((w) => loop(w));
    const deadline = Date.now() + 180_000; // a hang guard: the loop ends at 2000 acknowledged records
    while (acked.size < 2000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    stop = true;
    await Promise.all(workers);
    expect(acked.size).toBeGreaterThanOrEqual(100);
    expect(existsSync(path.join(dataDir, '.kafka_cleanshutdown'))).toBe(false);

    const second = await start(['--data-dir', dataDir, '--sync-on-ack']);
    const got = await consumeAll(kafkaClient(second.port), 'kill9');
    const byOffset = new Map(got.map((m) => [m.offset, m.value?.toString()]));
    const missing = [...acked].filter(([offset, value]) => byOffset.get(offset) !== value);
    expect(missing).toEqual([]);
    const counts = new Map<string, number>();
    for (const m of got) counts.set(m.value?.toString() ?? '', (counts.get(m.value?.toString() ?? '') ?? 0) + 1);
    expect([...acked.values()].filter((v) => counts.get(v) !== 1)).toEqual([]);
    process.stdout.write(`kill -9: ${acked.size} acknowledged records, ${got.length} present after recovery\n`);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  });
});
