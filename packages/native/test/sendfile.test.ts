// sendfile over loopback TCP against a pread + write reference: byte-exact
// for random file regions (0 B..4 MiB), with fast and slow readers; EAGAIN
// and partial progress (a paused reader, asserted through the addon's wait
// counter); EOF; a peer that resets mid-transfer; the idle timeout; bad fds.
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { Socket as NetSocket } from 'node:net';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NativeErrorCode, isNativeError, sendfile, socketFd } from '../src/index.js';
import { loadNative } from '../src/internal/loader.js';
import { Sink, loopbackPair, patternBytes, tempDir } from './helpers.js';

const MiB = 1 << 20;
const SMALL_FILE_BYTES = 4 * MiB + 4099;
const LARGE_FILE_BYTES = 48 * MiB;

const raw = loadNative({ env: {} }).binding;
const native = process.env['SEGLOG_NATIVE'] === '0' ? describe.skip : describe;

/** The reference: pread into one reused buffer, write, wait for the write to be flushed before reuse. */
async function preadWrite(socket: Socket, file: FileHandle, position: number, length: number): Promise<number> {
  const buffer = Buffer.allocUnsafe(64 * 1024);
  let sent = 0;
  while (sent < length) {
    const { bytesRead } = await file.read(buffer, 0, Math.min(buffer.length, length - sent), position + sent);
    if (bytesRead === 0) break;
    await new Promise<void>((resolve, reject) => {
      socket.write(buffer.subarray(0, bytesRead), (error) => (error ? reject(error) : resolve()));
    });
    sent += bytesRead;
  }
  return sent;
}

/** A reader that takes one chunk, then pauses for `delayMs`. */
function slowReader(socket: Socket, delayMs: number): void {
  socket.on('data', () => {
    socket.pause();
    setTimeout(() => socket.resume(), delayMs);
  });
}

function waits(): number {
  return raw!.debugCounters!().sendfileWaits;
}

