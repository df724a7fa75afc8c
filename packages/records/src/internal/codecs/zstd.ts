// zstd payloads (RFC 8878 frames), via zstd-napi's low-level binding (the
// reference C library, compiled at install from the sources in the npm
// tarball).
//
// Compression: one-shot ZSTD_compressCCtx on a reused context (the frame
// header carries the content size), default level 3 like Kafka.
//
// Decompression never trusts the input for memory:
// 1. A header pass walks every frame (ZSTD_getFrameContentSize,
//    ZSTD_findFrameCompressedSize; skippable frames by their size field) and
//    rejects the payload if the declared content sizes add up past the cap,
//    before anything is decoded or allocated.
// 2. If every frame declares its size, one-shot ZSTD_decompressDCtx decodes
//    into an exactly sized output (the common case: our own frames). Else
//    ZSTD_decompressStream writes into an output that grows by doubling up
//    to the cap. When it is full at the cap, one more call with a 1-byte
//    probe tells "done" from "wants more": any further output is the limit
//    error.
// 3. The window the decoder may allocate is bounded by windowLogMax: at least
//    8 MiB (what streaming encoders at levels <= 19 use when they do not know
//    the size, like Kafka's zstd-jni producers), at most zstd's default 128
//    MiB, and otherwise the cap rounded up to a power of two. A frame asking
//    for more is reported as the limit error.
// Multiple frames and skippable frames are accepted (the stream decoder
// handles both); anything else, truncation included, is corruption.

import { assert } from '@seglog/common';
import type * as ZstdBinding from 'zstd-napi/binding.js';
import { zstd, zstdAvailable } from './zstd-binding.js';
import { corruptCompressionError, decompressionLimitError } from './codec-errors.js';
import { GrowableOutput, ScratchBuffer, copyOut } from './output-buffer.js';

// The binding (zstd-binding.ts) is loaded with require; its enum values are
// read at run time: the .d.ts numbering differs from the native one
// (ResetDirective.sessionOnly is 1, DParameter.windowLogMax is 100). Without
// the binding the levels are zstd's documented bounds.

export const ZSTD_LEVEL_DEFAULT = 3;
export const ZSTD_LEVEL_MIN: number = zstdAvailable ? zstd.minCLevel() : -(1 << 17);
export const ZSTD_LEVEL_MAX: number = zstdAvailable ? zstd.maxCLevel() : 22;

const FRAME_MAGIC = 0xfd2fb528;
const SKIPPABLE_MAGIC = 0x184d2a50;
const SKIPPABLE_MAGIC_MASK = 0xfffffff0;
const WINDOW_LOG_FLOOR = 23;
const WINDOW_LOG_CEILING = 27;

/** ZSTD_compressBound: worst-case compressed size of `inputBytes` (one frame, one-shot). */
export function zstdCompressBound(inputBytes: number): number {
  const smallInputMargin = inputBytes < 128 * 1024 ? (128 * 1024 - inputBytes) >>> 11 : 0;
  return inputBytes + Math.floor(inputBytes / 256) + smallInputMargin;
}

let cctx: ZstdBinding.CCtx | undefined;
let dctx: ZstdBinding.DCtx | undefined;
const scratch = new ScratchBuffer(4 * 1024 * 1024);
const probe = new Uint8Array(1);

export function compressZstd(input: Uint8Array, level: number): Buffer {
  assert(Number.isInteger(level), 'compressZstd: level must be an integer');
  assert(level >= ZSTD_LEVEL_MIN && level <= ZSTD_LEVEL_MAX, 'compressZstd: level out of range');
  cctx ??= new zstd.CCtx();
  const output = scratch.get(zstdCompressBound(input.length));
  const written = cctx.compress(output, input, level);
  assert(written <= zstdCompressBound(input.length), 'compressZstd: output above its bound');
  return copyOut(output, written);
}

function read32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

