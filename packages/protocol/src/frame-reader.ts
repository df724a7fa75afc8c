// FrameReader (moved from the broker, which now imports it from here).
// FrameReader: turns a socket's byte stream into request frames. Wire format:
// each request is an int32 big-endian size followed by that many bytes.
//
// Invariants:
// - A frame's declared size is checked against `maxFrameBytes` as soon as its
//   4 size bytes have arrived, before any of its body is accumulated or any
//   buffer allocated for it; a violation throws SEGLOG_ERR_PROTOCOL_FRAME_TOO_LARGE
//   (negative sizes SEGLOG_ERR_PROTOCOL_MALFORMED) and the reader is poisoned:
//   the server must close the connection (the stream can no longer be framed).
// - With a `pool` (the broker's queued.max.request.bytes), every frame's size
//   is reserved from it once known and before its body is kept; while the pool
//   refuses, `waitingForMemory` is true, nothing more is assembled, and the
//   caller pauses its socket until the pool wakes it (then calls next()). The
//   caller releases each returned frame's length once it is done with it;
//   dispose() releases what the reader still holds.
// - A partial frame costs about its own size: the first time a frame is known
//   to span more than the bytes received, one buffer of exactly its size is
//   allocated and every later chunk is copied into it (the chunks are then
//   garbage). Holding a slow sender's chunks instead costs ~100 bytes per
//   chunk: 1-byte TCP writes turned 18 MB sent into 1.6 GB of broker RSS
//   (issue 23 item 7).
// - A frame that lies whole in the bytes received is returned as a zero-copy
//   slice when it is inside one chunk (the slice keeps the chunk alive), else
//   copied once into a buffer of exactly its size. Each byte is copied at most
//   once; no O(n²) concatenation.
// - At most one assembled frame waits for next(); bytes after it stay queued
//   as received (a caller that drains next() after every push() holds at most
//   one frame plus the last chunk; pause the socket otherwise).

import { assert } from '@seglog/common';
import type { MemoryPool } from './memory-pool.js';
import { ProtocolErrorCode, malformed, protocolError } from './protocol-error.js';

export interface FrameReaderOptions {
  /** Largest accepted frame body (Kafka's socket.request.max.bytes, default 100 MiB). */
  readonly maxFrameBytes: number;
  /** Budget every frame is reserved from (the broker's queued.max.request.bytes); none for clients. */
  readonly pool?: MemoryPool;
}

export const DEFAULT_MAX_FRAME_BYTES = 104_857_600;

const EMPTY = Buffer.alloc(0);

export class FrameReader {
  readonly maxFrameBytes: number;
  private readonly pool: MemoryPool | null;
  private readonly chunks: Buffer[];
  /** Index of the first unconsumed chunk in `chunks` (a head pointer instead of shift()). */
  private head: number;
  /** Read position inside chunks[head]. */
  private headPosition: number;
  /** Bytes in `chunks` not yet consumed. */
  private queued: number;
  /** Size of the frame being received, or −1 while its size prefix is incomplete. */
  private pendingSize: number;
  /** pendingSize bytes are reserved from the pool for the frame being received. */
  private reserved: boolean;
  /** The frame being received, once it is known to span more than the bytes received. */
  private assembly: Buffer | null;
  private assembled: number;
  /** A complete assembled frame not yet returned by next() (its size is reserved). */
  private ready: Buffer | null;
  private poisoned: boolean;
  /** Bytes copied so far (into assembled frames and size prefixes): each received byte at most once. */
  private copied: number;

  constructor(options: FrameReaderOptions = { maxFrameBytes: DEFAULT_MAX_FRAME_BYTES }) {
    assert(Number.isInteger(options.maxFrameBytes) && options.maxFrameBytes > 0, 'FrameReader: maxFrameBytes must be a positive integer');
    assert(options.maxFrameBytes <= 0x7fffffff, 'FrameReader: maxFrameBytes above int32');
    this.maxFrameBytes = options.maxFrameBytes;
    this.pool = options.pool ?? null;
    this.chunks = [];
    this.head = 0;
    this.headPosition = 0;
    this.queued = 0;
    this.pendingSize = -1;
    this.reserved = false;
    this.assembly = null;
    this.assembled = 0;
    this.ready = null;
    this.poisoned = false;
    this.copied = 0;
  }

  /** Bytes copied since construction; never more than the bytes pushed (zero-copy slices cost nothing). */
  get copiedBytes(): number {
    return this.copied;
  }

  /** Bytes received and not yet returned in a frame (size prefixes excluded once read). */
  get bufferedBytes(): number {
    return this.queued + this.assembled + (this.ready === null ? 0 : this.ready.length);
  }

  /** The next frame's size is known but the pool has no budget for it: stop reading until the pool wakes you. */
  get waitingForMemory(): boolean {
    return this.pendingSize !== -1 && !this.reserved;
  }

