// The main job until the reference broker exists: a short tour of what
// seglog does so far. It builds Kafka v2 record batches with every codec,
// validates them the way a leader validates a produce request, iterates their
// records, patches offsets in place, restamps one to LogAppendTime, and shows
// that damaged input is rejected with a typed error.
import {
  buildBatch, buildControlBatch, Codec, RecordBatch, RecordCursor, validateBatch, type CodecName,
} from '@seglog/records';
import { capabilities } from '@seglog/native';
import { isSeglogError } from '@seglog/common';

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

out('seglog demo — the record batch codec (the reference broker becomes the main job later)');
out(`native addon: ${capabilities.loaded ? `loaded (crc32c ${capabilities.crc32cHardware ? 'SSE4.2' : 'software'}, fallocate ${capabilities.fallocate}, sendfile ${capabilities.sendfile})` : `not loaded: ${capabilities.reason}`}\n`);
tourCodecs();
tourPatches();
tourRejections();
out('\nNext: `pnpm test` runs the suite; `pnpm bench records` measures the codec.');
