// A segment directory written by seglog is Kafka's format byte for byte: the
// fixture batches appended verbatim give a .log that is their concatenation,
// and the .index/.timeindex entries are the 8- and 12-byte values the rules
// of §16 predict.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RecordBatch } from '@seglog/records';
import { describe, expect, it } from 'vitest';
import { config, newIo, openLog, segmentPath } from './log-helpers.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const fixture = JSON.parse(readFileSync(path.resolve(repoRoot, 'test/fixtures/kafka-v2-vectors.json'), 'utf8')) as {
  batches: { name: string; hex: string }[];
};

function vector(name: string): Buffer {
  const found = fixture.batches.find((b) => b.name === name);
  if (found === undefined) throw new Error(`no fixture batch ${name}`);
  return Buffer.from(found.hex, 'hex');
}

describe('Kafka format', () => {
  it('writes the fixture batches verbatim with the expected index entries', async () => {
    const io = await newIo();
    const log = await openLog(io, config({ indexIntervalBytes: 1 }));
    const single = vector('single-record');
    const three = vector('three-records-with-header');
    new RecordBatch(three).setBaseOffset(1);
    const marker = vector('commit-marker');
    expect(new RecordBatch(three).isValid()).toBe(true);
    for (const batch of [single, three, marker]) await log.appendAsFollower(Buffer.from(batch));
    expect(log.logEndOffset).toBe(11);
    await log.close();
    expect((await io.readFile(segmentPath(0, '.log'))).equals(Buffer.concat([single, three, marker]))).toBe(true);
    // Batch 2 (last offset 3) starts at 72, the marker (offset 10) at 166: more than 1 byte since the last entry each time.
    expect((await io.readFile(segmentPath(0, '.index'))).toString('hex')).toBe('0000000300000048' + '0000000a000000a6');
    // Max timestamp so far T0 + 20 (batch 2, last offset 3); the marker's T0 does not grow it.
    expect((await io.readFile(segmentPath(0, '.timeindex'))).toString('hex')).toBe('0000018bcfe56814' + '00000003');
    expect((await io.readFile(`${path.posix.dirname(segmentPath(0, '.log'))}/leader-epoch-checkpoint`)).toString()).toBe('0\n2\n0 0\n3 10\n');
    expect(io.openHandles()).toEqual([]);
  });
});
