// TopicConfigFile: the topics' config overrides and pending deletions, kept
// in the data directory so that they survive a restart (Kafka keeps them in
// its metadata log; a single node keeps one small file).
//
// On disk: `<dataDir>/broker-topic-configs`, UTF-8 JSON, one object:
//
//   {"format":"seglog-topic-configs","version":1,
//    "topics":{"<topic>":{"configs":{"retention.ms":"1000"},"deleting":false}}}
//
// `configs` are Kafka names → Kafka strings, validated before they are
// written (topic-config-defs.ts). `deleting: true` marks a topic whose
// deletion began: its partition directories may be partly removed, and the
// next open finishes the deletion. The file is rewritten whole and durably
// for every change: `<file>.tmp` written and fdatasynced, renamed over the
// file, the directory fsynced; a crash leaves the old or the new file, never
// a mix. Writes run one at a time (a promise chain). A missing file is an
// empty table; a file that does not parse or has another format is
// SEGLOG_ERR_BROKER_TOPIC_CONFIGS_CORRUPT (the broker refuses to start rather
// than run topics on silently lost settings).
//
// Invariants: a topic's entry is written before its partitions are created
// (an entry without partitions is dropped at open) and marked deleting before
// its first partition is deleted.

import { SeglogError } from '@seglog/common';
import { open, readFile, rename } from 'node:fs/promises';
import path from 'node:path';

export const TOPIC_CONFIG_FILE = 'broker-topic-configs';
const FORMAT = 'seglog-topic-configs';
const VERSION = 1;

export interface TopicEntry {
  readonly configs: Readonly<Record<string, string>>;
  readonly deleting: boolean;
}

export class TopicConfigFile {
  /** null: in memory only (blackhole mode). */
  private readonly path: string | null;
  private readonly entries: Map<string, TopicEntry>;
  private chain: Promise<void>;

  private constructor(filePath: string | null, entries: Map<string, TopicEntry>) {
    this.path = filePath;
    this.entries = entries;
    this.chain = Promise.resolve();
  }

  static inMemory(): TopicConfigFile {
    return new TopicConfigFile(null, new Map());
  }

  static async open(dataDir: string): Promise<TopicConfigFile> {
    const filePath = path.join(dataDir, TOPIC_CONFIG_FILE);
    let text: string;
    try {
      text = await readFile(filePath, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new TopicConfigFile(filePath, new Map());
      throw error;
    }
    return new TopicConfigFile(filePath, parseTopicConfigFile(text, filePath));
  }

  get(topic: string): TopicEntry | undefined {
    return this.entries.get(topic);
  }

  topics(): string[] {
    return [...this.entries.keys()];
  }

  /** Sets (or with null removes) a topic's entry and writes the file durably. */
  set(topic: string, entry: TopicEntry | null): Promise<void> {
    if (entry === null) this.entries.delete(topic);
    else this.entries.set(topic, { configs: { ...entry.configs }, deleting: entry.deleting });
    const snapshot = formatTopicConfigFile(this.entries);
    const write = this.chain.then(() => this.write(snapshot));
    this.chain = write.catch(() => undefined);
    return write;
  }

  private async write(text: string): Promise<void> {
    if (this.path === null) return;
    const tmp = `${this.path}.tmp`;
    const handle = await open(tmp, 'w');
    try {
      await handle.writeFile(text);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(tmp, this.path);
    const dir = await open(path.dirname(this.path), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }
}

export function formatTopicConfigFile(entries: ReadonlyMap<string, TopicEntry>): string {
  const topics: Record<string, TopicEntry> = {};
  for (const topic of [...entries.keys()].sort()) topics[topic] = entries.get(topic) as TopicEntry;
  return `${JSON.stringify({ format: FORMAT, version: VERSION, topics })}\n`;
}

export function parseTopicConfigFile(text: string, filePath: string): Map<string, TopicEntry> {
  const corrupt = (reason: string): SeglogError => new SeglogError('SEGLOG_ERR_BROKER_TOPIC_CONFIGS_CORRUPT',
    `${filePath}: ${reason}; the topics' settings cannot be trusted (restore the file, or remove it to run every topic on the broker's defaults)`,
    { context: { path: filePath, reason } });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw corrupt('not JSON');
  }
  const root = parsed as { format?: unknown; version?: unknown; topics?: unknown } | null;
  if (root === null || typeof root !== 'object' || root.format !== FORMAT || root.version !== VERSION) throw corrupt(`not ${FORMAT} version ${VERSION}`);
  if (root.topics === null || typeof root.topics !== 'object') throw corrupt('no topics object');
  const entries = new Map<string, TopicEntry>();
  for (const [topic, raw] of Object.entries(root.topics as Record<string, unknown>)) {
    const entry = raw as { configs?: unknown; deleting?: unknown } | null;
    if (entry === null || typeof entry !== 'object' || typeof entry.deleting !== 'boolean') throw corrupt(`bad entry for topic ${topic}`);
    if (entry.configs === null || typeof entry.configs !== 'object') throw corrupt(`bad configs for topic ${topic}`);
    const configs: Record<string, string> = {};
    for (const [name, value] of Object.entries(entry.configs as Record<string, unknown>)) {
      if (typeof value !== 'string') throw corrupt(`config ${name} of topic ${topic} is not a string`);
      configs[name] = value;
    }
    entries.set(topic, { configs, deleting: entry.deleting });
  }
  return entries;
}
