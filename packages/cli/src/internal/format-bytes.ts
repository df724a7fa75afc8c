// How dump shows keys, values and header values: UTF-8 text when every
// character is printable, else hex; at most `maxBytes` bytes, with the rest
// counted. Text is JSON-quoted so spaces and quotes stay unambiguous.

export interface FormattedBytes {
  /** 'null', 'text' or 'hex'. */
  readonly encoding: 'null' | 'text' | 'hex';
  /** The shown part: the text (for 'text') or hex digits (for 'hex'); '' for null. */
  readonly shown: string;
  /** Full length in bytes (-1 for null). */
  readonly size: number;
  /** Bytes not shown. */
  readonly truncatedBytes: number;
}

// Printable: tab, newline, carriage return, and no other C0/C1 control or replacement character.
const UNPRINTABLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffd]/u;

export function formatBytes(bytes: Uint8Array | null, maxBytes: number): FormattedBytes {
  if (bytes === null) return { encoding: 'null', shown: '', size: -1, truncatedBytes: 0 };
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, maxBytes));
  const truncatedBytes = bytes.length - head.length;
  const text = decodeUtf8(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), head.length);
  if (text !== null && !UNPRINTABLE.test(text)) return { encoding: 'text', shown: text, size: bytes.length, truncatedBytes };
  return { encoding: 'hex', shown: head.toString('hex'), size: bytes.length, truncatedBytes };
}

/** Renders for the text output: null, "text", hex:abcd, with "…(+N bytes)" when truncated. */
export function bytesToText(formatted: FormattedBytes): string {
  if (formatted.encoding === 'null') return 'null';
  const body = formatted.encoding === 'text' ? JSON.stringify(formatted.shown) : `hex:${formatted.shown}`;
  return formatted.truncatedBytes > 0 ? `${body}…(+${formatted.truncatedBytes} bytes)` : body;
}

/** Renders for --json: null, or { text | hex, size, truncatedBytes }. */
export function bytesToJson(formatted: FormattedBytes): unknown {
  if (formatted.encoding === 'null') return null;
  return { [formatted.encoding]: formatted.shown, size: formatted.size, truncatedBytes: formatted.truncatedBytes };
}

/**
 * The first `limit` bytes as UTF-8 text, or null when they are not valid
 * UTF-8. A multi-byte character cut by the limit is dropped, not an error.
 */
function decodeUtf8(all: Buffer, limit: number): string | null {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for (let cut = limit; cut >= Math.max(0, limit - 3); cut--) {
    try {
      // Validate the whole prefix up to the cut; a cut inside a character fails and we step back.
      return decoder.decode(all.subarray(0, cut));
    } catch {
      if (cut === all.length) return null; // the whole value is not UTF-8
    }
  }
  return null;
}
