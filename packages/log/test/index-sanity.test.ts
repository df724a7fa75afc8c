// The index sanity checks catch what a torn or garbage sector leaves behind:
// entries that pass Kafka's two checks (last offset ≥ base, whole entries)
// but point at negative or decreasing positions, or repeat offsets.
import { SimIo } from '@seglog/io';
import { describe, expect, it } from 'vitest';
import { OffsetIndex } from '../src/segment/offset-index.js';
import { TimeIndex } from '../src/segment/time-index.js';

const DIR = '/data/t-0';

async function indexWith(io: SimIo, name: string, bytes: Buffer): Promise<void> {
  await io.mkdir(DIR, { recursive: true });
  const f = await io.open(`${DIR}/${name}`, { create: true });
  await f.pwrite(bytes, 0);
  await f.close();
}

function offsetEntries(entries: Array<[number, number]>): Buffer {
  const buf = Buffer.alloc(entries.length * 8);
  entries.forEach(([key, position], i) => { buf.writeInt32BE(key, i * 8); buf.writeInt32BE(position, i * 8 + 4); });
  return buf;
}

function timeEntries(entries: Array<[number, number]>): Buffer {
  const buf = Buffer.alloc(entries.length * 12);
  entries.forEach(([ts, key], i) => { buf.writeBigInt64BE(BigInt(ts), i * 12); buf.writeInt32BE(key, i * 12 + 8); });
  return buf;
}

async function offsetCheck(entries: Array<[number, number]>, logBytes?: number): Promise<string | null> {
  const io = new SimIo();
  await indexWith(io, '00000000000000000100.index', offsetEntries(entries));
  const index = await OffsetIndex.open(io, `${DIR}/00000000000000000100.index`, { baseOffset: 100, maxIndexBytes: 1024 });
  try {
    index.sanityCheck(logBytes);
    return null;
  } catch (error) {
    return (error as { code?: string }).code ?? 'untyped';
  } finally {
    await index.close();
  }
}

async function timeCheck(entries: Array<[number, number]>): Promise<string | null> {
  const io = new SimIo();
  await indexWith(io, '00000000000000000100.timeindex', timeEntries(entries));
  const index = await TimeIndex.open(io, `${DIR}/00000000000000000100.timeindex`, { baseOffset: 100, maxIndexBytes: 1200 });
  try {
    index.sanityCheck();
    return null;
  } catch (error) {
    return (error as { code?: string }).code ?? 'untyped';
  } finally {
    await index.close();
  }
}

describe('OffsetIndex.sanityCheck', () => {
  it('accepts strictly increasing offsets and positions inside the log', async () => {
    expect(await offsetCheck([[0, 0], [5, 4100], [9, 8300]], 9000)).toBeNull();
  });
  it('rejects a negative position (a damaged sector) with a typed error', async () => {
    expect(await offsetCheck([[0, 0], [5, -4100]])).toBe('SEGLOG_ERR_INDEX_CORRUPT');
  });
  it('rejects decreasing or repeated positions and offsets', async () => {
    expect(await offsetCheck([[0, 0], [5, 4100], [9, 4100]])).toBe('SEGLOG_ERR_INDEX_CORRUPT');
    expect(await offsetCheck([[0, 0], [5, 4100], [5, 8000]])).toBe('SEGLOG_ERR_INDEX_CORRUPT');
    expect(await offsetCheck([[3, 100], [7, 4100], [0, 0]])).toBe('SEGLOG_ERR_INDEX_CORRUPT');
  });
  it('rejects a position past the end of the log when the log length is given', async () => {
    expect(await offsetCheck([[0, 0], [5, 4100]], 4100)).toBe('SEGLOG_ERR_INDEX_CORRUPT');
    expect(await offsetCheck([[0, 0], [5, 4100]])).toBeNull();
  });
});

describe('TimeIndex.sanityCheck', () => {
  it('accepts non-decreasing timestamps and offsets', async () => {
    expect(await timeCheck([[1000, 0], [2000, 5], [3000, 9]])).toBeNull();
  });
  it('rejects a timestamp that decreases in the middle, which Kafka (first vs last only) misses', async () => {
    expect(await timeCheck([[1000, 0], [500, 5], [3000, 9]])).toBe('SEGLOG_ERR_INDEX_CORRUPT');
  });
  it('rejects a negative or decreasing relative offset', async () => {
    expect(await timeCheck([[1000, 0], [2000, -5], [3000, 9]])).toBe('SEGLOG_ERR_INDEX_CORRUPT');
    expect(await timeCheck([[1000, 6], [2000, 5], [3000, 9]])).toBe('SEGLOG_ERR_INDEX_CORRUPT');
  });
});
