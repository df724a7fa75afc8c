// Compression codecs for record batch payloads (the bytes after the 61-byte
// header). CONTRACT between the batch code and the codec code — keep these
// signatures; the codec implementation replaces the bodies.

export const Codec = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;
export type CodecId = (typeof Codec)[keyof typeof Codec];
export type CodecName = keyof typeof Codec;

export interface CompressOptions {
  /** Codec-specific level; undefined means the codec's default. */
  readonly level?: number;
}

/**
 * Compresses `input` (concatenated records) with `codec`. Codec 0 returns the
 * input unchanged (no copy).
 */
export function compress(codec: CodecId, input: Uint8Array, options?: CompressOptions): Buffer {
  void codec; void input; void options;
  throw new Error('compress: not implemented yet');
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
  void codec; void input; void maxOutputBytes;
  throw new Error('decompress: not implemented yet');
}
