// Test hook for the streaming compressors: lets a test make a codec fail or
// break its bound at a chosen call, to prove that the builder demotes and
// that a merge loses no record. Production code never sets it; the cost is
// one property read per flush/finish.
import type { CodecId } from '../../compression.js';

/** flush/finish: the streaming compressor; one-shot: the plain path's compress of a record alone. */
export type StreamFaultPoint = 'flush' | 'finish' | 'one-shot';

/**
 * Returns nothing to proceed normally, or a number of garbage bytes to append
 * to the payload (a codec that breaks its bound); may throw (a codec error).
 */
export type StreamFaultHook = (codec: CodecId, point: StreamFaultPoint) => number | undefined;

export const streamFaults: { hook: StreamFaultHook | null } = { hook: null };
