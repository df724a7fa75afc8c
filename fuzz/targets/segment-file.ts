// Segment files as untrusted input (reliability.md §3.9 "the same mutations
// on segment files", §4.3 "treat on-disk files as untrusted"): a cleanly
// closed log of the expected batches (1 KiB segments) on SimIo, then byte
// edits, a cut or appended garbage in one .log, then an open:
//
// - unclean, recovery point 0 (full rescan): a typed error, or a log that
//   passes the crash checker (test/lib/log-checker.ts) with nothing durable —
//   a gap-free, byte-exact prefix of what was appended, reads through the
//   indexes equal to the scan;
// - unclean, recovery point = log end, edits in the LAST segment only (the
//   one recovery rescans): SEGLOG_ERR_LOG_CORRUPTION, or a log that passes the
//   checker with everything durable (damage below the recovery point is
//   reported, never truncated away);
// - clean shutdown (nothing rescanned): a typed error or an open whose
//   chained reads return or fail typed — never an untyped throw.
//
// Edits skip the base offset and partition leader epoch fields: they are
// outside the batch CRC by Kafka's format, so a flip there is undetectable by
// design (the offset checks catch most of it, not all).
import fc from 'fast-check';
import type { FuzzTarget } from '../lib/target.js';
import { DIR, openLog } from '../../test/lib/crash-workload.js';
import { checkRecoveredLog, scanSegments, segmentFile } from '../../test/lib/log-checker.js';
import { applyEdits, closedLog, codeOf, isTyped, rewriteFile } from '../../test/lib/reliability-fixture.js';

const editArb = fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 4 });
const shapeArb = fc.constantFrom('edit', 'edit', 'cut', 'garbage', 'zeros');
const modeArb = fc.constantFrom('full', 'checkpointed', 'clean');

export const target: FuzzTarget = {
  description: 'reopen after byte edits, cuts and garbage in a .log: typed error or a valid prefix',
  property: () =>
    fc.asyncProperty(fc.integer({ min: 3, max: 24 }), fc.nat(), shapeArb, editArb, fc.nat(), modeArb, async (batches, pick, shape, edits, cut, mode) => {
      const { io, ledger, logEndOffset, bases } = await closedLog(batches);
      const base = mode === 'checkpointed' ? bases[bases.length - 1]! : bases[pick % bases.length]!;
      const [scanned] = await scanSegments(io, DIR, [base]);
      // Bytes outside the CRC: base offset [0, 8) and partition leader epoch [12, 16) of every batch.
      const outsideCrc = new Set<number>();
      for (const b of scanned!.batches) for (const [lo, hi] of [[0, 8], [12, 16]] as const) for (let i = lo; i < hi; i++) outsideCrc.add(b.position + i);
      await rewriteFile(io, segmentFile(DIR, base, '.log'), (bytes) => {
        switch (shape) {
          case 'cut': return bytes.subarray(0, cut % (bytes.length + 1));
          case 'garbage': return Buffer.concat([bytes, Buffer.from(edits.map((e) => e.value))]);
          case 'zeros': return Buffer.concat([bytes, Buffer.alloc(1 + (cut % 600))]);
          default: return applyEdits(bytes, edits, { skip: (at) => outsideCrc.has(at) });
        }
      });
      const recoveryPoint = mode === 'full' ? 0 : logEndOffset;
      let log;
      try {
        log = await openLog(io, { recoveryPoint, logStartOffset: 0, hadCleanShutdown: mode === 'clean' });
      } catch (error) {
        if (!isTyped(error)) throw new Error(`open (${mode}) threw untyped: ${(error as Error).stack ?? String(error)}`);
        if (mode === 'checkpointed' && codeOf(error) !== 'SEGLOG_ERR_LOG_CORRUPTION') throw new Error(`open (${mode}) threw ${codeOf(error)}`);
        return;
      }
      try {
        if (mode === 'clean') {
          let offset = log.logStartOffset;
          while (offset < log.logEndOffset) {
            const plan = await log.read(offset, 700);
            try { await plan.toBuffer(); } finally { await plan.release(); }
            if (plan.nextOffset <= offset) break;
            offset = plan.nextOffset;
          }
        } else {
          const expectation = ledger.expectation({ checkpoints: false, processCrash: false });
          await checkRecoveredLog(io, log, { ...expectation, durable: mode === 'full' ? 0 : logEndOffset, logStartMin: 0, logStartMax: 0 });
        }
      } catch (error) {
        if (!(mode === 'clean' && isTyped(error))) throw error;
      } finally {
        await log.close().catch(() => undefined);
      }
    }),
};
