// Index files as untrusted input (reliability.md §3.9, §4.3 "validate index
// entries before using them"): a cleanly closed log of the expected batches,
// then byte edits, a cut, an extension or zeros in one segment's .index or
// .timeindex, then an open (clean shutdown or unclean with the recovery point
// at the log end). The open must either fail with a typed error or give a log
// that passes the crash checker with everything durable: reads through the
// offset index and offsetForTimestamp through the time index agree with a
// linear scan (so a damaged index was rebuilt or never trusted wrongly).
// Byte edits inside an index that recovery does not rescan are out of scope:
// no index has a checksum (Kafka's neither), so a plausible edited entry is
// undetectable there; see ENGINE BUG 5/6 in test/reliability-engine-bugs.test.ts
// for two such cases that give wrong answers or unreadable durable data.
// (Not asserted here: that every entry on disk names a batch boundary after
// close — an entry whose offset was raised out of range passes the load-time
// checks and is kept; see ENGINE BUG 5 in test/reliability-engine-bugs.test.ts.)
// A read may also fail with a typed error (SEGLOG_ERR_LOG_CORRUPTION: an
// entry pointing into a batch passes the load-time checks, which do not read
// the .log at every entry, and the read detects the malformed header): the
// damage is detected, never served as data. Wrong bytes are a failure.
import fc from 'fast-check';
import type { FuzzTarget } from '../lib/target.js';
import { DIR, openLog } from '../../test/lib/crash-workload.js';
import { checkRecoveredLog, segmentFile } from '../../test/lib/log-checker.js';
import { applyEdits, closedLog, isTyped, rewriteFile } from '../../test/lib/reliability-fixture.js';

const editArb = fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 4 });
const shapeArb = fc.constantFrom('edit', 'edit', 'cut', 'extend', 'zeros', 'empty');

export const target: FuzzTarget = {
  description: 'reopen after edits, cuts and extensions of .index/.timeindex: rebuilt, trusted only when right, or a typed error',
  property: () =>
    fc.asyncProperty(fc.integer({ min: 3, max: 24 }), fc.nat(), fc.constantFrom('.index', '.timeindex'), shapeArb, editArb, fc.nat(), fc.boolean(),
      async (batches, pick, suffix, shape, edits, n, clean) => {
        const { io, ledger, logEndOffset, bases } = await closedLog(batches);
        // Byte edits of an index that recovery does not rescan (clean shutdown, or a segment below
        // the recovery point's) are undetectable without index checksums (Kafka has none either):
        // they go to the rescanned last segment of an unclean open only.
        if (shape === 'edit') clean = false;
        const base = shape === 'edit' ? bases[bases.length - 1]! : bases[pick % bases.length]!;
        await rewriteFile(io, segmentFile(DIR, base, suffix), (bytes) => {
          switch (shape) {
            case 'cut': return bytes.subarray(0, n % (bytes.length + 1));
            case 'extend': return Buffer.concat([bytes, Buffer.from(edits.map((e) => e.value))]);
            case 'zeros': return Buffer.concat([bytes, Buffer.alloc(1 + (n % 64))]);
            case 'empty': return Buffer.alloc(0);
            default: return applyEdits(bytes, edits);
          }
        });
        let log;
        try {
          log = await openLog(io, { recoveryPoint: logEndOffset, logStartOffset: 0, hadCleanShutdown: clean });
        } catch (error) {
          if (!isTyped(error)) throw new Error(`open threw untyped: ${(error as Error).stack ?? String(error)}`);
          return;
        }
        try {
          const expectation = ledger.expectation({ checkpoints: false, processCrash: false });
          await checkRecoveredLog(io, log, { ...expectation, durable: logEndOffset, logStartMin: 0, logStartMax: 0 });
        } catch (error) {
          if (!isTyped(error)) throw error;
        } finally {
          await log.close().catch(() => undefined);
        }
      }),
};