native('sendfile (native addon)', () => {
  const dir = tempDir('sendfile');
  const smallPath = join(dir.path, 'small.bin');
  const largePath = join(dir.path, 'large.bin');
  const small = patternBytes(SMALL_FILE_BYTES, 1);
  const large = patternBytes(LARGE_FILE_BYTES, 2);
  let smallFd = -1;
  let largeFd = -1;
  let smallHandle: FileHandle;

  beforeAll(async () => {
    writeFileSync(smallPath, small);
    writeFileSync(largePath, large);
    smallFd = openSync(smallPath, 'r');
    largeFd = openSync(largePath, 'r');
    smallHandle = await open(smallPath, 'r');
  });

  afterAll(async () => {
    closeSync(smallFd);
    closeSync(largeFd);
    await smallHandle.close();
    dir.remove();
  });

  it('is available on this platform', () => {
    expect(sendfile).not.toBeNull();
    expect(raw?.debugCounters).toBeTypeOf('function');
  });

  it('sends the same bytes as pread + write for random regions, fast and slow readers', async () => {
    const region = fc.record({
      position: fc.integer({ min: 0, max: SMALL_FILE_BYTES + 100 }),
      length: fc.oneof(fc.integer({ min: 0, max: 4 * MiB }), fc.integer({ min: 0, max: 70_000 })),
      slow: fc.boolean(),
    });
    await fc.assert(fc.asyncProperty(region, async ({ position, length, slow }) => {
      const nativePair = await loopbackPair();
      const referencePair = await loopbackPair();
      try {
        const nativeSink = new Sink(nativePair.server);
        const referenceSink = new Sink(referencePair.server);
        if (slow) slowReader(nativePair.server, 1);
        const expected = Math.max(0, Math.min(length, SMALL_FILE_BYTES - position));
        const sent = await sendfile!(socketFd(nativePair.client)!, smallFd, position, length);
        const referenceSent = await preadWrite(referencePair.client, smallHandle, position, length);
        expect(sent).toBe(expected);
        expect(referenceSent).toBe(expected);
        await nativeSink.waitFor(sent);
        await referenceSink.waitFor(referenceSent);
        const received = nativeSink.take();
        expect(received.length).toBe(expected);
        expect(received.equals(referenceSink.take())).toBe(true);
        expect(received.equals(small.subarray(position, position + expected))).toBe(true);
      } finally {
        await nativePair.close();
        await referencePair.close();
      }
    }), { numRuns: 16 });
  });

  it('waits for POLLOUT and makes partial progress when the reader is paused, then completes byte-exactly', async () => {
    const pair = await loopbackPair();
    try {
      const sink = new Sink(pair.server);
      pair.server.pause(); // fill both socket buffers: sendfile must get EAGAIN
      const waitsBefore = waits();
      const position = 12_345;
      const length = 40 * MiB;
      const transfer = sendfile!(socketFd(pair.client)!, largeFd, position, length);
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(sink.bytes).toBeLessThan(length); // the transfer is blocked on the reader
      slowReader(pair.server, 0);
      pair.server.resume();
      expect(await transfer).toBe(length);
      await sink.waitFor(length);
      expect(sink.take().equals(large.subarray(position, position + length))).toBe(true);
      expect(waits()).toBeGreaterThan(waitsBefore);
    } finally {
      await pair.close();
    }
  });

  it('reports a short count at end of file and 0 beyond it, without looping', async () => {
    const pair = await loopbackPair();
    try {
      const sink = new Sink(pair.server);
      expect(await sendfile!(socketFd(pair.client)!, smallFd, SMALL_FILE_BYTES - 10, 1000)).toBe(10);
      expect(await sendfile!(socketFd(pair.client)!, smallFd, SMALL_FILE_BYTES, 1000)).toBe(0);
      expect(await sendfile!(socketFd(pair.client)!, smallFd, SMALL_FILE_BYTES + 5 * MiB, 1000)).toBe(0);
      expect(await sendfile!(socketFd(pair.client)!, smallFd, 0, 0)).toBe(0);
      await sink.waitFor(10);
      expect(sink.take().equals(small.subarray(SMALL_FILE_BYTES - 10))).toBe(true);
    } finally {
      await pair.close();
    }
  });

  it('rejects with EPIPE or ECONNRESET, not a hang or a crash, when the peer resets mid-transfer', async () => {
    const pair = await loopbackPair();
    try {
      let received = 0;
      pair.server.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received >= MiB) pair.server.resetAndDestroy();
      });
      const error = await sendfile!(socketFd(pair.client)!, largeFd, 0, LARGE_FILE_BYTES).then(
        (sent) => new Error(`resolved with ${sent} bytes`),
        (e: unknown) => e,
      );
      expect(isNativeError(error)).toBe(true);
      if (!isNativeError(error)) return;
      expect(error.code).toBe(NativeErrorCode.sendfile);
      expect(['EPIPE', 'ECONNRESET']).toContain(error.errno);
      expect(error.context['bytesSent']).toBeGreaterThanOrEqual(MiB);
      expect(error.context['bytesSent']).toBeLessThan(LARGE_FILE_BYTES);
    } finally {
      await pair.close();
    }
  });

  it('rejects with EPIPE or ECONNRESET when JS destroys its own socket mid-transfer (the fd is dup()ed)', async () => {
    const pair = await loopbackPair();
    try {
      pair.server.pause();
      const transfer = sendfile!(socketFd(pair.client)!, largeFd, 0, LARGE_FILE_BYTES, { idleTimeoutMs: 5_000 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      pair.client.destroy(); // closes Node's fd; the worker's dup keeps the connection
      pair.server.resetAndDestroy();
      const error = await transfer.then((sent) => new Error(`resolved with ${sent}`), (e: unknown) => e);
      expect(isNativeError(error) && ['EPIPE', 'ECONNRESET'].includes(error.errno)).toBe(true);
    } finally {
      await pair.close();
    }
  });

  it('gives up with ETIMEDOUT after idleTimeoutMs without progress', async () => {
    const pair = await loopbackPair();
    try {
      pair.server.pause();
      const started = Date.now();
      const error = await sendfile!(socketFd(pair.client)!, largeFd, 0, LARGE_FILE_BYTES, { idleTimeoutMs: 200 })
        .then((sent) => new Error(`resolved with ${sent}`), (e: unknown) => e);
      expect(isNativeError(error)).toBe(true);
      if (!isNativeError(error)) return;
      expect(error.errno).toBe('ETIMEDOUT');
      expect(error.context['bytesSent']).toBeGreaterThan(0);
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    } finally {
      await pair.close();
    }
  });

  it('rejects bad fds with EBADF and bad arguments with an assertion', async () => {
    const pair = await loopbackPair();
    try {
      const badSocket = await sendfile!(999_999, smallFd, 0, 10).catch((e: unknown) => e);
      expect(isNativeError(badSocket) && badSocket.errno).toBe('EBADF');
      const badFile = await sendfile!(socketFd(pair.client)!, 999_999, 0, 10).catch((e: unknown) => e);
      expect(isNativeError(badFile) && badFile.errno).toBe('EBADF');
      expect(() => sendfile!(-1, smallFd, 0, 10)).toThrow(/socketFd/);
      expect(() => sendfile!(socketFd(pair.client)!, smallFd, 0.5, 10)).toThrow(/position/);
      expect(() => sendfile!(socketFd(pair.client)!, smallFd, 0, 2 ** 53)).toThrow(/length/);
      expect(() => sendfile!(socketFd(pair.client)!, smallFd, 0, 1, { idleTimeoutMs: 0 })).toThrow(/idleTimeoutMs/);
    } finally {
      await pair.close();
    }
  });

  it('socketFd gives the fd of a TCP socket and null for TLS or unconnected sockets', async () => {
    const pair = await loopbackPair();
    try {
      expect(socketFd(pair.client)).toBeGreaterThanOrEqual(0);
      expect(socketFd(new NetSocket())).toBeNull();
      expect(socketFd(new TLSSocket(new NetSocket()))).toBeNull();
    } finally {
      await pair.close();
    }
    expect(socketFd(pair.client)).toBeNull();
  });
});
