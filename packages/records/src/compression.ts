// Compression codecs for record batch payloads (the bytes after the 61-byte
// header). CONTRACT between the batch code and the codec code: the signatures
// of Codec, compress and decompress are fixed; codec internals live in
// internal/codecs/. Formats, libraries, caps and worst-case bounds: CODECS.md.

import { assert } from '@seglog/common';
import { decompressionLimitError, unsupportedCodecError } from './internal/codecs/codec-errors.js';
import { GZIP_LEVEL_DEFAULT, GZIP_LEVEL_MAX, GZIP_LEVEL_MIN, compressGzip, decompressGzip, gzipCompressBound } from './internal/codecs/gzip.js';
import { compressLz4Frame, decompressLz4Frames, lz4FrameBound } from './internal/codecs/lz4-frame.js';
import { CODEC_BYTES_MAX } from './internal/codecs/output-buffer.js';
import { compressSnappyFramed, decompressSnappy, snappyFramedBound } from './internal/codecs/snappy.js';
import { ZSTD_LEVEL_DEFAULT, ZSTD_LEVEL_MAX, ZSTD_LEVEL_MIN, compressZstd, decompressZstd, zstdCompressBound } from './internal/codecs/zstd.js';

export const Codec = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;
export type CodecId = (typeof Codec)[keyof typeof Codec];
export type CodecName = keyof typeof Codec;

export interface CompressOptions {
  /** Codec-specific level; undefined means the codec's default. */
  readonly level?: number;
}

/** Valid compression levels of a codec (Kafka's compression.<codec>.level). */
export interface CompressionLevelRange {
  readonly min: number;
  readonly max: number;
  readonly default: number;
}

/**
 * Levels accepted per codec; null where the codec has no level (none,
 * snappy). lz4: Kafka's range 1..17 is accepted, but our compressor has a
 * single setting and ignores the level (CODECS.md).
 */
export const compressionLevels: Readonly<Record<CodecName, CompressionLevelRange | null>> = {
  none: null,
  gzip: { min: GZIP_LEVEL_MIN, max: GZIP_LEVEL_MAX, default: GZIP_LEVEL_DEFAULT },
  snappy: null,
  lz4: { min: 1, max: 17, default: 9 },
  zstd: { min: ZSTD_LEVEL_MIN, max: ZSTD_LEVEL_MAX, default: ZSTD_LEVEL_DEFAULT },
};

/** Codec ids the attributes field can carry (3 bits) but no Kafka version defines. */
const CODEC_ID_MAX = 7;

function assertCodecId(codec: number): void {
  assert(Number.isInteger(codec), 'codec id must be an integer');
  assert(codec >= 0 && codec <= CODEC_ID_MAX, 'codec id must fit the 3 attribute bits');
}

function asBuffer(input: Uint8Array): Buffer {
  return Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
}

/**
 * Compresses `input` (concatenated records) with `codec`. Codec 0 returns the
 * input unchanged (no copy).
 */
export function compress(codec: CodecId, input: Uint8Array, options?: CompressOptions): Buffer {
  assertCodecId(codec);
  assert(input.length <= CODEC_BYTES_MAX, 'compress: input above the int32 limit');
  const level = options?.level;
  switch (codec) {
    case Codec.none:
      return asBuffer(input);
    case Codec.gzip:
      return compressGzip(input, level ?? GZIP_LEVEL_DEFAULT);
    case Codec.snappy:
      return compressSnappyFramed(input);
    case Codec.lz4:
      assert(level === undefined || (Number.isInteger(level) && level >= 1 && level <= 17), 'compress: lz4 level out of range');
      return compressLz4Frame(input);
    case Codec.zstd:
      // Level 0 means "default" to zstd; we spell it out.
      return compressZstd(input, level === undefined || level === 0 ? ZSTD_LEVEL_DEFAULT : level);
    default:
      throw unsupportedCodecError(codec);
  }
}

/**
 * Decompresses `input` with `codec`, producing at most `maxOutputBytes`.
 * Throws SeglogError:
 * - SEGLOG_ERR_RECORDS_DECOMPRESSION_LIMIT (kafka INVALID_RECORD) when the
 *   declared or actual output exceeds maxOutputBytes, BEFORE allocating it;
 * - SEGLOG_ERR_RECORDS_CORRUPT_COMPRESSION (kafka CORRUPT_MESSAGE) for a
 *   malformed stream;
 * - SEGLOG_ERR_RECORDS_UNSUPPORTED_CODEC (kafka UNSUPPORTED_COMPRESSION_TYPE)
 *   for codec ids 5..7.
 * Never throws RangeError/TypeError on hostile input.
 */
export function decompress(codec: CodecId, input: Uint8Array, maxOutputBytes: number): Buffer {
  assertCodecId(codec);
  assert(Number.isSafeInteger(maxOutputBytes), 'decompress: maxOutputBytes must be an integer');
  assert(maxOutputBytes >= 0 && maxOutputBytes <= CODEC_BYTES_MAX, 'decompress: maxOutputBytes out of range');
  let output: Buffer;
  switch (codec) {
    case Codec.none:
      if (input.length > maxOutputBytes) {
        throw decompressionLimitError('none', { maxOutputBytes, outputBytes: input.length, declared: true });
      }
      return asBuffer(input);
    case Codec.gzip:
      output = decompressGzip(input, maxOutputBytes);
      break;
    case Codec.snappy:
      output = decompressSnappy(input, maxOutputBytes);
      break;
    case Codec.lz4:
      output = decompressLz4Frames(input, maxOutputBytes);
      break;
    case Codec.zstd:
      output = decompressZstd(input, maxOutputBytes);
      break;
    default:
      throw unsupportedCodecError(codec);
  }
  assert(output.length <= maxOutputBytes, 'decompress: codec produced more than the cap');
  return output;
}

/**
 * Worst-case size of `compress(codec, input)` for an input of `inputBytes`
 * (one-shot, as our compressors write it). The compressed-size batch builder
 * uses this as the slack for bytes written since its last measurement.
 */
export function compressBound(codec: CodecId, inputBytes: number): number {
  assertCodecId(codec);
  assert(Number.isSafeInteger(inputBytes) && inputBytes >= 0, 'compressBound: inputBytes must be a non-negative integer');
  switch (codec) {
    case Codec.none:
      return inputBytes;
    case Codec.gzip:
      return gzipCompressBound(inputBytes);
    case Codec.snappy:
      return snappyFramedBound(inputBytes);
    case Codec.lz4:
      return lz4FrameBound(inputBytes);
    case Codec.zstd:
      return zstdCompressBound(inputBytes);
    default:
      throw unsupportedCodecError(codec);
  }
}