  /** Adds socket data. Throws (and poisons the reader) when a size prefix is too large or negative. */
  push(chunk: Buffer): void {
    assert(!this.poisoned, 'FrameReader.push: reader failed earlier; close the connection');
    if (chunk.length === 0) return;
    const assembly = this.assembly;
    if (assembly === null) {
      this.enqueue(chunk);
    } else {
      const n = Math.min(chunk.length, assembly.length - this.assembled);
      chunk.copy(assembly, this.assembled, 0, n);
      this.copied += n;
      this.assembled += n;
      if (this.assembled === assembly.length) this.finishAssembly(assembly);
      if (n < chunk.length) this.enqueue(chunk.subarray(n));
    }
    this.advance();
  }

  /**
   * The next complete frame body (without its size prefix), or null if none is
   * complete yet (or the pool has no budget for it). With a pool, its length is
   * reserved: release it when done. Reading the following size prefix happens
   * on the next call, so a bad prefix never loses the frame before it.
   */
  next(): Buffer | null {
    assert(!this.poisoned, 'FrameReader.next: reader failed earlier; close the connection');
    this.advance();
    const ready = this.ready;
    if (ready !== null) {
      this.ready = null;
      return ready;
    }
    if (this.pendingSize === -1 || !this.reserved || this.queued < this.pendingSize) return null;
    const frame = this.take(this.pendingSize);
    this.pendingSize = -1;
    this.reserved = false;
    return frame;
  }

  /** Releases every reservation the reader holds (the connection is closing); the reader is unusable after. */
  dispose(): void {
    if (this.pool !== null) {
      const held = (this.reserved ? this.pendingSize : 0) + (this.ready === null ? 0 : this.ready.length);
      this.pool.release(held);
    }
    this.reserved = false;
    this.pendingSize = -1;
    this.ready = null;
    this.assembly = null;
    this.assembled = 0;
    this.chunks.length = 0;
    this.head = 0;
    this.headPosition = 0;
    this.queued = 0;
    this.poisoned = true;
  }

  private enqueue(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.queued += chunk.length;
  }

  private finishAssembly(assembly: Buffer): void {
    assert(this.ready === null, 'FrameReader: a second assembled frame while one is ready');
    this.ready = assembly;
    this.assembly = null;
    this.assembled = 0;
    this.pendingSize = -1;
    this.reserved = false;
  }

  /** Reads the next size prefix, reserves the frame, and starts assembling it when it is incomplete. */
  private advance(): void {
    if (this.ready !== null || this.assembly !== null) return;
    if (this.pendingSize === -1) {
      if (this.queued < 4) return;
      this.pendingSize = this.readSize();
    }
    if (!this.reserved) {
      if (this.pool !== null && !this.pool.tryReserve(this.pendingSize)) return;
      this.reserved = true;
    }
    if (this.queued >= this.pendingSize) return;
    // Incomplete: from here on it costs its own size, not the chunks' overhead.
    const assembly = Buffer.allocUnsafe(this.pendingSize);
    const have = this.queued;
    this.copyOut(assembly, have);
    this.assembly = assembly;
    this.assembled = have;
  }

  private readSize(): number {
    const prefix = this.take(4);
    const size = prefix.readInt32BE(0);
    if (size < 0) {
      this.poisoned = true;
      throw malformed('negative frame size', 0, { size });
    }
    if (size > this.maxFrameBytes) {
      this.poisoned = true;
      throw protocolError(ProtocolErrorCode.FRAME_TOO_LARGE, 'request frame larger than the maximum', {
        size, maxFrameBytes: this.maxFrameBytes,
      });
    }
    return size;
  }

  /** Removes `size` queued bytes: a slice when they lie in one chunk, else one copy. */
  private take(size: number): Buffer {
    if (size === 0) return EMPTY;
    const first = this.chunks[this.head] as Buffer;
    if (size <= first.length - this.headPosition) {
      const slice = first.subarray(this.headPosition, this.headPosition + size);
      this.consume(size);
      return slice;
    }
    const out = Buffer.allocUnsafe(size);
    this.copyOut(out, size);
    return out;
  }

  /** Copies the first `size` queued bytes into out[0..size) and consumes them. */
  private copyOut(out: Buffer, size: number): void {
    assert(size <= this.queued && size <= out.length, 'FrameReader.copyOut: more than queued');
    let filled = 0;
    while (filled < size) {
      const chunk = this.chunks[this.head] as Buffer;
      const n = Math.min(size - filled, chunk.length - this.headPosition);
      chunk.copy(out, filled, this.headPosition, this.headPosition + n);
      this.copied += n;
      filled += n;
      this.consume(n);
    }
  }

  private consume(size: number): void {
    this.queued -= size;
    this.headPosition += size;
    const chunk = this.chunks[this.head] as Buffer;
    if (this.headPosition < chunk.length) return;
    this.head++;
    this.headPosition = 0;
    if (this.head === this.chunks.length) {
      this.chunks.length = 0;
      this.head = 0;
    } else if (this.head >= 64 && this.head * 2 >= this.chunks.length) {
      this.chunks.splice(0, this.head);
      this.head = 0;
    }
  }
}
