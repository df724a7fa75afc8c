// The three operating errors a codec raises. Every failure on hostile input
// ends in one of these (library errors are wrapped, never rethrown raw), so the
// batch code branches on `code` alone:
// - SEGLOG_ERR_RECORDS_DECOMPRESSION_LIMIT (Kafka INVALID_RECORD): the declared
//   or produced output would exceed the caller's cap; raised before the memory
//   for the excess is allocated.
// - SEGLOG_ERR_RECORDS_CORRUPT_COMPRESSION (Kafka CORRUPT_MESSAGE): the stream
//   is malformed (bad magic, truncated, checksum mismatch, invalid sequence).
// - SEGLOG_ERR_RECORDS_UNSUPPORTED_CODEC (Kafka UNSUPPORTED_COMPRESSION_TYPE):
//   attribute codec ids 5..7.

import { SeglogError } from '@seglog/common';

export const DECOMPRESSION_LIMIT = 'SEGLOG_ERR_RECORDS_DECOMPRESSION_LIMIT';
export const CORRUPT_COMPRESSION = 'SEGLOG_ERR_RECORDS_CORRUPT_COMPRESSION';
export const UNSUPPORTED_CODEC = 'SEGLOG_ERR_RECORDS_UNSUPPORTED_CODEC';

export type CodecLabel = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';

/**
 * The output would exceed `maxOutputBytes`. `outputBytes` is the declared
 * size (a header field or a running total of declared sizes) or the number of
 * bytes already produced plus at least one more.
 */
export function decompressionLimitError(
  codec: CodecLabel,
  details: { readonly maxOutputBytes: number; readonly outputBytes: number; readonly declared: boolean },
): SeglogError {
  const what = details.declared ? 'declares' : 'produces more than';
  return new SeglogError(
    DECOMPRESSION_LIMIT,
    `${codec} payload ${what} ${details.outputBytes} bytes, above the ${details.maxOutputBytes}-byte decompression limit`,
    {
      kafka: 'INVALID_RECORD',
      context: {
        codec,
        maxOutputBytes: details.maxOutputBytes,
        outputBytes: details.outputBytes,
        declared: details.declared,
      },
    },
  );
}

/** The compressed stream is malformed; `position` is the input byte where it was noticed. */
export function corruptCompressionError(
  codec: CodecLabel,
  reason: string,
  position: number,
  cause?: unknown,
): SeglogError {
  return new SeglogError(CORRUPT_COMPRESSION, `corrupt ${codec} payload at byte ${position}: ${reason}`, {
    kafka: 'CORRUPT_MESSAGE',
    context: { codec, position, reason },
    ...(cause === undefined ? {} : { cause }),
  });
}

export function unsupportedCodecError(codecId: number): SeglogError {
  return new SeglogError(
    UNSUPPORTED_CODEC,
    `compression codec id ${codecId} is not supported (known: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)`,
    { kafka: 'UNSUPPORTED_COMPRESSION_TYPE', context: { codecId } },
  );
}
