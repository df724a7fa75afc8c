// The contents of one simulated file: a size and a sparse map of fixed-size
// chunks. A chunk that is absent reads as zeros, so a file extended by
// ftruncate or fallocate costs no memory until it is written.
//
// Invariant: every byte at or beyond `size` inside a present chunk is zero, so
// extending the size again exposes zeros (what ftruncate promises).

import { assert } from '@seglog/common';

const CHUNK_BYTES = 4096;

export class SparseBytes {
  size: number;
  private readonly chunks: Map<number, Uint8Array>;

  constructor() {
    this.size = 0;
    this.chunks = new Map();
  }

  clone(): SparseBytes {
    const copy = new SparseBytes();
    copy.size = this.size;
    for (const [index, chunk] of this.chunks) copy.chunks.set(index, chunk.slice());
    return copy;
  }

  /** Copies up to `length` bytes at `position` into `target[targetOffset..]`; returns the count (0 at or past the end). */
  read(position: number, target: Uint8Array, targetOffset: number, length: number): number {
    const count = Math.max(0, Math.min(length, this.size - position));
    let done = 0;
    while (done < count) {
      const at = position + done;
      const index = Math.floor(at / CHUNK_BYTES);
      const within = at - index * CHUNK_BYTES;
      const n = Math.min(CHUNK_BYTES - within, count - done);
      const chunk = this.chunks.get(index);
      if (chunk === undefined) target.fill(0, targetOffset + done, targetOffset + done + n);
      else target.set(chunk.subarray(within, within + n), targetOffset + done);
      done += n;
    }
    return count;
  }

  /** Writes `source` at `position`, extending the size if needed. */
  write(position: number, source: Uint8Array): void {
    assert(Number.isSafeInteger(position) && position >= 0, 'SparseBytes.write: bad position');
    let done = 0;
    while (done < source.byteLength) {
      const at = position + done;
      const index = Math.floor(at / CHUNK_BYTES);
      const within = at - index * CHUNK_BYTES;
      const n = Math.min(CHUNK_BYTES - within, source.byteLength - done);
      let chunk = this.chunks.get(index);
      if (chunk === undefined) {
        chunk = new Uint8Array(CHUNK_BYTES);
        this.chunks.set(index, chunk);
      }
      chunk.set(source.subarray(done, done + n), within);
      done += n;
    }
    this.size = Math.max(this.size, position + source.byteLength);
  }

  /** Zeros [position, position+length) and extends the size to cover it. */
  zero(position: number, length: number): void {
    const end = position + length;
    let at = position;
    while (at < end) {
      const index = Math.floor(at / CHUNK_BYTES);
      const within = at - index * CHUNK_BYTES;
      const n = Math.min(CHUNK_BYTES - within, end - at);
      const chunk = this.chunks.get(index);
      if (chunk !== undefined) {
        if (n === CHUNK_BYTES) this.chunks.delete(index);
        else chunk.fill(0, within, within + n);
      }
      at += n;
    }
    this.size = Math.max(this.size, end);
  }

  /** Sets the size; bytes past a shrunk end are dropped and read as zeros if the file grows again. */
  truncate(size: number): void {
    assert(Number.isSafeInteger(size) && size >= 0, 'SparseBytes.truncate: bad size');
    if (size < this.size) {
      for (const index of [...this.chunks.keys()]) {
        const start = index * CHUNK_BYTES;
        if (start >= size) this.chunks.delete(index);
        else if (start + CHUNK_BYTES > size) (this.chunks.get(index) as Uint8Array).fill(0, size - start);
      }
    }
    this.size = size;
  }

  /** All bytes, as one new Buffer. */
  toBuffer(): Buffer {
    const out = Buffer.alloc(this.size);
    this.read(0, out, 0, this.size);
    return out;
  }
}
