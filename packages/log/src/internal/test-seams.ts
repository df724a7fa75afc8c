// TEST-ONLY seams. Each flag switches on a deliberately broken variant of the
// engine (a "mutant", reliability.md §3.6) so the crash and fuzz suites can
// prove they catch it (test/mutants.test.ts, test/lib/mutants.ts). Nothing
// outside tests ever sets them; every flag is false in production, and each
// is read where the behaviour it breaks is decided:
// - ackBeforeSync:        Log's flusher releases durable() waiters before its fdatasync;
// - skipSegmentDirFsync:  Log's flush skips the directory fsync after segment files were created;
// - skipRecoveryCrc:      Segment recovery accepts a batch whose CRC does not match;
// - truncateBelowDurable: recovery cuts an invalid batch even below the recovery point
//   (read where recovery decides to refuse, and where it checks the log end);
// - keepIndexFailure:     an index write-back failure is only kept for the next call on that
//   index, not reported to the log (issue 23 item 2's bug; read in IndexFile).

export interface TestSeams {
  ackBeforeSync: boolean;
  skipSegmentDirFsync: boolean;
  skipRecoveryCrc: boolean;
  truncateBelowDurable: boolean;
  keepIndexFailure: boolean;
}

export const seams: TestSeams = {
  ackBeforeSync: false,
  skipSegmentDirFsync: false,
  skipRecoveryCrc: false,
  truncateBelowDurable: false,
  keepIndexFailure: false,
};
