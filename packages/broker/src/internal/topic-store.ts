// TopicStore: the broker's topics and their partitions, over a LogManager (a
// data directory) or, in blackhole mode, over in-memory BlackholeLogs.
//
// Invariants: a topic is visible (topics(), partitionCount(), get()) only
// once every one of its partitions exists, so Metadata never shows half a
// topic; at most one creation per topic runs at a time (later callers wait
// for it). On open, every loaded partition's high watermark is set to its log
// end offset: on a single node the leader is the whole ISR, so everything the
// log recovered is committed (Kafka's leader does the same when the ISR is
// itself).
//
// Naming rules beyond Kafka's Topic.validate (which the LogManager applies):
// two topics whose names are equal once '.' and '_' are unified cannot both
// exist (Kafka's Topic.hasCollision: they would share metric names), and the
// internal topic names are reserved for the broker's own coordinators.
//
// Administration (issue 21): per-topic configs (Kafka names, validated by
// topic-configs/topic-config-defs.ts) are persisted in the data directory's
// TopicConfigFile before the partitions are made, and reach each partition's
// LogConfig (at creation, at open through LogManager's topicConfigs, and on
// a change by reopening the partition's log with the new config). Deletion
// marks the topic `deleting` in that file, hides it at once, then deletes
// every partition through LogManager.deleteLog and drops the entry; an open
// finishes a deletion a crash interrupted and drops entries whose topic has
// no partition. Growing a topic makes the new partitions first and shows them
// all at once. At most one change (delete, grow, configs) runs per topic at a
// time, after any creation of it; settled() waits for both.

import { assert, SeglogError } from '@seglog/common';
import { NodeIo } from '@seglog/io';
import type { Io } from '@seglog/io';
import { BlackholeLog, LogConfig, LogManager } from '@seglog/log';
import type { AppendResult, FetchPlan, ReadOptions, TxnMarkerOptions } from '@seglog/log';
import type { FdBudget } from './fd-budget.js';
import { isApiError } from './topic-configs/api-error.js';
import { validateTopicConfigs } from './topic-configs/topic-config-defs.js';
import { TopicConfigFile } from './topic-configs/topic-config-file.js';

/** What the handlers use of a partition: the common surface of Log and BlackholeLog. */
export interface PartitionLog {
  readonly topic: string;
  readonly partition: number;
  readonly logEndOffset: number;
  readonly highWatermark: number;
  readonly lastStableOffset: number;
  readonly logStartOffset: number;
  appendAsLeader(buffer: Buffer, options: { readonly leaderEpoch: number }): Promise<AppendResult>;
  /** A COMMIT/ABORT marker (the transaction coordinator). */
  appendMarker(marker: TxnMarkerOptions): Promise<AppendResult>;
  written(offset: number): Promise<void>;
  durable(offset: number): Promise<void>;
  updateHighWatermark(offset: number): number;
  read(offset: number, maxBytes: number, options?: ReadOptions): Promise<FetchPlan>;
  /** Absent on BlackholeLog. */
  offsetForTimestamp?(timestamp: number): Promise<{ timestamp: number; offset: number; leaderEpoch: number } | null>;
  /** Absent on BlackholeLog. */
  deleteRecords?(offset: number): Promise<number>;
}

/** Kafka's internal topics: created by the broker's coordinators with their own configs, never as plain topics. */
export const INTERNAL_TOPICS: ReadonlySet<string> = new Set(['__consumer_offsets', '__transaction_state', '__cluster_metadata']);

/** Kafka's Topic.unifyCollisionChars: '.' and '_' become the same character in metric names. */
function collisionKey(topic: string): string {
  return topic.replaceAll('.', '_');
}

