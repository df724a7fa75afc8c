// writeFetchToFd and its raw-fd writer: partial writes advance the slice
// list and trim the first slice, EAGAIN/EINTR are retried, zero progress and
// EPIPE fail typed; real files receive exactly header + parts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { capabilities } from '@seglog/native';
import { FetchErrorCode, writeFetchToFd, type FetchWriteStrategy } from '../src/index.js';
import { advanceSlices, FdSink } from '../src/internal/fd-sink.js';
import { segments, type PartSpec, type Segments } from './helpers.js';

const KiB = 1024;
const MiB = 1024 * KiB;
let seg: Segments;
beforeAll(async () => { seg = await segments(1, 2 * MiB, 11); });
afterAll(async () => { await seg.cleanup(); expect(seg.io.openHandles()).toEqual([]); });

describe('advanceSlices', () => {
  it('leaves exactly the unwritten suffix (reference: concatenation)', () => {
    fc.assert(fc.property(fc.array(fc.uint8Array({ minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 12 }), fc.double({ min: 0, max: 1, noNaN: true }), (arrays, at) => {
      const slices = arrays.map((a) => Buffer.from(a));
      const all = Buffer.concat(slices);
      const written = Math.floor(at * all.length);
      advanceSlices(slices, written);
      expect(Buffer.concat(slices).equals(all.subarray(written))).toBe(true);
      for (const s of slices) expect(s.length).toBeGreaterThan(0);
    }));
  });
});

describe('FdSink over a scripted writev', () => {
  it('short writes, EAGAIN and EINTR: every byte once, in order', async () => {
    await fc.assert(fc.asyncProperty(fc.array(fc.uint8Array({ minLength: 1, maxLength: 100 }), { minLength: 1, maxLength: 30 }), fc.infiniteStream(fc.oneof(fc.constant(-1), fc.constant(-2), fc.integer({ min: 1, max: 64 }))), async (arrays, script) => {
      const out: Buffer[] = [];
      const it = script[Symbol.iterator]();
      let zeroRun = 0;
      const sink = new FdSink(99, 7, (_fd, slices) => {
        const step = it.next().value as number;
        if (step === -1 && zeroRun++ < 3) return Promise.reject(Object.assign(new Error('again'), { code: 'EAGAIN' }));
        if (step === -2 && zeroRun++ < 3) return Promise.reject(Object.assign(new Error('intr'), { code: 'EINTR' }));
        zeroRun = 0;
        const all = Buffer.concat(slices as Buffer[]);
        const n = Math.min(all.length, Math.max(1, step));
        out.push(Buffer.from(all.subarray(0, n)));
        return Promise.resolve(n);
      });
      for (const a of arrays) if (sink.push(Buffer.from(a))) await sink.flush();
      await sink.flush();
      expect(Buffer.concat(out).equals(Buffer.concat(arrays.map((a) => Buffer.from(a))))).toBe(true);
      expect(sink.completed).toBe(sink.pushed);
    }), { numRuns: 100 });
  });

  it('zero progress fails with NO_PROGRESS, EPIPE with PEER_CLOSED, EBADF with WRITE_FAILED', async () => {
    const zero = new FdSink(99, 4, () => Promise.resolve(0));
    zero.push(Buffer.alloc(10));
    await expect(zero.flush()).rejects.toMatchObject({ code: FetchErrorCode.noProgress });
    const pipe = new FdSink(99, 4, () => Promise.reject(Object.assign(new Error('pipe'), { code: 'EPIPE' })));
    pipe.push(Buffer.alloc(10));
    await expect(pipe.flush()).rejects.toMatchObject({ code: FetchErrorCode.peerClosed, context: { errno: 'EPIPE' } });
    const bad = new FdSink(99, 4, () => Promise.reject(Object.assign(new Error('badf'), { code: 'EBADF' })));
    bad.push(Buffer.alloc(10));
    await expect(bad.flush()).rejects.toMatchObject({ code: FetchErrorCode.writeFailed });
  });
});

describe('writeFetchToFd into a real file', () => {
  for (const strategy of ['auto', 'coalesce', 'writev', 'sendfile', 'pread'] as FetchWriteStrategy[]) {
    it(`${strategy}: the file holds exactly header + parts; the plan is released`, async () => {
      const out = path.join(os.tmpdir(), `seglog-fetch-fd-${process.pid}-${strategy}`);
      const fd = fs.openSync(out, 'w');
      try {
        const specs: PartSpec[] = [
          { kind: 'inline', bytes: Buffer.alloc(700, 1) },
          { kind: 'file', file: 0, position: 3, length: 500 * KiB },
          { kind: 'file', file: 0, position: 600 * KiB, length: 10 },
          { kind: 'inline', bytes: Buffer.alloc(70 * KiB, 2) },
          { kind: 'file', file: 0, position: MiB, length: MiB },
        ];
        const header = Buffer.alloc(33, 3);
        const plan = seg.plan(specs);
        const result = await writeFetchToFd(fd, header, plan, { strategy, maxIovecs: 2, preadChunkBytes: 64 * KiB, coalesceBelowBytes: 0 });
        const expected = seg.expected(header, specs);
        expect(result.bytesWritten).toBe(expected.length);
        expect(fs.readFileSync(out).equals(expected)).toBe(true);
        expect(plan.isReleased).toBe(true);
        expect(seg.refs[0]!.refCount).toBe(1);
        if (strategy === 'sendfile' && capabilities.sendfile) expect(result.sendfiles).toBe(3);
        if (strategy === 'pread' || strategy === 'writev') expect(result.sendfiles).toBe(0);
      } finally {
        fs.closeSync(fd);
        fs.rmSync(out, { force: true });
      }
    });
  }

  it('a pipe whose reader is gone fails with PEER_CLOSED', async () => {
    // A FIFO: open the read end non-blocking, then the write end, then close the reader.
    const fifo = path.join(os.tmpdir(), `seglog-fetch-fifo-${process.pid}`);
    const { execFileSync } = await import('node:child_process');
    execFileSync('mkfifo', [fifo]);
    const readFd = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    const writeFd = fs.openSync(fifo, fs.constants.O_WRONLY);
    fs.closeSync(readFd);
    try {
      const plan = seg.plan([{ kind: 'inline', bytes: Buffer.alloc(100) }, { kind: 'file', file: 0, position: 0, length: 1000 }]);
      await expect(writeFetchToFd(writeFd, Buffer.alloc(4), plan, { strategy: 'writev' })).rejects.toMatchObject({ code: FetchErrorCode.peerClosed });
      expect(plan.isReleased).toBe(true);
    } finally {
      fs.closeSync(writeFd);
      fs.rmSync(fifo, { force: true });
    }
  });
});
