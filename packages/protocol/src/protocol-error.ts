// Typed errors of the protocol layer. Every way a request can be malformed,
// too large or unsupported ends in one of these codes; the server answers by
// closing the connection (Kafka does the same for an unparseable request),
// except for the ApiVersions handshake fallback, which is answered.

import { SeglogError } from '@seglog/common';

export const ProtocolErrorCode = {
  /** Bytes that do not parse: truncated field, bad varint, negative length, bad tag order, trailing bytes. */
  MALFORMED: 'SEGLOG_ERR_PROTOCOL_MALFORMED',
  /** An int64 field whose value is not a safe JS integer (|v| > 2^53 − 1). */
  UNSAFE_INTEGER: 'SEGLOG_ERR_PROTOCOL_UNSAFE_INTEGER',
  /** A frame whose declared size exceeds the configured maximum, or is negative. */
  FRAME_TOO_LARGE: 'SEGLOG_ERR_PROTOCOL_FRAME_TOO_LARGE',
  /** A request for an API key the broker does not implement. */
  UNKNOWN_API: 'SEGLOG_ERR_PROTOCOL_UNKNOWN_API',
  /** A request version outside the range the broker advertises for that API. */
  UNSUPPORTED_VERSION: 'SEGLOG_ERR_PROTOCOL_UNSUPPORTED_VERSION',
} as const;

export type ProtocolErrorCodeName = (typeof ProtocolErrorCode)[keyof typeof ProtocolErrorCode];

export function protocolError(
  code: ProtocolErrorCodeName,
  message: string,
  context: Readonly<Record<string, unknown>> = {},
): SeglogError {
  return new SeglogError(code, message, { context });
}

/** The common case: input ran out or holds an impossible value at `position`. */
export function malformed(message: string, position: number, extra: Readonly<Record<string, unknown>> = {}): SeglogError {
  return new SeglogError(ProtocolErrorCode.MALFORMED, message, { context: { position, ...extra } });
}