export interface TopicStoreOptions {
  readonly dataDir: string;
  readonly blackhole: boolean;
  readonly config: LogConfig;
  /** Global tail-cache budget across every log; null = the LogManager's default. */
  readonly tailCacheBytes: number | null;
  /** The log cleaner's sleep when idle (log.cleaner.backoff.ms); default the LogManager's, 15 s. */
  readonly cleanerBackoffMs?: number;
  /** Idle sealed-segment descriptors kept open; null or absent = the LogManager's default. */
  readonly maxOpenSegmentFiles?: number | null;
  /** Byte budget of sealed segments' loaded indexes; null/undefined = the LogManager's default. */
  readonly indexCacheBytes?: number | null;
  /** Where the data directory's offline notice (its cause, once) and refusal notices (rate-limited) are printed. */
  readonly log: (line: string) => void;
  /** The I/O of the data directory (default NodeIo; SimIo in the crash tests). */
  readonly io?: Io;
  /** Admission of new partitions against the descriptor budget (fd-budget.ts); absent = none. */
  readonly fdBudget?: FdBudget | null;
}

export class TopicStore {
  readonly blackhole: boolean;
  private readonly manager: LogManager | null;
  private readonly config: LogConfig;
  private readonly topicMap: Map<string, PartitionLog[]>;
  private readonly creating: Map<string, Promise<void>>;
  /** The change (delete, grow, configs) of a topic running or queued last. */
  private readonly changes: Map<string, Promise<void>>;
  /** collisionKey → the topic holding it (existing or being created). */
  private readonly collisionKeys: Map<string, string>;
  private readonly configFile: TopicConfigFile;
  /** The LogConfig of topics with overrides (others: `config`). */
  private readonly topicConfigs: Map<string, LogConfig>;
  /** Logs being closed for a reopen: no longer current, though still listed until replaced. */
  private readonly retiring: WeakSet<PartitionLog>;
  /** The descriptor budget new partitions are admitted against; null = none (blackhole, tests). */
  readonly fdBudget: FdBudget | null;

  private constructor(manager: LogManager | null, options: TopicStoreOptions, configFile: TopicConfigFile, topicConfigs: Map<string, LogConfig>) {
    this.blackhole = options.blackhole;
    this.manager = manager;
    this.config = options.config;
    this.topicMap = new Map();
    this.creating = new Map();
    this.changes = new Map();
    this.collisionKeys = new Map();
    this.configFile = configFile;
    this.topicConfigs = topicConfigs;
    this.retiring = new WeakSet();
    this.fdBudget = options.fdBudget ?? null;
  }

  static async open(options: TopicStoreOptions): Promise<TopicStore> {
    if (options.blackhole) return new TopicStore(null, options, TopicConfigFile.inMemory(), new Map());
    const io = options.io ?? new NodeIo();
    const configFile = await TopicConfigFile.open(io, options.dataDir);
    const topicConfigs = configsFromFile(configFile, options.config);
    const manager = await LogManager.open(io, options.dataDir, {
      defaultConfig: options.config,
      topicConfigs,
      ...(options.tailCacheBytes === null ? {} : { tailCache: { totalBytes: options.tailCacheBytes } }),
      ...(options.cleanerBackoffMs === undefined ? {} : { cleaner: { backoffMs: options.cleanerBackoffMs } }),
      ...(options.maxOpenSegmentFiles === null || options.maxOpenSegmentFiles === undefined ? {} : { maxOpenSegmentFiles: options.maxOpenSegmentFiles }),
      ...(options.indexCacheBytes === null || options.indexCacheBytes === undefined ? {} : { indexCacheBytes: options.indexCacheBytes }),
      onOffline: (notice) => options.log(notice.message),
      onRefusal: (notice) => options.log(notice.message),
    });
    try {
      await finishDeletions(manager, configFile);
    } catch (error) {
      await manager.close();
      throw error;
    }
    const store = new TopicStore(manager, options, configFile, topicConfigs);
    const byTopic = new Map<string, PartitionLog[]>();
    for (const log of manager.logs()) {
      log.updateHighWatermark(log.logEndOffset);
      const list = byTopic.get(log.topic) ?? [];
      list[log.partition] = log;
      byTopic.set(log.topic, list);
    }
    for (const [topic, list] of byTopic) {
      store.topicMap.set(topic, list);
      // Topics that collide and both exist already (an older data directory) stay; the first holds the key.
      if (!store.collisionKeys.has(collisionKey(topic))) store.collisionKeys.set(collisionKey(topic), topic);
    }
    return store;
  }

