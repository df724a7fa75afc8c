// `pnpm demo`: a short tour of what the codec and the engine do, without
// the broker. It builds Kafka v2 record batches with every codec,
// validates them the way a leader validates a produce request, iterates their
// records, patches offsets in place, restamps one to LogAppendTime, and shows
// that damaged input is rejected with a typed error.
import {
  buildBatch, buildControlBatch, Codec, RecordBatch, RecordCursor, validateBatch, type CodecName,
} from '@seglog/records';
import { capabilities } from '@seglog/native';
import { isSeglogError } from '@seglog/common';
import { NodeIo } from '@seglog/io';
import { Log, LogConfig } from '@seglog/log';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const T0 = 1_700_000_000_000;
const out = (line = ''): void => void process.stdout.write(`${line}\n`);

function values(count: number): Buffer[] {
  return Array.from({ length: count }, (_, i) => Buffer.from(`{"order":${i},"item":"widget-${i % 7}","qty":${(i * 37) % 11}}`));
}

function describe(batch: RecordBatch): string {
  return `offsets ${batch.baseOffset}..${batch.lastOffset}  ${batch.sizeInBytes} B  crc ${batch.crc.toString(16).padStart(8, '0')}` +
    `  ${batch.timestampType}  maxTs ${batch.maxTimestamp}`;
}

function tourCodecs(): void {
  out('1. One batch of 200 JSON records with each codec, validated as a leader would:');
  const records = values(200).map((value, i) => ({ key: Buffer.from(`k${i}`), value, timestamp: T0 + i }));
  const cursor = new RecordCursor();
  for (const name of Object.keys(Codec) as CodecName[]) {
    const buf = buildBatch({ records, compression: Codec[name], baseTimestamp: T0 });
    const summary = validateBatch(buf, { maxMessageBytes: 1_048_588 });
    cursor.open(summary.batch);
    let bytes = 0;
    while (cursor.next()) bytes += cursor.valueLength;
    cursor.close();
    out(`   ${name.padEnd(6)} ${String(buf.length).padStart(6)} B on disk, ${summary.recordsCount} records, ${bytes} value bytes read back`);
  }
}

function tourPatches(): void {
  out('\n2. Offset assignment and LogAppendTime restamping, in place:');
  const buf = buildBatch({ records: values(3).map((value) => ({ value })), baseTimestamp: T0 });
  const batch = new RecordBatch(buf);
  out(`   as produced:        ${describe(batch)}`);
  batch.setLastOffset(41 + batch.lastOffsetDelta);
  batch.setPartitionLeaderEpoch(7);
  out(`   offsets assigned:   ${describe(batch)}  (CRC unchanged: base offset and epoch are outside it)`);
  batch.setMaxTimestamp('LogAppendTime', T0 + 5000);
  out(`   LogAppendTime:      ${describe(batch)}  (CRC recomputed)`);
  const marker = new RecordBatch(buildControlBatch({ type: 'COMMIT', producerId: 1000, producerEpoch: 0, coordinatorEpoch: 7, timestamp: T0, baseOffset: 44 }));
  out(`   a COMMIT marker:    ${describe(marker)}  control=${marker.isControl} transactional=${marker.isTransactional}`);
}

function tourRejections(): void {
  out('\n3. Damaged or oversized input is rejected with a typed error, before anything is stored:');
  const good = buildBatch({ records: values(10).map((value) => ({ value })), baseTimestamp: T0 });
  const cases: Array<[string, Buffer, number]> = [
    ['one flipped payload byte', Buffer.from(good).fill(0x55, 100, 101), 1_048_588],
    ['truncated by 5 bytes', good.subarray(0, good.length - 5), 1_048_588],
    ['larger than maxMessageBytes', good, 200],
  ];
  for (const [what, buf, maxMessageBytes] of cases) {
    try {
      validateBatch(buf, { maxMessageBytes });
      out(`   ${what}: accepted (unexpected!)`);
      process.exitCode = 1;
    } catch (error) {
      if (!isSeglogError(error)) throw error;
      out(`   ${what.padEnd(28)} → ${error.code} (Kafka ${error.kafka})`);
    }
  }
}

async function openLog(io: NodeIo, dir: string, config: LogConfig, recoveryPoint: number, clean: boolean): Promise<Log> {
  return Log.open(io, dir, config, { topic: 'demo', partition: 0, recoveryPoint, logStartOffset: 0, hadCleanShutdown: clean });
}

async function readAll(log: Log): Promise<{ records: number; batches: number; first: string }> {
  let offset = log.logStartOffset;
  let records = 0;
  let batches = 0;
  let first = '';
  const cursor = new RecordCursor();
  while (offset < log.logEndOffset) {
    const plan = await log.read(offset, 64 * 1024, {});
    const bytes = await plan.toBuffer();
    plan.release();
    for (let position = 0; position < bytes.length;) {
      const batch = new RecordBatch(bytes, position);
      cursor.open(batch);
      while (cursor.next()) {
        if (cursor.offset >= offset) records++;
        if (first === '' && cursor.value !== null) first = cursor.value.toString();
      }
      cursor.close();
      batches++;
      position += batch.sizeInBytes;
    }
    offset = plan.nextOffset;
  }
  return { records, batches, first };
}

async function tourLog(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-demo-'));
  out(`\n4. A log on disk (${dir}): append, read back, close, reopen, crash-free recovery:`);
  const io = new NodeIo();
  const config = new LogConfig({ segmentBytes: 64 * 1024, indexIntervalBytes: 4096 });
  try {
    const log = await openLog(io, dir, config, 0, false);
    let last = -1;
    for (let b = 0; b < 40; b++) {
      const batch = buildBatch({ records: values(50).map((value, i) => ({ value, timestamp: T0 + b * 50 + i })), baseTimestamp: T0 });
      last = (await log.appendAsLeader(batch, { leaderEpoch: 0 })).lastOffset;
    }
    await log.durable(last);
    out(`   appended 40 batches × 50 records: offsets 0..${last}, durable up to ${log.durableOffset}, ${log.numberOfSegments} segments`);
    const before = await readAll(log);
    out(`   read back ${before.records} records in ${before.batches} batches; first value ${before.first}`);
    await log.close();
    const files = readdirSync(path.join(dir)).sort();
    out(`   on disk: ${files.map((f) => `${f} (${statSync(path.join(dir, f)).size} B)`).join(', ')}`);
    const reopened = await openLog(io, dir, config, 0, false);
    const after = await readAll(reopened);
    out(`   reopened with full recovery: log end offset ${reopened.logEndOffset}, ${after.records} records, identical: ${after.records === before.records && after.first === before.first}`);
    const hit = await reopened.offsetForTimestamp(T0 + 1234);
    out(`   first offset with timestamp ≥ T0+1234: ${hit?.offset ?? 'none'}`);
    await reopened.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

out('seglog demo — the record codec and the log engine, without the broker (pnpm start runs the broker)');
out(`native addon: ${capabilities.loaded ? `loaded (crc32c ${capabilities.crc32cHardware ? 'SSE4.2' : 'software'}, fallocate ${capabilities.fallocate}, sendfile ${capabilities.sendfile})` : `not loaded: ${capabilities.reason}`}\n`);
tourCodecs();
tourPatches();
tourRejections();
await tourLog();
out("\nNext: `pnpm test` runs the suite; `pnpm bench records`, `pnpm bench io`, `pnpm bench log` measure it.");
