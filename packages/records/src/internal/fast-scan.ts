// The validation walk of an uncompressed batch's records in one tight loop:
// local variables instead of a cursor's fields and getters, a one-byte fast
// form for every varint. It accepts exactly what RecordCursor accepts or
// gives up: on anything unusual (a malformed record, a varint longer than 4
// bytes, a varlong longer than 8, a value near the safe-integer edge) it
// returns false and the caller runs the strict cursor pass, which raises the
// precise error (or, for a rare but valid form, gives the same answer).
// Record format: record-cursor.ts. The differential property test in
// test/fast-scan.test.ts holds the two walks to the same verdicts.
//
// Measured on the append loop of bench/hotpath (100 B records): the cursor
// pass was ~6.6% of the event loop's samples (next + readBody + readVarint +
// readVarlong + the getters); see the commit for before/after.

/** What the walk found; one module-level instance, overwritten per call (synchronous, never re-entered). */
export class FastScanResult {
  maxTimestamp = -1;
  maxTimestampIndex = -1;
  consecutive = true;
  keyErrorIndex = -1;
  timestampErrorIndex = -1;
  timestampError = 0;
}

export interface FastScanRules {
  readonly baseTimestamp: number;
  readonly baseOffset: number;
  readonly boundTimestamps: boolean;
  readonly now: number;
  readonly beforeMaxMs: number;
  readonly afterMaxMs: number;
  readonly compacted: boolean;
}

export const fastScanResult = new FastScanResult();

// The walk's position, shared by the small readers below (module state: the walk is synchronous).
let pos = 0;
/** Set by a reader that met a form it leaves to the strict pass. */
let bail = false;

/** A zig-zag varint of at most 4 bytes (< 2^28 before zig-zag), bounded by `limit`; else bail. */
function varint(buf: Uint8Array, limit: number): number {
  if (pos >= limit) { bail = true; return 0; }
  let b = buf[pos++]!;
  let u = b & 0x7f;
  if (b >= 0x80) {
    for (let shift = 7; ; shift += 7) {
      if (shift === 28 || pos >= limit) { bail = true; return 0; }
      b = buf[pos++]!;
      u |= (b & 0x7f) << shift;
      if (b < 0x80) break;
    }
  }
  return (u >>> 1) ^ -(u & 1);
}

/** A zig-zag varlong of at most 7 bytes (|n| < 2^48: exact, far from the safe-integer edge); else bail. */
function varlong(buf: Uint8Array, limit: number): number {
  if (pos >= limit) { bail = true; return 0; }
  let b = buf[pos++]!;
  const sign = b & 1;
  let v = (b & 0x7f) >>> 1;
  let scale = 64;
  for (let i = 1; b >= 0x80; i++) {
    if (i === 7 || pos >= limit) { bail = true; return 0; }
    b = buf[pos++]!;
    v += (b & 0x7f) * scale;
    scale *= 128;
  }
  return sign === 0 ? v : -v - 1;
}

/**
 * Walks `count` records in buf[start, end). True: every record is well formed
 * (as RecordCursor would find it) and `fastScanResult` holds the findings.
 * False: the strict pass must decide.
 */
export function fastScanRecords(buf: Uint8Array, start: number, end: number, count: number, rules: FastScanRules): boolean {
  const r = fastScanResult;
  r.maxTimestamp = -1;
  r.maxTimestampIndex = -1;
  r.consecutive = true;
  r.keyErrorIndex = -1;
  r.timestampErrorIndex = -1;
  r.timestampError = 0;
  pos = start;
  bail = false;
  if (Math.abs(rules.baseTimestamp) >= 2 ** 52 || rules.baseOffset >= 2 ** 52) return false; // keep sums exact
  // A producer's LogAppendTime batch is rejected; the strict pass words the error (its records carry maxTimestamp).
  for (let index = 0; index < count; index++) {
    const length = varint(buf, end);
    if (bail || length < 0 || length > end - pos) return false;
    const limit = pos + length;
    if (pos >= limit) return false; // attributes
    pos++;
    const timestampDelta = varlong(buf, limit);
    const offsetDelta = varint(buf, limit);
    const keyLength = varint(buf, limit);
    if (bail || keyLength < -1 || keyLength > limit - pos) return false;
    if (keyLength > 0) pos += keyLength;
    const valueLength = varint(buf, limit);
    if (bail || valueLength < -1 || valueLength > limit - pos) return false;
    if (valueLength > 0) pos += valueLength;
    const headers = varint(buf, limit);
    if (bail || headers < 0 || headers > limit - pos) return false;
    for (let h = 0; h < headers; h++) {
      const hk = varint(buf, limit);
      if (bail || hk < 0 || hk > limit - pos) return false;
      pos += hk;
      const hv = varint(buf, limit);
      if (bail || hv < -1 || hv > limit - pos) return false;
      if (hv > 0) pos += hv;
    }
    if (pos !== limit) return false;
    // The strict pass's unsafe-integer rule cannot trigger: |delta| < 2^48, bases < 2^52.
    const timestamp = rules.baseTimestamp + timestampDelta;
    if (offsetDelta !== index) r.consecutive = false;
    if (timestamp > r.maxTimestamp) {
      r.maxTimestamp = timestamp;
      r.maxTimestampIndex = index;
    }
    if (rules.compacted && keyLength < 0) {
      if (r.keyErrorIndex < 0) r.keyErrorIndex = index;
    } else if (r.timestampErrorIndex < 0) {
      const outOfBounds = rules.boundTimestamps && timestamp !== -1 &&
        (rules.now - timestamp > rules.beforeMaxMs || timestamp - rules.now > rules.afterMaxMs);
      if (outOfBounds) {
        r.timestampErrorIndex = index;
        r.timestampError = timestamp;
      }
    }
  }
  return pos === end;
}
