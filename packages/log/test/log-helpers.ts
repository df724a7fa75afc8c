// Helpers for the Segment/Log tests (not a test file itself).

import { SimIo } from '@seglog/io';
import type { Io } from '@seglog/io';
import { buildBatch, RecordBatch, splitBatches } from '@seglog/records';
import { Log } from '../src/log/log.js';
import type { LogOpenOptions } from '../src/log/log.js';
import { LogConfig } from '../src/log-config.js';
import type { LogConfigValues } from '../src/log-config.js';

export const DIR = '/data/t-0';
export const T0 = 1_700_000_000_000;

/** A producer batch (base offset 0) with `count` records of `valueBytes` bytes, timestamps ts, ts+1, … */
export function producerBatch(count: number, options: { valueBytes?: number; timestamp?: number; tag?: number } = {}): Buffer {
  const valueBytes = options.valueBytes ?? 8;
  const timestamp = options.timestamp ?? T0;
  const tag = options.tag ?? 0;
  const records = [];
  for (let i = 0; i < count; i++) {
    const value = Buffer.alloc(valueBytes, (tag + i) & 0xff);
    if (valueBytes >= 4) value.writeUInt32BE((tag * 1000 + i) >>> 0, 0);
    records.push({ value, timestamp: timestamp + i });
  }
  return buildBatch({ records });
}

export function config(overrides: Partial<LogConfigValues> = {}): LogConfig {
  return new LogConfig({ retentionMs: -1, ...overrides });
}

export interface Clock {
  now: number;
  readonly fn: () => number;
}

export function clock(start = T0): Clock {
  const c = { now: start, fn: () => c.now };
  return c;
}

export async function openLog(io: Io, cfg: LogConfig, options: Partial<LogOpenOptions> = {}): Promise<Log> {
  return Log.open(io, DIR, cfg, {
    topic: 't', partition: 0, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: true, ...options,
  });
}

/** A SimIo whose /data directory exists durably. */
export async function newIo(options: ConstructorParameters<typeof SimIo>[0] = {}): Promise<SimIo> {
  const io = new SimIo(options);
  await io.mkdir('/data');
  await io.fsyncDir('/');
  return io;
}

/** Reads everything from `from` to the written offset, batch by batch: [offset, value] per record. */
export async function readAll(log: Log, from = log.logStartOffset, maxBytes = 1 << 20): Promise<Array<[number, string]>> {
  const out: Array<[number, string]> = [];
  let offset = from;
  for (;;) {
    const plan = await log.read(offset, maxBytes);
    if (plan.isEmpty) {
      await plan.release();
      return out;
    }
    const bytes = await plan.toBuffer();
    await plan.release();
    for (const batch of splitBatches(bytes)) {
      if (!batch.isValid()) throw new Error(`invalid CRC at ${batch.baseOffset}`);
      for (const record of batch.toRecords()) if (record.offset >= offset) out.push([record.offset, record.value?.toString('hex') ?? '']);
    }
    offset = plan.nextOffset;
  }
}

/** The batches of a .log file. */
export async function fileBatches(io: Io, path: string): Promise<RecordBatch[]> {
  return splitBatches(await io.readFile(path));
}

export function segmentPath(base: number, suffix: string): string {
  return `${DIR}/${String(base).padStart(20, '0')}${suffix}`;
}

/**
 * A log of `batches` producer batches (`count` records of `valueBytes` B each) on a new SimIo, flushed,
 * closed and reopened cleanly: its tail cache is empty, so every read goes to the files.
 */
export async function reopenedLog(segmentBytes: number, batches: number, count: number, valueBytes = 100): Promise<Log> {
  const io = await newIo();
  const cfg = config({ segmentBytes });
  const log = await openLog(io, cfg);
  for (let i = 0; i < batches; i++) await log.appendAsLeader(producerBatch(count, { valueBytes, tag: i }));
  await log.flush();
  await log.close();
  return openLog(io, cfg, { hadCleanShutdown: true });
}