  /** The LogManager (disk mode), for diagnostics. */
  get logManager(): LogManager | null {
    return this.manager;
  }

  topics(): string[] {
    return [...this.topicMap.keys()].sort();
  }

  /** 0 when the topic does not exist. */
  partitionCount(topic: string): number {
    return this.topicMap.get(topic)?.length ?? 0;
  }

  get(topic: string, partition: number): PartitionLog | undefined {
    return this.topicMap.get(topic)?.[partition];
  }

  has(topic: string): boolean {
    return this.topicMap.has(topic);
  }

  /** Whether `log` is still the store's log of its partition (not deleted, not reopened by a config change). */
  isCurrent(log: PartitionLog): boolean {
    return !this.retiring.has(log) && this.topicMap.get(log.topic)?.[log.partition] === log;
  }

  /** The topic's config overrides (Kafka names → strings; empty for none). */
  configsOf(topic: string): Readonly<Record<string, string>> {
    return this.configFile.get(topic)?.configs ?? {};
  }

  /** The LogConfig of the topic's partitions (the broker's when it has no override). */
  logConfigOf(topic: string): LogConfig {
    return this.topicConfigs.get(topic) ?? this.config;
  }

  /** The broker's LogConfig (topics without overrides). */
  get defaultConfig(): LogConfig {
    return this.config;
  }

  /** Every partition, for status and shutdown. */
  *allLogs(): IterableIterator<PartitionLog> {
    for (const list of this.topicMap.values()) for (const log of list) if (log !== undefined) yield log;
  }

  /**
   * Throws when a topic that does not exist yet may not be created under this
   * name: SEGLOG_ERR_BROKER_TOPIC_INTERNAL (kafka INVALID_REQUEST) for an
   * internal name, SEGLOG_ERR_BROKER_TOPIC_COLLISION (kafka
   * INVALID_TOPIC_EXCEPTION) for a name colliding with another topic's.
   */
  checkCreatable(topic: string): void {
    if (INTERNAL_TOPICS.has(topic)) {
      throw new SeglogError('SEGLOG_ERR_BROKER_TOPIC_INTERNAL', `Creation of internal topic ${topic} is prohibited.`, {
        kafka: 'INVALID_REQUEST', context: { topic },
      });
    }
    const holder = this.collisionKeys.get(collisionKey(topic));
    if (holder !== undefined && holder !== topic) {
      throw new SeglogError('SEGLOG_ERR_BROKER_TOPIC_COLLISION', `Topic '${topic}' collides with existing topic: ${holder}`, {
        kafka: 'INVALID_TOPIC_EXCEPTION', context: { topic, existing: holder },
      });
    }
  }

  /**
   * Creates `topic` with partitions 0..count-1. Resolves false when it exists
   * or is being created; rejects with checkCreatable's errors and the log's
   * (invalid name, offline directory).
   */
  async create(topic: string, count: number, configs: Readonly<Record<string, string>> = {}): Promise<boolean> {
    assert(Number.isInteger(count) && count >= 1, 'TopicStore.create: count must be a positive integer');
    await this.changes.get(topic)?.catch(() => undefined);
    if (this.topicMap.has(topic) || this.creating.has(topic)) return false;
    this.checkCreatable(topic);
    const config = Object.keys(configs).length === 0 ? null : validateTopicConfigs(configs, this.config);
    const release = this.admit(topic, count); // before anything is written
    const key = collisionKey(topic);
    this.collisionKeys.set(key, topic);
    const done = this.createTopic(topic, count, configs, config).finally(() => {
      release();
      this.creating.delete(topic);
      if (!this.topicMap.has(topic)) this.collisionKeys.delete(key);
    });
    this.creating.set(topic, done);
    await done;
    return true;
  }

