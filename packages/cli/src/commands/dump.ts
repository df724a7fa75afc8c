// `seglog dump <file>`: one segment file, decoded. The kind comes from the
// file name (reference/kafka-storage.md §1); so does the base offset that
// makes index offsets absolute.

import path from 'node:path';
import { FileNames } from '@seglog/log';
import { COMMON_OPTIONS } from '../command-spec.js';
import type { CommandSpec } from '../command-spec.js';
import { cliError, usageError } from '../internal/cli-error.js';
import { dumpIndexFile } from '../internal/dump-index.js';
import type { SmallFileKind } from '../internal/dump-index.js';
import { dumpLog } from '../internal/dump-log.js';

const DEFAULT_MAX_BYTES = 64;

function kindOf(name: string): { kind: 'log' | SmallFileKind; baseOffset: number } | null {
  if (name === FileNames.leaderEpochCheckpoint) return { kind: 'leader-epoch-checkpoint', baseOffset: 0 };
  if (name === FileNames.recoveryPointCheckpoint || name === FileNames.logStartOffsetCheckpoint || name === FileNames.replicationOffsetCheckpoint) {
    return { kind: 'offset-checkpoint', baseOffset: 0 };
  }
  let parsed;
  try {
    parsed = FileNames.parseSegmentFileName(name);
  } catch {
    return null;
  }
  if (parsed === null) return null;
  return { kind: parsed.kind, baseOffset: parsed.offset };
}

export const dumpCommand: CommandSpec = {
  name: 'dump',
  summary: 'print the batches, index entries or producer entries of one segment file',
  args: '<file.log|.index|.timeindex|.txnindex|.snapshot|checkpoint>',
  description: [
    'A .log file: one line per batch (offsets, position, size, timestamps, producer id/epoch/sequence, codec,',
    'flags, stored and computed CRC, record count), then how the file ends: a torn tail or a framing error is',
    'reported, not fatal. Indexes: their entries with absolute offsets (base offset from the file name).',
    'Snapshots: the producer entries. Checkpoint files: their entries. Nothing is modified.',
  ],
  options: {
    records: { type: 'boolean', short: 'r', description: 'also print every record: offset, timestamp, sequence, key, value, headers (.log)' },
    json: { type: 'boolean', description: 'print one JSON object per line instead of text' },
    'max-bytes': { type: 'string', valueName: 'n', defaultValue: String(DEFAULT_MAX_BYTES), description: 'show at most n bytes of each key, value and header value (--records)' },
    ...COMMON_OPTIONS,
  },
  positionals: 1,
  async run(ctx, positionals, values) {
    const file = positionals[0] as string;
    const maxBytesText = (values['max-bytes'] as string | undefined) ?? String(DEFAULT_MAX_BYTES);
    const maxBytes = Number(maxBytesText);
    if (!/^[0-9]+$/.test(maxBytesText) || !Number.isSafeInteger(maxBytes)) throw usageError(`--max-bytes must be a non-negative integer, not ${JSON.stringify(maxBytesText)}`, 'dump');
    const name = path.basename(file);
    const kind = kindOf(name);
    if (kind === null) {
      throw cliError('SEGLOG_ERR_CLI_UNKNOWN_FILE', `cannot tell what ${name} is: expected <20-digit offset>.log, .index, .timeindex, .txnindex, .snapshot or a checkpoint file`, { path: file });
    }
    const json = values['json'] === true;
    if (kind.kind === 'log') await dumpLog(ctx, path.resolve(file), { records: values['records'] === true, json, maxBytes });
    else await dumpIndexFile(ctx, path.resolve(file), kind.kind, kind.baseOffset, json);
    return 0;
  },
};
