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
// a mix. All disk access goes through an Io (NodeIo in the broker, SimIo in
// the crash tests). Writes run one at a time (a promise chain) and a change
// is visible (get) only once its write completed; a failed write refuses the
// change and the next write rewrites the whole file from a fresh `.tmp` (a
// failure after the rename may still have made the change durable: the
// caller was told it failed, its outcome is unknown). A missing file is an
// empty table; a file that does not parse or has another format is
// SEGLOG_ERR_BROKER_TOPIC_CONFIGS_CORRUPT (the broker refuses to start rather
// than run topics on silently lost settings).
//
// Invariants: a topic's entry is written before its partitions are created
// (an entry without partitions is dropped at open) and marked deleting before
// its first partition is deleted.

import { SeglogError } from '@seglog/common';
import type { Io } from '@seglog/io';
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
  private readonly io: Io | null;
  private readonly path: string;
  /** The committed entries (their write completed). */
  private entries: Map<string, TopicEntry>;
  private chain: Promise<void>;

  private constructor(io: Io | null, filePath: string, entries: Map<string, TopicEntry>) {
    this.io = io;
    this.path = filePath;
    this.entries = entries;
    this.chain = Promise.resolve();
  }

  static inMemory(): TopicConfigFile {
    return new TopicConfigFile(null, TOPIC_CONFIG_FILE, new Map());
  }

  static async open(io: Io, dataDir: string): Promise<TopicConfigFile> {
    const filePath = path.join(dataDir, TOPIC_CONFIG_FILE);
    if (!(await io.exists(filePath))) return new TopicConfigFile(io, filePath, new Map());
    const text = (await io.readFile(filePath)).toString('utf8');
    return new TopicConfigFile(io, filePath, parseTopicConfigFile(text, filePath));
  }

  get(topic: string): TopicEntry | undefined {
    return this.entries.get(topic);
  }

  topics(): string[] {
    return [...this.entries.keys()];
  }

  /** Sets (or with null removes) a topic's entry; resolves once the file is durably rewritten, then get() shows it. */
  set(topic: string, entry: TopicEntry | null): Promise<void> {
    const write = this.chain.then(async () => {
      const next = new Map(this.entries);
      if (entry === null) next.delete(topic);
      else next.set(topic, { configs: { ...entry.configs }, deleting: entry.deleting });
      await this.write(formatTopicConfigFile(next));
      this.entries = next;
    });
    this.chain = write.catch(() => undefined);
    return write;
  }

  private async write(text: string): Promise<void> {
    if (this.io === null) return;
    const tmp = `${this.path}.tmp`;
    const bytes = Buffer.from(text, 'utf8');
    const file = await this.io.open(tmp, { create: true });
    try {
      await file.truncate(0);
      await file.pwrite(bytes, 0);
      await file.fdatasync();
    } finally {
      await file.close();
    }
    await this.io.rename(tmp, this.path);
    await this.io.fsyncDir(path.dirname(this.path));
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