  /**
   * Creates one of the broker's internal topics (INTERNAL_TOPICS) with
   * partitions 0..count-1: the coordinators' way past checkCreatable's
   * refusal of internal names. Resolves false when it exists already.
   */
  async createInternal(topic: string, count: number, configs: Readonly<Record<string, string>> = {}): Promise<boolean> {
    assert(INTERNAL_TOPICS.has(topic), 'TopicStore.createInternal: not an internal topic');
    assert(Number.isInteger(count) && count >= 1, 'TopicStore.createInternal: count must be a positive integer');
    if (this.topicMap.has(topic) || this.creating.has(topic)) return false;
    const config = Object.keys(configs).length === 0 ? null : validateTopicConfigs(configs, this.config);
    const release = this.fdBudget?.reserveInternal(topic, count) ?? ((): void => undefined); // counted, never refused
    const done = this.createTopic(topic, count, configs, config).finally(() => {
      release();
      this.creating.delete(topic);
    });
    this.creating.set(topic, done);
    await done;
    return true;
  }

  /** Partitions open now (every topic's, internal ones included). */
  partitionTotal(): number {
    let n = 0;
    for (const list of this.topicMap.values()) n += list.length;
    return n;
  }

  /**
   * Reserves `count` new partitions against the descriptor budget; throws
   * SEGLOG_ERR_BROKER_FD_BUDGET (POLICY_VIOLATION) when they would not fit.
   */
  private admit(topic: string, count: number): () => void {
    return this.fdBudget === null ? () => undefined : this.fdBudget.admit(topic, count, this.partitionTotal());
  }

  /** Resolves when a creation or change of `topic` in progress ends (at once if none). */
  async settled(topic: string): Promise<void> {
    await this.creating.get(topic)?.catch(() => undefined);
    await this.changes.get(topic)?.catch(() => undefined);
  }

  private async createTopic(topic: string, count: number, configs: Readonly<Record<string, string>>, config: LogConfig | null): Promise<void> {
    if (config !== null) {
      // Written before any partition exists: an entry without partitions is dropped at open.
      await this.configFile.set(topic, { configs, deleting: false });
      this.topicConfigs.set(topic, config);
    }
    try {
      this.topicMap.set(topic, await this.makePartitions(topic, 0, count));
    } catch (error) {
      if (config !== null) this.topicConfigs.delete(topic);
      throw error;
    }
  }

  /** Partitions from..to-1 of `topic` with its LogConfig. */
  private async makePartitions(topic: string, from: number, to: number): Promise<PartitionLog[]> {
    const config = this.logConfigOf(topic);
    const list: PartitionLog[] = [];
    for (let partition = from; partition < to; partition++) {
      if (this.manager === null) list.push(await BlackholeLog.open(config, { topic, partition }));
      else list.push(await this.manager.getOrCreateLog(topic, partition, config));
    }
    return list;
  }

  /** Runs `change` after the topic's creation and earlier changes; one at a time per topic. */
  private change<T>(topic: string, change: () => Promise<T>): Promise<T> {
    const previous = Promise.all([this.creating.get(topic), this.changes.get(topic)]).catch(() => undefined);
    const run = previous.then(change);
    const tail = run.then(() => undefined, () => undefined);
    this.changes.set(topic, tail);
    void tail.then(() => {
      if (this.changes.get(topic) === tail) this.changes.delete(topic);
    });
    return run;
  }

