// Memory for codec output, in one place so that the decompression cap can be
// enforced and measured.
//
// Every Buffer a codec allocates for its output goes through allocOutput, which
// counts it in codecAllocation. Tests read the counter to prove that a hostile
// payload never makes a codec allocate more than its cap (plus bounded
// scratch). Native libraries allocate their own working memory; that is
// bounded per codec and described in CODECS.md.
//
// GrowableOutput is the output of a decoder that does not know its exact
// output size up front (lz4 frames without a content size, zstd frames without
// one). It grows by doubling but never past `maxBytes`, so a stream that wants
// more than the cap fails when it asks for room beyond the cap, before the
// room is allocated.

import { assert } from '@seglog/common';

/** Allocation counters for codec output buffers (monotonic; tests diff them). */
export const codecAllocation = { count: 0, bytes: 0, largestBytes: 0 };

/** Largest size any codec buffer may have: positions in a batch are int32. */
export const CODEC_BYTES_MAX = 0x7fff_ffff;

export function allocOutput(bytes: number): Buffer {
  assert(Number.isSafeInteger(bytes), 'allocOutput: bytes must be an integer');
  assert(bytes >= 0, 'allocOutput: bytes must not be negative');
  assert(bytes <= CODEC_BYTES_MAX, 'allocOutput: bytes above the int32 limit');
  codecAllocation.count += 1;
  codecAllocation.bytes += bytes;
  if (bytes > codecAllocation.largestBytes) codecAllocation.largestBytes = bytes;
  // Uninitialised memory is fine: callers return only the prefix they wrote.
  return Buffer.allocUnsafe(bytes);
}

const EMPTY = Buffer.alloc(0);

/** Returns a Buffer holding exactly `bytes[0, length)`, copying only when the slack is large. */
export function trimOutput(bytes: Buffer, length: number): Buffer {
  assert(length <= bytes.length, 'trimOutput: length beyond buffer');
  if (length === 0) return EMPTY;
  if (length === bytes.length) return bytes;
  // Keep the slice when it wastes at most a quarter; otherwise copy so the
  // caller does not pin up to 2x the memory it needs.
  if (bytes.length - length <= length >>> 2) return bytes.subarray(0, length);
  const exact = allocOutput(length);
  bytes.copy(exact, 0, 0, length);
  return exact;
}

const INITIAL_BYTES_MIN = 64 * 1024;

export class GrowableOutput {
  /** Backing memory; bytes [0, length) are output. */
  bytes: Buffer;
  /** Bytes of output produced so far. */
  length: number;
  /** Hard ceiling on `bytes.length` (the cap, or an exact declared size). */
  readonly maxBytes: number;

  constructor(initialBytes: number, maxBytes: number) {
    assert(Number.isSafeInteger(maxBytes) && maxBytes >= 0, 'GrowableOutput: bad maxBytes');
    assert(maxBytes <= CODEC_BYTES_MAX, 'GrowableOutput: maxBytes above the int32 limit');
    this.bytes = allocOutput(Math.min(Math.max(initialBytes, 0), maxBytes));
    this.length = 0;
    this.maxBytes = maxBytes;
  }

  /** Capacity left before the buffer must grow. */
  free(): number {
    return this.bytes.length - this.length;
  }

  /**
   * Makes room for `needBytes` more bytes of output. Returns false, allocating
   * nothing, when that would pass maxBytes.
   */
  reserve(needBytes: number): boolean {
    assert(needBytes >= 0, 'GrowableOutput.reserve: negative size');
    if (needBytes <= this.bytes.length - this.length) return true;
    if (needBytes > this.maxBytes - this.length) return false;
    const want = this.length + needBytes;
    const doubled = Math.max(this.bytes.length * 2, INITIAL_BYTES_MIN);
    const grown = allocOutput(Math.min(this.maxBytes, Math.max(want, doubled)));
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
    return true;
  }

  /** Grows towards maxBytes by doubling; returns false if already at maxBytes. */
  grow(): boolean {
    if (this.bytes.length >= this.maxBytes) return false;
    return this.reserve(Math.min(this.maxBytes - this.length, Math.max(this.bytes.length, INITIAL_BYTES_MIN)));
  }

  finish(): Buffer {
    assert(this.length <= this.bytes.length, 'GrowableOutput: length beyond buffer');
    return trimOutput(this.bytes, this.length);
  }
}

/** A reusable scratch buffer for compressors, kept up to `retainBytesMax`. */
export class ScratchBuffer {
  private bytes: Buffer;
  private readonly retainBytesMax: number;

  constructor(retainBytesMax: number) {
    this.bytes = EMPTY;
    this.retainBytesMax = retainBytesMax;
  }

  /** Returns a buffer of at least `bytes` bytes; valid until the next call. */
  get(bytes: number): Buffer {
    if (bytes <= this.bytes.length) return this.bytes;
    const fresh = allocOutput(bytes);
    if (bytes <= this.retainBytesMax) this.bytes = fresh;
    return fresh;
  }
}

/** Copies `bytes[0, length)` into an exactly sized new Buffer. */
export function copyOut(bytes: Uint8Array, length: number): Buffer {
  if (length === 0) return EMPTY;
  const exact = allocOutput(length);
  exact.set(bytes.subarray(0, length), 0);
  return exact;
}
