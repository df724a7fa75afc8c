// writeFetch over real loopback TCP: random plans under every strategy
// deliver exactly header + parts; slow readers force partial writes and
// backpressure; dead peers and truncated files fail typed, with every file
// reference released.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { capabilities } from '@seglog/native';
import { FetchErrorCode, SendfileLimiter, writeFetch, type FetchWriteOptions, type FetchWriteStrategy } from '../src/index.js';
import { segments, tcpPair, totalOf, type PartSpec, type Segments } from './helpers.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const FILE_BYTES = 8 * MiB;
const CASE_CAP_BYTES = 16 * MiB;
const STRATEGIES: readonly FetchWriteStrategy[] = ['auto', 'coalesce', 'writev', 'sendfile', 'pread'];

let seg: Segments;
beforeAll(async () => { seg = await segments(2, FILE_BYTES, 7); });
afterAll(async () => {
  await seg.cleanup();
  expect(seg.io.openHandles()).toEqual([]);
});

function expectRefsIdle(): void {
  for (const r of seg.refs) expect(r.refCount).toBe(1); // only the owner's reference is left
}

// Sizes biased towards small: most parts are record-batch sized, a few are large.
const sizeArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 300 }) },
  { weight: 3, arbitrary: fc.integer({ min: 301, max: 64 * KiB }) },
  { weight: 1, arbitrary: fc.integer({ min: 64 * KiB + 1, max: 4 * MiB }) },
);

const partArb: fc.Arbitrary<PartSpec> = fc.oneof(
  sizeArb.chain((n) => fc.integer({ min: 0, max: 255 }).map((fill): PartSpec => {
    const bytes = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) bytes[i] = (fill + i * 7) & 0xff;
    return { kind: 'inline', bytes };
  })),
  fc.tuple(sizeArb, fc.integer({ min: 0, max: 1 }), fc.double({ min: 0, max: 1, noNaN: true }), fc.boolean()).map(([n, file, at, continueLast]): PartSpec => ({
    kind: 'file', file, length: n,
    // position < 0 means "continue the previous file part" (merged into one range); fixed below
    position: continueLast ? -1 : Math.floor(at * (FILE_BYTES - n)),
  })),
);

const planArb = fc.oneof(fc.array(partArb, { maxLength: 200 }), fc.array(partArb, { maxLength: 200, size: 'max' })).map((raw) => {
  const specs: PartSpec[] = [];
  let total = 0;
  let last: PartSpec | null = null;
  for (const s of raw) {
    let spec = s;
    if (spec.kind === 'file' && spec.position < 0) {
      const prev: PartSpec | null = last;
      const position: number = prev !== null && prev.kind === 'file' && prev.file === spec.file ? prev.position + prev.length : 0;
      spec = { ...spec, position: position + spec.length <= FILE_BYTES ? position : 0 };
    }
    const n = spec.kind === 'inline' ? spec.bytes.length : spec.length;
    if (total + n > CASE_CAP_BYTES) break;
    total += n;
    specs.push(spec);
    last = spec;
  }
  return specs;
});

const optionsArb: fc.Arbitrary<FetchWriteOptions> = fc.record({
  strategy: fc.constantFrom(...STRATEGIES),
  maxIovecs: fc.constantFrom(1, 2, 7, 64, 1024),
  preadChunkBytes: fc.constantFrom(4096, 64 * KiB, 256 * KiB),
  sendfileMinBytes: fc.constantFrom(0, 1, 4096, 64 * KiB, 1 * MiB),
  coalesceBelowRatio: fc.constantFrom(0, 0.25, 1),
}).map(({ coalesceBelowRatio, ...o }) => ({ ...o, coalesceBelowBytes: Math.floor(o.preadChunkBytes * coalesceBelowRatio) }));

async function slowRead(pair: Awaited<ReturnType<typeof tcpPair>>, stop: () => boolean, pauseMs = 1, startMs = 10): Promise<void> {
  // Start paused, then pause after every chunk: the writer's socket buffers
  // fill, writes return false and stay queued (partial writes), and sendfile
  // meets EAGAIN.
  pair.reader.pause();
  setTimeout(() => { if (!stop()) pair.reader.resume(); }, startMs);
  pair.reader.on('data', () => {
    pair.reader.pause();
    setTimeout(() => { if (!stop()) pair.reader.resume(); }, pauseMs);
  });
}

