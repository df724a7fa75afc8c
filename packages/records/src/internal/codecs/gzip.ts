// gzip payloads (RFC 1952 members around RFC 1951 deflate), via node:zlib.
//
// Write: gzipSync with zlib's defaults (windowBits 15, memLevel 8), level
// default 6 like Kafka (Deflater.DEFAULT_COMPRESSION). Read: gunzipSync,
// which also decodes concatenated members, with maxOutputLength = the cap:
// zlib stops and throws ERR_BUFFER_TOO_LARGE as soon as the running output
// passes it, so memory stays within the cap plus one chunk. The chunk size
// follows the input (4x, 16 KiB .. 1 MiB, never above the cap) so a small
// payload does not allocate a large chunk and a large one is not assembled
// from hundreds of 16 KiB pieces. An empty input is corruption (Kafka's
// GZIPInputStream fails on it too).

import * as zlib from 'node:zlib';
import { assert } from '@seglog/common';
import { corruptCompressionError, decompressionLimitError } from './codec-errors.js';

export const GZIP_LEVEL_MIN = -1;
export const GZIP_LEVEL_MAX = 9;
export const GZIP_LEVEL_DEFAULT = 6;

const CHUNK_BYTES_MIN = 16 * 1024;
const CHUNK_BYTES_MAX = 1024 * 1024;
/** gzip header (10 bytes, no optional fields) + trailer (CRC-32, ISIZE). */
const GZIP_WRAPPER_BYTES = 18;

/**
 * deflateBound for zlib's default windowBits/memLevel, plus the gzip wrapper:
 * in the worst case deflate falls back to stored blocks (5 bytes per block of
 * at most 16 KiB with memLevel 8), which this bounds.
 */
export function gzipCompressBound(inputBytes: number): number {
  return (
    inputBytes +
    Math.floor(inputBytes / 4096) +
    Math.floor(inputBytes / 16384) +
    Math.floor(inputBytes / 33554432) +
    7 +
    GZIP_WRAPPER_BYTES
  );
}

export function compressGzip(input: Uint8Array, level: number): Buffer {
  assert(Number.isInteger(level), 'compressGzip: level must be an integer');
  assert(level >= GZIP_LEVEL_MIN && level <= GZIP_LEVEL_MAX, 'compressGzip: level out of range');
  const output = zlib.gzipSync(input, { level });
  assert(output.length <= gzipCompressBound(input.length), 'compressGzip: output above its bound');
  return output;
}

export function decompressGzip(input: Uint8Array, maxOutputBytes: number): Buffer {
  if (input.length === 0) throw corruptCompressionError('gzip', 'empty input', 0);
  // zlib needs maxOutputLength >= 1; a cap of 0 is checked after.
  const maxOutputLength = Math.max(1, maxOutputBytes);
  const chunkSize = Math.min(maxOutputLength, CHUNK_BYTES_MAX, Math.max(CHUNK_BYTES_MIN, input.length * 4));
  let output: Buffer;
  try {
    output = zlib.gunzipSync(input, { maxOutputLength, chunkSize: Math.max(chunkSize, zlib.constants.Z_MIN_CHUNK) });
  } catch (error) {
    if (isTooLarge(error)) {
      throw decompressionLimitError('gzip', { maxOutputBytes, outputBytes: maxOutputBytes + 1, declared: false });
    }
    const message = error instanceof Error ? error.message : String(error);
    throw corruptCompressionError('gzip', message, 0, error);
  }
  if (output.length > maxOutputBytes) {
    throw decompressionLimitError('gzip', { maxOutputBytes, outputBytes: output.length, declared: false });
  }
  return output;
}

function isTooLarge(error: unknown): boolean {
  return error instanceof RangeError && (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';
}
