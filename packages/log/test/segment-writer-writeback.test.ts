// BufferedSegmentWriter's writeback hints (BufferedWriterLimits.writebackBytes):
// once that many bytes are written since the last hint, the writer asks the
// file to start their writeback. The hints cover the written bytes in order,
// without gaps or overlaps, each at least writebackBytes long and never past
// writtenPosition; 0 turns them off; a file without startWriteback is fine.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { capabilities } from '@seglog/native';
import { describe, expect, it } from 'vitest';
import { NodeIo, SimIo } from '@seglog/io';
import { Log } from '../src/index.js';
import { config, producerBatch } from './log-helpers.js';
import type { IoFile } from '@seglog/io';
import { BufferedSegmentWriter } from '../src/segment/segment-writer.js';

const listener = { onWritten: () => undefined, onWriteError: () => undefined, wantsSync: () => false };

async function run(writebackBytes: number | undefined, sizes: readonly number[], start = 0): Promise<{ hints: Array<[number, number]>; written: number }> {
  const io = new SimIo();
  const real = await io.open('/s.log', { create: true });
  const hints: Array<[number, number]> = [];
  const file = Object.create(real) as IoFile;
  file.startWriteback = (position: number, length: number) => {
    expect(position + length).toBeLessThanOrEqual(writer.writtenPosition);
    hints.push([position, length]);
  };
  const writer: BufferedSegmentWriter = new BufferedSegmentWriter(file, start, listener, {
    maxWriteBytes: 4096, maxIovecs: 16, ...(writebackBytes === undefined ? {} : { writebackBytes }),
  });
  let position = start;
  for (const [i, size] of sizes.entries()) {
    writer.enqueue(Buffer.alloc(size, i), position, i);
    position += size;
    if (i % 3 === 0) await writer.drain();
  }
  await writer.drain();
  await writer.close();
  return { hints, written: writer.writtenPosition };
}

describe('BufferedSegmentWriter writeback hints', () => {
  it('hints every writebackBytes of written bytes, in order, without gaps', async () => {
    const sizes = Array.from({ length: 200 }, (_, i) => 100 + ((i * 7919) % 900));
    const { hints, written } = await run(5000, sizes, 300);
    expect(hints.length).toBeGreaterThan(10);
    let next = 300;
    for (const [position, length] of hints) {
      expect(position).toBe(next);
      expect(length).toBeGreaterThanOrEqual(5000);
      next = position + length;
    }
    expect(next).toBeLessThanOrEqual(written);
    expect(written - next).toBeLessThan(5000 + 4096); // the rest is below one more hint (plus one write)
  });

  it('gives no hint below writebackBytes, none at 0, and the 1 MiB default', async () => {
    expect((await run(1 << 20, [1000, 2000])).hints).toEqual([]);
    expect((await run(0, Array.from({ length: 50 }, () => 1000))).hints).toEqual([]);
    const big = await run(undefined, Array.from({ length: 300 }, () => 4000)); // 1.2 MB
    expect(big.hints).toEqual([[0, expect.any(Number) as number]]);
    expect(big.hints[0]![1]).toBeGreaterThanOrEqual(1 << 20);
  });

  it('works on a file without startWriteback (SimIo)', async () => {
    const io = new SimIo();
    const file = await io.open('/p.log', { create: true });
    expect(file.startWriteback).toBeUndefined();
    const writer = new BufferedSegmentWriter(file, 0, listener, { maxWriteBytes: 4096, maxIovecs: 16, writebackBytes: 10 });
    writer.enqueue(Buffer.alloc(100, 1), 0, 0);
    await writer.drain();
    expect(writer.writtenPosition).toBe(100);
    await writer.close();
  });
});

describe.skipIf(!capabilities.writeback)('LogConfig.writebackBytes on disk (NodeIo)', () => {
  async function hintsAfter(writebackBytes: number): Promise<number> {
    const root = mkdtempSync(path.join(os.tmpdir(), 'seglog-writeback-'));
    try {
      const io = new NodeIo();
      const log = await Log.open(io, path.join(root, 'p'), config({ writebackBytes }), {
        topic: 't', partition: 0, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: true,
      });
      for (let i = 0; i < 80; i++) await log.appendAsLeader(producerBatch(100, { valueBytes: 1000, tag: i }));
      await log.flush();
      await log.close();
      return io.stats.writebacks;
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }

  it('reaches the segment writer: ~8 MB appended gives a hint per 1 MiB or more written, none at 0', async () => {
    expect(await hintsAfter(1 << 20)).toBeGreaterThanOrEqual(3);
    expect(await hintsAfter(0)).toBe(0);
  });
});
