// LeaderEpochCheckpoint: the `leader-epoch-checkpoint` file of a partition
// directory (reference/kafka-storage.md §9, §23).
//
// On-disk format: CheckpointFile version 0, one line per epoch, in epoch order:
//   "<epoch> <startOffset>"
// Invariants (checked on read, SEGLOG_ERR_CHECKPOINT_CORRUPT otherwise): the
// epoch is a non-negative int32, the start offset a non-negative safe integer
// (Kafka's cache rejects negative entries when it loads them). Ordering is the
// cache's business: LeaderEpochCache re-applies its assign rules on load.

import { assert } from '@seglog/common';
import type { Io } from '@seglog/io';
import { CheckpointFile, parseJavaInt, parseJavaSafeLong } from './checkpoint-file.js';
import type { CheckpointFormat } from './checkpoint-file.js';

export interface EpochEntry {
  readonly epoch: number;
  readonly startOffset: number;
}

const LEADER_EPOCH_CHECKPOINT_VERSION = 0;

export const leaderEpochCheckpointFormat: CheckpointFormat<EpochEntry> = {
  version: LEADER_EPOCH_CHECKPOINT_VERSION,
  format: (entry) => `${entry.epoch} ${entry.startOffset}`,
  parse(fields) {
    if (fields.length !== 2) return `expected 2 fields, found ${fields.length}`;
    const [epochText, startText] = fields as [string, string];
    const epoch = parseJavaInt(epochText);
    if (epoch === undefined || epoch < 0) return `epoch ${JSON.stringify(epochText)} is not a non-negative int32`;
    const startOffset = parseJavaSafeLong(startText);
    if (startOffset === undefined || startOffset < 0) return `start offset ${JSON.stringify(startText)} is not a non-negative safe integer`;
    return { epoch, startOffset };
  },
};

export class LeaderEpochCheckpoint {
  private readonly file: CheckpointFile<EpochEntry>;

  constructor(io: Io, path: string) {
    this.file = new CheckpointFile(io, path, leaderEpochCheckpointFormat);
  }

  get path(): string {
    return this.file.path;
  }

  /** The entries in file order; a missing file has none. */
  read(): Promise<EpochEntry[]> {
    return this.file.read();
  }

  /** Writes the entries atomically and durably; resolves once durable. */
  write(entries: readonly EpochEntry[]): Promise<void> {
    for (const entry of entries) {
      assert(Number.isInteger(entry.epoch) && entry.epoch >= 0 && entry.epoch <= 0x7fffffff, 'LeaderEpochCheckpoint.write: epoch must be a non-negative int32');
      assert(Number.isSafeInteger(entry.startOffset) && entry.startOffset >= 0, 'LeaderEpochCheckpoint.write: startOffset must be a non-negative safe integer');
    }
    return this.file.write(entries);
  }
}
