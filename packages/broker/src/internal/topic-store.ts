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

import { assert, SeglogError } from '@seglog/common';
import { NodeIo } from '@seglog/io';
import type { Io } from '@seglog/io';
import { BlackholeLog, LogConfig, LogManager } from '@seglog/log';
import type { AppendResult, FetchPlan, ReadOptions } from '@seglog/log';

/** What the handlers use of a partition: the common surface of Log and BlackholeLog. */
export interface PartitionLog {
  readonly topic: string;
  readonly partition: number;
  readonly logEndOffset: number;
  readonly highWatermark: number;
  readonly lastStableOffset: number;
  readonly logStartOffset: number;
  appendAsLeader(buffer: Buffer, options: { readonly leaderEpoch: number }): Promise<AppendResult>;
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
  /** Where the data directory's offline notice (its cause, once) and refusal notices (rate-limited) are printed. */
  readonly log: (line: string) => void;
  /** The I/O seam; NodeIo when absent (tests pass a SimIo to crash the data directory). */
  readonly io?: Io;
}

export class TopicStore {
  readonly blackhole: boolean;
  private readonly manager: LogManager | null;
  private readonly config: LogConfig;
  private readonly topicMap: Map<string, PartitionLog[]>;
  private readonly creating: Map<string, Promise<void>>;
  /** collisionKey → the topic holding it (existing or being created). */
  private readonly collisionKeys: Map<string, string>;

  private constructor(manager: LogManager | null, options: TopicStoreOptions) {
    this.blackhole = options.blackhole;
    this.manager = manager;
    this.config = options.config;
    this.topicMap = new Map();
    this.creating = new Map();
    this.collisionKeys = new Map();
  }

  static async open(options: TopicStoreOptions): Promise<TopicStore> {
    if (options.blackhole) return new TopicStore(null, options);
    const manager = await LogManager.open(options.io ?? new NodeIo(), options.dataDir, {
      defaultConfig: options.config,
      ...(options.tailCacheBytes === null ? {} : { tailCache: { totalBytes: options.tailCacheBytes } }),
      onOffline: (notice) => options.log(notice.message),
      onRefusal: (notice) => options.log(notice.message),
    });
    const store = new TopicStore(manager, options);
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
  async create(topic: string, count: number): Promise<boolean> {
    assert(Number.isInteger(count) && count >= 1, 'TopicStore.create: count must be a positive integer');
    if (this.topicMap.has(topic) || this.creating.has(topic)) return false;
    this.checkCreatable(topic);
    const key = collisionKey(topic);
    this.collisionKeys.set(key, topic);
    const done = this.createPartitions(topic, count).finally(() => {
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
  async createInternal(topic: string, count: number): Promise<boolean> {
    assert(INTERNAL_TOPICS.has(topic), 'TopicStore.createInternal: not an internal topic');
    assert(Number.isInteger(count) && count >= 1, 'TopicStore.createInternal: count must be a positive integer');
    if (this.topicMap.has(topic) || this.creating.has(topic)) return false;
    const done = this.createPartitions(topic, count).finally(() => this.creating.delete(topic));
    this.creating.set(topic, done);
    await done;
    return true;
  }

  /** Resolves when a creation of `topic` in progress ends (at once if none). */
  async settled(topic: string): Promise<void> {
    await this.creating.get(topic)?.catch(() => undefined);
  }

  private async createPartitions(topic: string, count: number): Promise<void> {
    const list: PartitionLog[] = [];
    for (let partition = 0; partition < count; partition++) {
      if (this.manager === null) list.push(await BlackholeLog.open(this.config, { topic, partition }));
      else list.push(await this.manager.getOrCreateLog(topic, partition));
    }
    this.topicMap.set(topic, list);
  }

  async close(): Promise<void> {
    await Promise.all([...this.creating.values()].map((p) => p.catch(() => undefined)));
    if (this.manager !== null) await this.manager.close();
  }
}