describe('writeFetch delivers exactly header + parts', () => {
  it('random plans × every strategy, fast and slow readers', async () => {
    await fc.assert(fc.asyncProperty(
      planArb, optionsArb, fc.uint8Array({ maxLength: 64 }), fc.boolean(),
      async (specs, options, headerBytes, slow) => {
        const header = Buffer.from(headerBytes);
        const pair = await tcpPair();
        let done = false;
        try {
          if (slow && totalOf(specs) <= 2 * MiB) await slowRead(pair, () => done);
          const expected = seg.expected(header, specs);
          const plan = seg.plan(specs);
          const result = await writeFetch(pair.writer, header, plan, options);
          expect(result.bytesWritten).toBe(expected.length);
          await pair.waitFor(expected.length);
          const got = pair.bytes();
          expect(got.length).toBe(expected.length);
          expect(got.equals(expected)).toBe(true);
          expect(plan.isReleased).toBe(true);
          expectRefsIdle();
          if (options.strategy === 'coalesce' && expected.length > 0) expect(result.inlineStrategy ?? result.fileStrategy).toBe('coalesce');
          if (options.strategy === 'writev' || options.strategy === 'pread') expect(result.sendfiles).toBe(0);
          if (options.strategy !== 'auto' && options.strategy !== 'coalesce') {
            expect(result.writes).toBeLessThanOrEqual(result.slices);
          }
        } finally {
          done = true;
          pair.close();
        }
      },
    ), { numRuns: 60 });
  });

  for (const strategy of ['pread', 'coalesce'] as const) {
    it(`${strategy}: staging buffers are reused only after their writes completed (slow reader, 4 KiB chunks)`, async () => {
      const pair = await tcpPair();
      let done = false;
      try {
        await slowRead(pair, () => done, 2, 50);
        // Larger than the loopback socket buffers: writes really queue up.
        const specs: PartSpec[] = [{ kind: 'file', file: 0, position: 4321, length: FILE_BYTES - 4321 }];
        const header = Buffer.alloc(5, 1);
        const result = await writeFetch(pair.writer, header, seg.plan(specs), { strategy, preadChunkBytes: 4096, coalesceBelowBytes: 0 });
        expect(result.preads).toBe(Math.ceil((FILE_BYTES - 4321 + (strategy === 'coalesce' ? 5 : 0)) / 4096));
        const expected = seg.expected(header, specs);
        await pair.waitFor(expected.length);
        expect(pair.bytes().equals(expected)).toBe(true);
      } finally {
        done = true;
        pair.close();
      }
    });
  }

  it('a response below coalesceBelowBytes is one write', async () => {
    const pair = await tcpPair();
    try {
      const specs: PartSpec[] = [
        { kind: 'inline', bytes: Buffer.alloc(100, 1) },
        { kind: 'file', file: 0, position: 10, length: 1000 },
        { kind: 'inline', bytes: Buffer.alloc(50, 2) },
        { kind: 'file', file: 1, position: 5000, length: 3000 },
      ];
      const header = Buffer.alloc(12, 9);
      const result = await writeFetch(pair.writer, header, seg.plan(specs), { coalesceBelowBytes: 16 * KiB });
      expect(result).toMatchObject({ writes: 1, slices: 1, inlineStrategy: 'coalesce', fileStrategy: 'coalesce', sendfiles: 0, preads: 2 });
      const expected = seg.expected(header, specs);
      await pair.waitFor(expected.length);
      expect(pair.bytes().equals(expected)).toBe(true);
    } finally {
      pair.close();
    }
  });

  it('auto: large file ranges go by sendfile, contiguous parts merge into one range', async () => {
    const pair = await tcpPair();
    try {
      const specs: PartSpec[] = [
        { kind: 'file', file: 0, position: 0, length: 300 * KiB },
        { kind: 'file', file: 0, position: 300 * KiB, length: 400 * KiB },
        { kind: 'inline', bytes: Buffer.alloc(10, 3) },
      ];
      const header = Buffer.alloc(20, 4);
      const result = await writeFetch(pair.writer, header, seg.plan(specs), { sendfileMinBytes: 64 * KiB });
      if (capabilities.sendfile) expect(result).toMatchObject({ sendfiles: 1, preads: 0, fileStrategy: 'sendfile', inlineStrategy: 'writev' });
      else expect(result).toMatchObject({ sendfiles: 0, fileStrategy: 'pread' });
      const expected = seg.expected(header, specs);
      await pair.waitFor(expected.length);
      expect(pair.bytes().equals(expected)).toBe(true);
      expectRefsIdle();
    } finally {
      pair.close();
    }
  });

  it('a full sendfile limiter sends by pread instead and counts the fallback', async () => {
    const pair = await tcpPair();
    const limiter = new SendfileLimiter(1);
    expect(limiter.tryAcquire()).toBe(true);
    try {
      const specs: PartSpec[] = [{ kind: 'file', file: 1, position: 123, length: 1 * MiB }];
      const result = await writeFetch(pair.writer, Buffer.alloc(0), seg.plan(specs), { strategy: 'sendfile', limiter });
      expect(result.sendfiles).toBe(0);
      expect(result.fileStrategy).toBe('pread');
      if (capabilities.sendfile) expect(result.sendfileFallbacks).toBe(1);
      await pair.waitFor(MiB);
      expect(pair.bytes().equals(seg.expected(Buffer.alloc(0), specs))).toBe(true);
      expect(limiter.inFlight).toBe(1);
    } finally {
      limiter.release();
      pair.close();
    }
  });

  it('refuses a second response on a busy socket (programmer error) and still releases its plan', async () => {
    const pair = await tcpPair();
    try {
      pair.reader.pause();
      const first = writeFetch(pair.writer, Buffer.alloc(1), seg.plan([{ kind: 'file', file: 0, position: 0, length: 8 * MiB }]));
      const second = seg.plan([{ kind: 'file', file: 1, position: 0, length: 10 }]);
      await expect(writeFetch(pair.writer, Buffer.alloc(1), second)).rejects.toThrow(/another response/);
      expect(second.isReleased).toBe(true);
      pair.reader.resume();
      await first;
      expectRefsIdle();
    } finally {
      pair.close();
    }
  });
});

