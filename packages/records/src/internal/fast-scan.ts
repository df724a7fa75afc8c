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
// The walk's position and its findings live in locals (registers), not in
// module state or the result object: 2.5 -> 2.2 us per 100-record batch
// (issue 18; see the commit).

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

// The value the last reader decoded (module state: the walk is synchronous).
// The readers return the next position (kept in a local of the walk, not in
// module state), or -1 for a form they leave to the strict pass.
let value = 0;

/** A zig-zag varint of at most 4 bytes (< 2^28 before zig-zag) at `p`, bounded by `limit`, into `value`. */
function varintAt(buf: Uint8Array, p: number, limit: number): number {
  if (p >= limit) return -1;
  let b = buf[p++]!;
  if (b < 0x80) {
    value = (b >>> 1) ^ -(b & 1);
    return p;
  }
  let u = b & 0x7f;
  for (let shift = 7; ; shift += 7) {
    if (shift === 28 || p >= limit) return -1;
    b = buf[p++]!;
    u |= (b & 0x7f) << shift;
    if (b < 0x80) break;
  }
  value = (u >>> 1) ^ -(u & 1);
  return p;
}

/** A zig-zag varlong of at most 7 bytes (|n| < 2^48: exact, far from the safe-integer edge) at `p`, into `value`. */
function varlongAt(buf: Uint8Array, p: number, limit: number): number {
  if (p >= limit) return -1;
  let b = buf[p++]!;
  const sign = b & 1;
  let v = (b & 0x7f) >>> 1;
  let scale = 64;
  for (let i = 1; b >= 0x80; i++) {
    if (i === 7 || p >= limit) return -1;
    b = buf[p++]!;
    v += (b & 0x7f) * scale;
    scale *= 128;
  }
  value = sign === 0 ? v : -v - 1;
  return p;
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
  if (Math.abs(rules.baseTimestamp) >= 2 ** 52 || rules.baseOffset >= 2 ** 52) return false; // keep sums exact
  // Rules and findings in locals for the loop; the findings are stored once at the end (read only on true).
  const { baseTimestamp, boundTimestamps, now, beforeMaxMs, afterMaxMs, compacted } = rules;
  let maxTimestamp = -1;
  let maxTimestampIndex = -1;
  let consecutive = true;
  let keyErrorIndex = -1;
  let timestampErrorIndex = -1;
  let timestampError = 0;
  let p = start;
  // A producer's LogAppendTime batch is rejected; the strict pass words the error (its records carry maxTimestamp).
  for (let index = 0; index < count; index++) {
    p = varintAt(buf, p, end);
    if (p < 0) return false;
    const length = value;
    if (length < 0 || length > end - p) return false;
    const limit = p + length;
    if (p >= limit) return false; // attributes
    p++;
    p = varlongAt(buf, p, limit);
    if (p < 0) return false;
    const timestampDelta = value;
    p = varintAt(buf, p, limit);
    if (p < 0) return false;
    const offsetDelta = value;
    p = varintAt(buf, p, limit);
    if (p < 0) return false;
    const keyLength = value;
    if (keyLength < -1 || keyLength > limit - p) return false;
    if (keyLength > 0) p += keyLength;
    p = varintAt(buf, p, limit);
    if (p < 0) return false;
    const valueLength = value;
    if (valueLength < -1 || valueLength > limit - p) return false;
    if (valueLength > 0) p += valueLength;
    p = varintAt(buf, p, limit);
    if (p < 0) return false;
    const headers = value;
    if (headers < 0 || headers > limit - p) return false;
    for (let h = 0; h < headers; h++) {
      p = varintAt(buf, p, limit);
      if (p < 0) return false;
      const hk = value;
      if (hk < 0 || hk > limit - p) return false;
      p += hk;
      p = varintAt(buf, p, limit);
      if (p < 0) return false;
      const hv = value;
      if (hv < -1 || hv > limit - p) return false;
      if (hv > 0) p += hv;
    }
    if (p !== limit) return false;
    // The strict pass's unsafe-integer rule cannot trigger: |delta| < 2^48, bases < 2^52.
    const timestamp = baseTimestamp + timestampDelta;
    if (offsetDelta !== index) consecutive = false;
    if (timestamp > maxTimestamp) {
      maxTimestamp = timestamp;
      maxTimestampIndex = index;
    }
    if (compacted && keyLength < 0) {
      if (keyErrorIndex < 0) keyErrorIndex = index;
    } else if (timestampErrorIndex < 0) {
      const outOfBounds = boundTimestamps && timestamp !== -1 && (now - timestamp > beforeMaxMs || timestamp - now > afterMaxMs);
      if (outOfBounds) {
        timestampErrorIndex = index;
        timestampError = timestamp;
      }
    }
  }
  r.maxTimestamp = maxTimestamp;
  r.maxTimestampIndex = maxTimestampIndex;
  r.consecutive = consecutive;
  r.keyErrorIndex = keyErrorIndex;
  r.timestampErrorIndex = timestampErrorIndex;
  r.timestampError = timestampError;
  return p === end;
}