/** Sum of the declared content sizes, or -1 if a frame does not declare one. Throws on a bad frame or the cap. */
function scanFrames(input: Uint8Array, maxOutputBytes: number): number {
  let at = 0;
  let declaredBytes = 0;
  let allDeclared = true;
  while (at < input.length) {
    if (input.length - at < 4) throw corruptCompressionError('zstd', 'truncated frame magic', at);
    const magic = read32(input, at);
    if (((magic & SKIPPABLE_MAGIC_MASK) >>> 0) === SKIPPABLE_MAGIC) {
      if (input.length - at < 8) throw corruptCompressionError('zstd', 'truncated skippable frame', at);
      const skipBytes = read32(input, at + 4);
      if (skipBytes > input.length - at - 8) throw corruptCompressionError('zstd', 'truncated skippable frame', at);
      at += 8 + skipBytes;
      continue;
    }
    if (magic !== FRAME_MAGIC) throw corruptCompressionError('zstd', 'bad frame magic', at);
    const frame = input.subarray(at);
    let contentBytes: number | null;
    let frameBytes: number;
    try {
      contentBytes = zstd.getFrameContentSize(frame);
      frameBytes = zstd.findFrameCompressedSize(frame);
    } catch (error) {
      throw corruptCompressionError('zstd', errorName(error), at, error);
    }
    if (contentBytes === null) {
      allDeclared = false;
    } else {
      declaredBytes += contentBytes;
      if (declaredBytes > maxOutputBytes) {
        throw decompressionLimitError('zstd', { maxOutputBytes, outputBytes: declaredBytes, declared: true });
      }
    }
    assert(frameBytes > 0 && frameBytes <= frame.length, 'scanFrames: frame size out of range');
    at += frameBytes;
  }
  return allDeclared ? declaredBytes : -1;
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function windowLogMax(maxOutputBytes: number): number {
  const capLog = Math.ceil(Math.log2(Math.max(maxOutputBytes, 1)));
  return Math.min(WINDOW_LOG_CEILING, Math.max(WINDOW_LOG_FLOOR, capLog));
}

export function decompressZstd(input: Uint8Array, maxOutputBytes: number): Buffer {
  if (input.length === 0) throw corruptCompressionError('zstd', 'empty input', 0);
  const declaredBytes = scanFrames(input, maxOutputBytes);
  const exact = declaredBytes >= 0;
  const output = new GrowableOutput(
    exact ? declaredBytes : Math.min(maxOutputBytes, Math.max(64 * 1024, input.length * 4)),
    exact ? declaredBytes : maxOutputBytes,
  );
  dctx ??= new zstd.DCtx();
  const context = dctx;
  context.reset(zstd.ResetDirective.sessionOnly);
  context.setParameter(zstd.DParameter.windowLogMax, windowLogMax(maxOutputBytes));
  try {
    if (exact) decodeExact(context, input, output);
    else streamFrames(context, input, output, maxOutputBytes);
  } catch (error) {
    // Leave the shared context clean for the next call whatever happened.
    context.reset(zstd.ResetDirective.sessionOnly);
    throw error;
  }
  return output.finish();
}

/**
 * Every frame declared its size and the total fits the cap: one-shot
 * ZSTD_decompressDCtx straight into the exact output (no window buffer;
 * zstd fails rather than write past the buffer or a declared size).
 */
function decodeExact(context: ZstdBinding.DCtx, input: Uint8Array, output: GrowableOutput): void {
  assert(output.length === 0, 'decodeExact: output must be empty');
  let producedBytes: number;
  try {
    producedBytes = context.decompress(output.bytes, input);
  } catch (error) {
    throw corruptCompressionError('zstd', errorName(error), 0, error);
  }
  if (producedBytes !== output.bytes.length) throw corruptCompressionError('zstd', 'content size mismatch', 0);
  output.length = producedBytes;
}

function streamFrames(context: ZstdBinding.DCtx, input: Uint8Array, output: GrowableOutput, maxOutputBytes: number): void {
  let at = 0;
  let frameDone = false;
  while (at < input.length || !frameDone) {
    const full = output.free() === 0 && !output.grow();
    const target = full ? probe : output.bytes.subarray(output.length);
    let result: [number, number, number];
    try {
      result = context.decompressStream(target, input.subarray(at));
    } catch (error) {
      const name = errorName(error);
      if (name === 'Frame requires too much memory for decoding') {
        throw decompressionLimitError('zstd', { maxOutputBytes, outputBytes: maxOutputBytes + 1, declared: true });
      }
      throw corruptCompressionError('zstd', name, at, error);
    }
    const [remaining, producedBytes, consumedBytes] = result;
    if (full && producedBytes > 0) {
      if (output.maxBytes === maxOutputBytes) {
        throw decompressionLimitError('zstd', { maxOutputBytes, outputBytes: maxOutputBytes + 1, declared: false });
      }
      throw corruptCompressionError('zstd', 'more output than the declared content sizes', at);
    }
    if (!full) output.length += producedBytes;
    at += consumedBytes;
    frameDone = remaining === 0;
    if (producedBytes === 0 && consumedBytes === 0 && !(frameDone && at === input.length)) {
      // No progress with output room (or the probe) available: the input
      // ended inside a frame. (zstd always progresses otherwise.)
      throw corruptCompressionError('zstd', 'truncated frame', at);
    }
  }
}