describe('writeFetch failures', () => {
  for (const strategy of STRATEGIES) {
    it(`${strategy}: a peer that closes mid-response → PEER_CLOSED, socket destroyed, no leaked reference`, async () => {
      const pair = await tcpPair();
      try {
        pair.reader.pause(); // let the writer fill every buffer first
        const specs: PartSpec[] = [
          { kind: 'inline', bytes: Buffer.alloc(3000, 5) },
          { kind: 'file', file: 0, position: 0, length: 6 * MiB },
          { kind: 'file', file: 1, position: 0, length: 6 * MiB },
        ];
        const plan = seg.plan(specs);
        const pending = writeFetch(pair.writer, Buffer.alloc(16, 1), plan, { strategy, coalesceBelowBytes: 0 });
        await new Promise((r) => setTimeout(r, 50));
        pair.reader.destroy(); // unread data → RST
        const error = await pending.then(() => null, (e: unknown) => e);
        expect(error).toMatchObject({ code: FetchErrorCode.peerClosed });
        expect(pair.writer.destroyed).toBe(true);
        expect(plan.isReleased).toBe(true);
        expectRefsIdle();
      } finally {
        pair.close();
      }
    });
  }

  it('a socket destroyed locally mid-response → PEER_CLOSED', async () => {
    const pair = await tcpPair();
    try {
      pair.reader.pause();
      const plan = seg.plan([{ kind: 'file', file: 0, position: 0, length: 8 * MiB }, { kind: 'inline', bytes: Buffer.alloc(8 * MiB) }]);
      const pending = writeFetch(pair.writer, Buffer.alloc(4), plan, { strategy: 'pread' });
      await new Promise((r) => setTimeout(r, 30));
      pair.writer.destroy();
      await expect(pending).rejects.toMatchObject({ code: FetchErrorCode.peerClosed });
      expectRefsIdle();
    } finally {
      pair.close();
    }
  });

  it('an already-truncated file fails before the first byte, socket kept open', async () => {
    const pair = await tcpPair();
    try {
      const plan = seg.plan([{ kind: 'inline', bytes: Buffer.alloc(10) }, { kind: 'file', file: 0, position: FILE_BYTES - 10, length: 11 }]);
      const error = await writeFetch(pair.writer, Buffer.alloc(8), plan).then(() => null, (e: unknown) => e);
      expect(error).toMatchObject({ code: FetchErrorCode.fileTruncated, retriable: true, context: { bytesWritten: 0, available: 10 } });
      expect(pair.writer.destroyed).toBe(false);
      await new Promise((r) => setTimeout(r, 20));
      expect(pair.received()).toBe(0);
      expectRefsIdle();
    } finally {
      pair.close();
    }
  });

  for (const strategy of ['sendfile', 'pread', 'coalesce', 'auto'] as const) {
    it(`${strategy}: a file truncated mid-plan fails with FILE_TRUNCATED and sends only a true prefix`, async () => {
      const local = await segments(2, 4 * MiB, 99);
      const pair = await tcpPair();
      try {
        pair.reader.pause();
        const specs: PartSpec[] = [
          { kind: 'file', file: 0, position: 0, length: 4 * MiB },
          { kind: 'inline', bytes: Buffer.alloc(1000, 0x42) },
          { kind: 'file', file: 1, position: 1 * MiB, length: 3 * MiB },
        ];
        const header = Buffer.alloc(16, 7);
        const expected = local.expected(header, specs);
        const plan = local.plan(specs);
        const pending = writeFetch(pair.writer, header, plan, { strategy });
        await new Promise((r) => setTimeout(r, 30)); // the writer is now stuck behind the paused reader in part 0
        const victim = await local.io.open(local.paths[1]!);
        await victim.truncate(2 * MiB);
        await victim.close();
        pair.reader.resume();
        const error = await pending.then(() => null, (e: unknown) => e);
        expect(error).toMatchObject({ code: FetchErrorCode.fileTruncated });
        await new Promise((r) => setTimeout(r, 50));
        const got = pair.bytes();
        expect(got.length).toBeLessThan(expected.length);
        expect(got.equals(expected.subarray(0, got.length))).toBe(true);
        expect(pair.writer.destroyed).toBe(true);
        for (const r of local.refs) expect(r.refCount).toBe(1);
      } finally {
        pair.close();
        await local.cleanup();
        expect(local.io.openHandles()).toEqual([]);
      }
    });
  }
});
