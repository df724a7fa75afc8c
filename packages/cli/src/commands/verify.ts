// `seglog verify <dir>`: read-only consistency check of a data or partition
// directory (see internal/verifier.ts for the checks). Exit 0: no problem;
// 1: problems (one line each: file, position/offset, what); 2: usage.

import { COMMON_OPTIONS } from '../command-spec.js';
import type { CommandSpec } from '../command-spec.js';
import type { Finding } from '../internal/verifier.js';
import { Verifier } from '../internal/verifier.js';
import { listSegments, resolveLogDirs } from '../internal/log-dirs.js';

function findingText(f: Finding): string {
  const where = [f.position === undefined ? '' : `position ${f.position}`, f.offset === undefined ? '' : `offset ${f.offset}`].filter((s) => s !== '').join(' ');
  return `${f.severity}: ${f.file}${where === '' ? '' : ` ${where}`}: ${f.what}`;
}

export const verifyCommand: CommandSpec = {
  name: 'verify',
  summary: 'check segments, indexes, checkpoints and snapshots; exit 1 if anything is wrong',
  args: '<data-dir|partition-dir>',
  description: [
    'Scans every segment: framing, CRC-32C of every batch, offsets increasing within a segment and inside',
    '[base offset, next segment\'s base). Checks the offset index (entries increasing, each at a batch start whose',
    'last offset is the entry\'s offset), the time index (monotonic, each timestamp at most the largest batch max',
    'timestamp up to its offset), the txn index, the leader-epoch checkpoint (epochs and start offsets',
    'increasing), producer snapshots (parse, CRC) and, for a data directory, the recovery-point and log-start',
    'checkpoints (parse, at most the log end offset). One line per finding: "problem:" or "note:", the file,',
    'position and/or offset, and what. Nothing is modified. Exit code 0 when no problem is found, 1 otherwise.',
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
    const notes = verifier.findings.length - problems;
    const summary = { partitions: dirs.partitions.length, segments: verifier.segments, batches: verifier.batches, problems, notes };
    ctx.out(json
      ? JSON.stringify({ type: 'summary', ...summary })
      : `verified ${summary.partitions} partitions, ${summary.segments} segments, ${summary.batches} batches: ${problems === 0 ? 'OK, no problems' : `${problems} problems`}${notes > 0 ? `, ${notes} notes` : ''}`);
    return problems === 0 ? 0 : 1;
  },
};
