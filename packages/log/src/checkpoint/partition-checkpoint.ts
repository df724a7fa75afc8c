// What the data directory's per-partition checkpoint files share
// (offset-checkpoint.ts, cleaner-stats-checkpoint.ts): lines that start with
// "<topic> <partition>", checked on read (a legal Kafka topic name, a
// non-negative int32) and on write, written sorted by topic then partition so
// equal contents give byte-identical files.

import type { Io } from '@seglog/io';
import { CheckpointFile, parseJavaInt } from './checkpoint-file.js';
import type { CheckpointFormat } from './checkpoint-file.js';
import { FileNames } from '../file-names.js';

export interface TopicPartitionEntry {
  readonly topic: string;
  readonly partition: number;
}

/** A line's first two fields, or why they are not a topic and partition. */
export function parseTopicPartition(topic: string, partitionText: string): TopicPartitionEntry | string {
  try {
    FileNames.validateTopic(topic);
  } catch {
    return `illegal topic name ${JSON.stringify(topic)}`;
  }
  const partition = parseJavaInt(partitionText);
  if (partition === undefined || partition < 0) return `partition ${JSON.stringify(partitionText)} is not a non-negative int32`;
  return { topic, partition };
}

function compareEntries(a: TopicPartitionEntry, b: TopicPartitionEntry): number {
  if (a.topic !== b.topic) return a.topic < b.topic ? -1 : 1;
  return a.partition - b.partition;
}

export class PartitionCheckpoint<E extends TopicPartitionEntry> {
  private readonly file: CheckpointFile<E>;
  /** Asserts what the format needs of an entry beyond its topic and partition. */
  private readonly checkEntry: (entry: E) => void;

  constructor(io: Io, path: string, format: CheckpointFormat<E>, checkEntry: (entry: E) => void) {
    this.file = new CheckpointFile(io, path, format);
    this.checkEntry = checkEntry;
  }

  get path(): string {
    return this.file.path;
  }

  /** The entries in file order; a missing file has none. */
  read(): Promise<E[]> {
    return this.file.read();
  }

  /**
   * Writes the entries (sorted by topic, partition) atomically and durably.
   * Rejects with SEGLOG_ERR_LOG_INVALID_TOPIC / _PARTITION before writing
   * anything if an entry is illegal.
   */
  async write(entries: readonly E[]): Promise<void> {
    for (const entry of entries) {
      FileNames.validateTopic(entry.topic);
      FileNames.validatePartition(entry.partition);
      this.checkEntry(entry);
    }
    await this.file.write([...entries].sort(compareEntries));
  }
}
