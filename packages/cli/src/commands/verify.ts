// `seglog verify <dir>`: read-only consistency check of a data or partition
// directory (see internal/verifier.ts for the checks). Exit 0: no damage
// (possibly "needs recovery": only what an unclean stop leaves and the next
// recovery repairs by design); 1: damage (one line each: file,
// position/offset, what); 2: usage.
//
// Why 0 for "needs recovery": the broker's own start (or `seglog recover`)
// runs exactly that recovery, so `seglog verify <dir> && pnpm start` must
// not refuse a directory that a kill -9 left with every record intact. The
// summary line and --json's `needsRecovery` say it.

import { COMMON_OPTIONS } from '../command-spec.js';
import type { CommandSpec } from '../command-spec.js';
import type { Finding } from '../internal/verifier.js';
import { Verifier } from '../internal/verifier.js';
import { listSegments, resolveLogDirs } from '../internal/log-dirs.js';

function findingText(f: Finding): string {
  const where = [f.position === undefined ? '' : `position ${f.position}`, f.offset === undefined ? '' : `offset ${f.offset}`].filter((s) => s !== '').join(' ');
  return `${f.severity}: ${f.file}${where === '' ? '' : ` ${where}`}: ${f.what}`;
}

function verdict(s: { problems: number; recovery: number; notes: number }, target: string): string {
  const notes = s.notes > 0 ? `, ${s.notes} notes` : '';
  const recovery = `needs recovery after an unclean stop (expected, ${s.recovery} recovery findings): the next broker start, or pnpm seglog recover ${target}, repairs them`;
  if (s.problems === 0) return s.recovery === 0 ? `OK, no problems${notes}` : `no damage; ${recovery}${notes}`;
  return `${s.problems} problems (damage)${s.recovery > 0 ? `; also ${recovery}` : ''}${notes}`;
}

export const verifyCommand: CommandSpec = {
  name: 'verify',
  summary: 'check segments, indexes, checkpoints and snapshots; exit 1 on damage, 0 when clean or only needing recovery',
  args: '<data-dir|partition-dir>',
  description: [
    'Scans every segment: framing, CRC-32C of every batch, offsets increasing within a segment and inside',
    '[base offset, next segment\'s base). Checks the offset index (entries increasing, each at a batch start whose',
    'last offset is the entry\'s offset), the time index (monotonic, each timestamp at most the largest batch max',
    'timestamp up to its offset), the txn index, the leader-epoch checkpoint (epochs and start offsets',
    'increasing), producer snapshots (parse, CRC) and, for a data directory, the recovery-point and log-start',
    'checkpoints (parse, at most the log end offset). One line per finding, the file, position and/or offset, and',
    'what; nothing is modified. Findings are "problem:" (damage or an inconsistency), "recovery:" (expected after',
    'an unclean stop, i.e. no clean-shutdown marker: the zero-filled preallocated tail and a partial last batch of',
    'the active segment, index entries past the valid data; each line says what recovery will do) or "note:".',
    'Index findings are one line per file. Exit codes: 0 no problem (the summary says "needs recovery" when there',
    'are recovery findings: the next broker start or seglog recover repairs them), 1 problems (damage), 2 usage.',
  ],
  options: {
    strict: { type: 'boolean', description: 'treat offset gaps between batches of a segment as problems (default: notes)' },
    json: { type: 'boolean', description: 'print one JSON object per finding, then a summary object' },
    ...COMMON_OPTIONS,
  },
  positionals: 1,
  async run(ctx, positionals, values) {
    const dirs = await resolveLogDirs(ctx.io, positionals[0] as string);
    let totalBytes = 0;
    for (const p of dirs.partitions) for (const s of await listSegments(ctx.io, p.dir)) totalBytes += s.logBytes;
    const progress = ctx.progress('verify', totalBytes);
    const verifier = new Verifier(ctx.io, { strict: values['strict'] === true }, progress);
    try {
      await verifier.verify(dirs);
    } finally {
      progress.done();
    }
    const json = values['json'] === true;
    for (const finding of verifier.findings) ctx.out(json ? JSON.stringify({ type: 'finding', ...finding }) : findingText(finding));
    const problems = verifier.problems;
    const recovery = verifier.recoveryItems;
    const notes = verifier.findings.length - problems - recovery;
    const needsRecovery = recovery > 0;
    const summary = { partitions: dirs.partitions.length, segments: verifier.segments, batches: verifier.batches, problems, recovery, notes, needsRecovery };
    ctx.out(json ? JSON.stringify({ type: 'summary', ...summary }) : `verified ${summary.partitions} partitions, ${summary.segments} segments, ${summary.batches} batches: ${verdict(summary, positionals[0] as string)}`);
    return problems === 0 ? 0 : 1;
  },
};