  /**
   * Deletes the topic: marked deleting on disk, hidden, every partition
   * deleted (LogManager.deleteLog), its entry dropped. Resolves the logs it
   * removed (parked fetches on them should be woken), or null when the topic
   * does not exist.
   */
  delete(topic: string): Promise<PartitionLog[] | null> {
    return this.change(topic, async () => {
      const list = this.topicMap.get(topic);
      if (list === undefined) return null;
      await this.configFile.set(topic, { configs: this.configsOf(topic), deleting: true });
      this.topicMap.delete(topic);
      this.topicConfigs.delete(topic);
      try {
        for (const log of list) if (log !== undefined && this.manager !== null) await this.manager.deleteLog(topic, log.partition);
        await this.configFile.set(topic, null);
      } finally {
        if (this.collisionKeys.get(collisionKey(topic)) === topic) this.collisionKeys.delete(collisionKey(topic));
      }
      return list;
    });
  }

  /**
   * Grows the topic to `count` partitions (the new ones made first, then all
   * shown at once). Resolves false when the topic does not exist; the caller
   * checks that `count` is above the current count.
   */
  addPartitions(topic: string, count: number): Promise<boolean> {
    return this.change(topic, async () => {
      const list = this.topicMap.get(topic);
      if (list === undefined) return false;
      assert(Number.isInteger(count) && count > list.length, 'TopicStore.addPartitions: count must be above the current count');
      const release = this.admit(topic, count - list.length);
      try {
        const added = await this.makePartitions(topic, list.length, count);
        this.topicMap.set(topic, [...list, ...added]);
      } finally {
        release();
      }
      return true;
    });
  }

  /**
   * Replaces the topic's config overrides (validated: ApiError
   * INVALID_CONFIG), persists them, and reopens every partition's log with
   * the new LogConfig. Resolves the replaced logs (to wake parked fetches),
   * or null when the topic does not exist.
   */
  setConfigs(topic: string, configs: Readonly<Record<string, string>>): Promise<PartitionLog[] | null> {
    return this.change(topic, async () => {
      const list = this.topicMap.get(topic);
      if (list === undefined) return null;
      const config = validateTopicConfigs(configs, this.config);
      await this.configFile.set(topic, { configs, deleting: false });
      this.topicConfigs.set(topic, config);
      if (this.manager === null) return [];
      const replaced: PartitionLog[] = [];
      for (let partition = 0; partition < list.length; partition++) {
        const old = list[partition];
        if (old === undefined) continue;
        this.retiring.add(old);
        const reopened = await this.manager.reopenLog(topic, partition, config);
        // As at open: after a clean close everything the log holds is committed (one node is the whole ISR).
        reopened.updateHighWatermark(reopened.logEndOffset);
        const current = this.topicMap.get(topic);
        if (current !== undefined) current[partition] = reopened;
        replaced.push(old);
      }
      return replaced;
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.creating.values()].map((p) => p.catch(() => undefined)));
    await Promise.all([...this.changes.values()]);
    if (this.manager !== null) await this.manager.close();
  }
}

/** The LogConfig of every topic with overrides in the file (deleting topics excluded). */
function configsFromFile(file: TopicConfigFile, base: LogConfig): Map<string, LogConfig> {
  const configs = new Map<string, LogConfig>();
  for (const topic of file.topics()) {
    const entry = file.get(topic);
    if (entry === undefined || entry.deleting || Object.keys(entry.configs).length === 0) continue;
    try {
      configs.set(topic, validateTopicConfigs(entry.configs, base));
    } catch (error) {
      if (!isApiError(error)) throw error;
      throw new SeglogError('SEGLOG_ERR_BROKER_TOPIC_CONFIGS_CORRUPT', `the stored configs of topic ${topic} are not valid: ${error.message}`, {
        context: { topic, reason: error.message },
      });
    }
  }
  return configs;
}

/** Finishes deletions a crash interrupted, and drops entries of topics without partitions. */
async function finishDeletions(manager: LogManager, file: TopicConfigFile): Promise<void> {
  for (const topic of file.topics()) {
    const logs = manager.logs().filter((log) => log.topic === topic);
    if (file.get(topic)?.deleting === true) for (const log of logs) await manager.deleteLog(topic, log.partition);
    if (file.get(topic)?.deleting === true || logs.length === 0) await file.set(topic, null);
  }
}
