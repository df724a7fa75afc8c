// LogPositions: the positions and state of one log, shared by the Log and
// its collaborators (flusher, retention, write queue, local log), so each of
// them reads the same numbers without reaching into the Log.
//
// Invariants (each position monotonic except through truncation):
//   logStart ≤ highWatermark ≤ logEnd,  durable ≤ written ≤ logEnd.
// - logEnd: accepted (offsets assigned, queued to the writer).
// - written: every byte of every batch below it is in the file.
// - durable (the recovery point): covered by a completed fdatasync.
// - highWatermark: set by the caller, clamped to [logStart, logEnd].
// state goes open → offline → closed or open → closed, never back; failure
// is the first I/O error (kept as the cause of later refusals).
//
// A hot object: one shape, every field assigned in the constructor.

import type { LogState } from './log-types.js';

export interface InitialPositions {
  readonly logEndOffset: number;
  readonly recoveryPoint: number;
  readonly logStartOffset: number;
}

export class LogPositions {
  logEnd: number;
  written: number;
  durable: number;
  highWatermark: number;
  logStart: number;
  state: LogState;
  failure: unknown;

  constructor(initial: InitialPositions) {
    this.logEnd = initial.logEndOffset;
    this.written = initial.logEndOffset;
    this.durable = initial.recoveryPoint;
    this.highWatermark = initial.logStartOffset;
    this.logStart = initial.logStartOffset;
    this.state = 'open';
    this.failure = undefined;
  }
}
