// FrameReader (moved from the broker, which deletes its copy at the switch-over):
// turns a socket's byte stream into request frames. Wire format:
// each request is an int32 big-endian size followed by that many bytes.
//
// Invariants:
// - A frame's declared size is checked against `maxFrameBytes` as soon as its
//   4 size bytes have arrived, before any of its body is accumulated or any
//   buffer allocated for it; a violation throws SEGLOG_ERR_PROTOCOL_FRAME_TOO_LARGE
//   (negative sizes SEGLOG_ERR_PROTOCOL_MALFORMED) and the reader is poisoned:
//   the server must close the connection (the stream can no longer be framed).
// - Bytes are held as a queue of the pushed chunks; each byte is copied at
//   most once. A frame inside one chunk is returned as a zero-copy slice of it
//   (the slice keeps the chunk alive); a frame spanning chunks is copied once
//   into a buffer of exactly its size. No O(n²) concatenation.
// - A caller that drains next() after every push() holds at most one frame
//   (≤ maxFrameBytes + 4 bytes) plus the last chunk; pause the socket otherwise.

import { assert } from '@seglog/common';
import { ProtocolErrorCode, malformed, protocolError } from './protocol-error.js';

export interface FrameReaderOptions {
  /** Largest accepted frame body (Kafka's socket.request.max.bytes, default 100 MiB). */
  readonly maxFrameBytes: number;
}

export const DEFAULT_MAX_FRAME_BYTES = 104_857_600;

const EMPTY = Buffer.alloc(0);

export class FrameReader {
  readonly maxFrameBytes: number;
  private readonly chunks: Buffer[];
  /** Index of the first unconsumed chunk in `chunks` (a head pointer instead of shift()). */
  private head: number;
  /** Read position inside chunks[head]. */
  private headPosition: number;
  private buffered: number;
  /** Size of the frame being assembled, or −1 while its size prefix is incomplete. */
  private pendingSize: number;
  private poisoned: boolean;

  constructor(options: FrameReaderOptions = { maxFrameBytes: DEFAULT_MAX_FRAME_BYTES }) {
    assert(Number.isInteger(options.maxFrameBytes) && options.maxFrameBytes > 0, 'FrameReader: maxFrameBytes must be a positive integer');
    assert(options.maxFrameBytes <= 0x7fffffff, 'FrameReader: maxFrameBytes above int32');
    this.maxFrameBytes = options.maxFrameBytes;
    this.chunks = [];
    this.head = 0;
    this.headPosition = 0;
    this.buffered = 0;
    this.pendingSize = -1;
    this.poisoned = false;
  }

  /** Bytes received and not yet returned in a frame. */
  get bufferedBytes(): number {
    return this.buffered;
  }

  /** Adds socket data. Throws (and poisons the reader) when a size prefix is too large or negative. */
  push(chunk: Buffer): void {
    assert(!this.poisoned, 'FrameReader.push: reader failed earlier; close the connection');
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    this.maybeReadSize();
  }

  /** The next complete frame body (without its size prefix), or null if none is complete yet. */
  next(): Buffer | null {
    assert(!this.poisoned, 'FrameReader.next: reader failed earlier; close the connection');
    if (this.pendingSize === -1 || this.buffered < this.pendingSize) return null;
    const frame = this.take(this.pendingSize);
    this.pendingSize = -1;
    this.maybeReadSize();
    return frame;
  }

  private maybeReadSize(): void {
    if (this.pendingSize !== -1 || this.buffered < 4) return;
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
    this.pendingSize = size;
  }

  /** Removes `size` buffered bytes: a slice when they lie in one chunk, else one copy. */
  private take(size: number): Buffer {
    if (size === 0) return EMPTY;
    const first = this.chunks[this.head] as Buffer;
    const available = first.length - this.headPosition;
    if (size <= available) {
      const slice = first.subarray(this.headPosition, this.headPosition + size);
      this.consume(size);
      return slice;
    }
    const out = Buffer.allocUnsafe(size);
    let filled = 0;
    while (filled < size) {
      const chunk = this.chunks[this.head] as Buffer;
      const n = Math.min(size - filled, chunk.length - this.headPosition);
      chunk.copy(out, filled, this.headPosition, this.headPosition + n);
      filled += n;
      this.consume(n);
    }
    return out;
  }

  private consume(size: number): void {
    this.buffered -= size;
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
