// gzip (RFC 1952) written in segments without an async zlib stream: Node 20
// has no synchronous deflate that can flush, so each segment is one
// `deflateRawSync` call, ended with Z_SYNC_FLUSH (finishFlush) so it stops on
// a byte boundary without BFINAL, primed with the last 32 KiB of input as the
// preset dictionary. Raw deflate writes nothing for a dictionary, so the
// segments concatenate into ONE deflate stream whose back-references reach
// into the previous segment exactly as a continuous stream's would (the
// inflater's 32 KiB window holds that data). The last segment ends with
// Z_FINISH (BFINAL), then the trailer: CRC-32 (zlib.crc32) and ISIZE.
//   header  1f 8b 08 00 | mtime 0 | xfl 0 | os ff        10 bytes
//   deflate segment* (sync-flushed) + last segment (final)
//   trailer crc32 LE, isize LE                            8 bytes
// Cost: a new zlib context per segment (~tens of µs) and a fresh Huffman
// table per segment (< 100 bytes); the matches across segments are kept.
// Why not the alternatives: zlib.createGzip().flush() is async (threadpool)
// and the builder is synchronous; one gzip member per flush costs 18 bytes
// each and not every consumer reads multi-member gzip.
import * as zlib from 'node:zlib';
import { assert } from '@seglog/common';
import { Codec } from '../../compression.js';
import { GZIP_LEVEL_DEFAULT, GZIP_LEVEL_MAX, GZIP_LEVEL_MIN } from '../codecs/gzip.js';
import type { StreamCompressor } from './stream-compressor.js';

const HEADER = Uint8Array.of(0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff);
const TRAILER_BYTES = 8;
const WINDOW_BYTES = 32 * 1024;
/** A sync flush ends with an empty stored block: 3 bits, padding, 00 00 ff ff. */
const SYNC_FLUSH_BYTES = 5;

/** zlib deflateBound for raw deflate with the default windowBits and memLevel. */
export function rawDeflateBound(inputBytes: number): number {
  return inputBytes + Math.floor(inputBytes / 4096) + Math.floor(inputBytes / 16384) + Math.floor(inputBytes / 33554432) + 7;
}

export class GzipStream implements StreamCompressor {
  readonly codec = Codec.gzip;
  outputBytes: number;
  private readonly level: number;
  private readonly chunks: Uint8Array[];
  private readonly window: Buffer;
  private windowBytes: number;
  private crc: number;
  private inputBytes: number;

  constructor(level: number | undefined) {
    const resolved = level ?? GZIP_LEVEL_DEFAULT;
    assert(Number.isInteger(resolved), 'GzipStream: level must be an integer');
    assert(resolved >= GZIP_LEVEL_MIN && resolved <= GZIP_LEVEL_MAX, 'GzipStream: level out of range');
    this.level = resolved;
    this.chunks = [HEADER];
    this.outputBytes = HEADER.length;
    this.window = Buffer.allocUnsafe(WINDOW_BYTES);
    this.windowBytes = 0;
    this.crc = 0;
    this.inputBytes = 0;
  }

  /**
   * Worst case = committed + a sync-flushed segment of the pending bytes
   * (deflateBound + the flush marker) + a final segment (deflateBound(0),
   * really `03 00`) + trailer. Charging the pending bytes as a flushed
   * segment plus an empty final one (not as one final segment) keeps the
   * bound monotone: bound(0) after flush(k) <= bound(k) before it, so a
   * batch that fitted before a measuring flush still fits after it.
   */
  bound(pendingBytes: number): number {
    const segment = pendingBytes === 0 ? 0 : rawDeflateBound(pendingBytes) + SYNC_FLUSH_BYTES;
    return this.outputBytes + segment + rawDeflateBound(0) + TRAILER_BYTES;
  }

  flush(input: Uint8Array): void {
    if (input.length === 0) return;
    this.segment(input, zlib.constants.Z_SYNC_FLUSH);
  }

  finish(input: Uint8Array): readonly Uint8Array[] {
    this.segment(input, zlib.constants.Z_FINISH);
    const trailer = Buffer.allocUnsafe(TRAILER_BYTES);
    trailer.writeUInt32LE(this.crc >>> 0, 0);
    trailer.writeUInt32LE(this.inputBytes % 0x1_0000_0000, 4);
    this.chunks.push(trailer);
    this.outputBytes += TRAILER_BYTES;
    return this.chunks;
  }

  dispose(): void {
    this.chunks.length = 0;
  }

  private segment(input: Uint8Array, finishFlush: number): void {
    const options: zlib.ZlibOptions = { level: this.level, finishFlush };
    if (this.windowBytes > 0) options.dictionary = this.window.subarray(WINDOW_BYTES - this.windowBytes);
    // No assert on the segment's size: a codec above its bound is an
    // operating fault the builder handles (it checks the sealed size).
    const output = zlib.deflateRawSync(input, options);
    this.chunks.push(output);
    this.outputBytes += output.length;
    // Never call crc32 on empty input: an empty buffer may have a NULL data
    // pointer, and zlib's crc32(crc, NULL, 0) returns 0, not crc (seen on
    // Node 20.20 after deflateRawSync of Buffer.alloc(0)).
    if (input.length > 0) this.crc = zlib.crc32(input, this.crc);
    this.inputBytes += input.length;
    this.slide(input);
  }

  /** Keeps the last 32 KiB of input, right-aligned in `window`. */
  private slide(input: Uint8Array): void {
    if (input.length >= WINDOW_BYTES) {
      this.window.set(input.subarray(input.length - WINDOW_BYTES));
      this.windowBytes = WINDOW_BYTES;
      return;
    }
    const keep = Math.min(this.windowBytes, WINDOW_BYTES - input.length);
    this.window.copyWithin(WINDOW_BYTES - keep - input.length, WINDOW_BYTES - keep, WINDOW_BYTES);
    this.window.set(input, WINDOW_BYTES - input.length);
    this.windowBytes = keep + input.length;
  }
}
