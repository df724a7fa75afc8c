// BrokerOptions: everything `Broker.start` and `main.ts` accept, with the
// defaults of the embedded single-node broker. Names follow Kafka's broker
// settings in camelCase where one exists.

import type { WriteMode } from '@seglog/log';

/**
 * When a produce request with acks=-1 is answered:
 * - 'written' (default): once the batch is in the file (page cache). A crash of
 *   the process loses nothing acknowledged; a power loss may (Kafka's default:
 *   it relies on replication, not fsync, for acks=all).
 * - 'sync': once the batch is covered by an fdatasync (group commit: one sync
 *   releases every waiter below it). `--sync-on-ack`.
 * acks=1 is always answered when written; acks=0 is never answered.
 */
export type AckMode = 'written' | 'sync';

export interface BrokerOptions {
  /** Data directory (LogManager: lock, checkpoints, partitions). Default './data'. */
  readonly dataDir: string;
  /** Loopback by default; the Metadata response advertises this host. */
  readonly host: string;
  /** 0 picks a free port (see Broker.port). Default 9092. */
  readonly port: number;
  readonly writeMode: WriteMode;
  readonly preallocate: boolean;
  /** Accepted and reported; the LogManager does not take a tail-cache budget yet (ignored). */
  readonly tailCacheBytes: number | null;
  /** Idle sealed-segment descriptors kept open (LogManager maxOpenSegmentFiles); null = 1000, or less where the open-file limit leaves less (at least 16). */
  readonly maxOpenSegmentFiles: number | null;
  /** Byte budget of sealed segments' loaded indexes (LogManager indexCacheBytes); null = 128 MiB. */
  readonly indexCacheBytes: number | null;
  /**
   * The free-space floor of the data directory (LogConfig / LogManager
   * `minFreeBytes`): appends that would leave less free are refused with a
   * retriable KAFKA_STORAGE_ERROR (SEGLOG_ERR_LOG_DISK_FULL); 0 disables the
   * guard. null = the LogConfig default, 64 MiB. `--min-free-bytes`.
   */
  readonly minFreeBytes: number | null;
  /** Kafka's log.cleaner.backoff.ms: how long the log cleaner sleeps when no compacted log needs a pass. */
  readonly logCleanerBackoffMs: number;
  /** Partitions of a topic created by Metadata auto-creation (0 disables it); also CreateTopics' default. */
  readonly autoCreatePartitions: number;
  /** Partitions are BlackholeLogs: appends are checked and discarded, fetches fail (benchmark mode). */
  readonly blackhole: boolean;
  readonly ackMode: AckMode;
  /** flush.ms for every log (periodic fdatasync); null = never (Kafka's default). */
  readonly flushIntervalMs: number | null;
  /** flush.messages for every log; null = never. */
  readonly flushIntervalMessages: number | null;
  /** Print a one-line status every this many ms; 0 = off. */
  readonly statusIntervalMs: number;
  /** Largest request frame (socket.request.max.bytes). Default 100 MiB. */
  readonly maxRequestBytes: number;
  /**
   * Budget of request frames held across all connections, being received or
   * awaiting their answer (queued.max.request.bytes). A frame's size is
   * reserved once its size prefix is read; when the budget is spent, sockets
   * are paused until requests are answered. Non-strict like Kafka's pool: the
   * total may exceed it by less than one frame. Default 512 MiB (Kafka's
   * default, -1, is unbounded).
   */
  readonly queuedMaxRequestBytes: number;
  /**
   * Close a connection after this many ms without progress
   * (connections.max.idle.ms, default 10 min; 0 = never). Progress is a
   * complete request read or a response written; the bytes of an incomplete
   * request are not, so this also bounds how long a request may take to
   * arrive, and a client that stops reading its responses is closed too.
   * Waits that are the broker's (a request being handled, request memory)
   * are not idleness.
   */
  readonly connectionsMaxIdleMs: number;
  /** Requests read from one connection and not yet answered; the socket is paused at this bound. Default 100. */
  readonly maxInFlightRequests: number;
  /** Fetch requests parked in long-poll across all connections; beyond it they are answered at once. Default 10000. */
  readonly maxFetchWaiters: number;
  /** Upper bound on a fetch's maxWaitMs. Default 30000. */
  readonly maxFetchWaitMs: number;
  /** Partitions of __consumer_offsets when the broker creates it (offsets.topic.num.partitions, Kafka 50); an existing topic keeps its count. */
  readonly offsetsTopicPartitions: number;
  /** group.initial.rebalance.delay.ms: how long a rebalance of an Empty group waits for more members (Kafka 3000). */
  readonly groupInitialRebalanceDelayMs: number;
  /** group.min.session.timeout.ms (Kafka 6000). */
  readonly groupMinSessionTimeoutMs: number;
  /** group.max.session.timeout.ms (Kafka 1800000). */
  readonly groupMaxSessionTimeoutMs: number;
  /** Partitions of __transaction_state when the broker creates it (transaction.state.log.num.partitions, Kafka 50); an existing topic keeps its count. */
  readonly transactionStateTopicPartitions: number;
  /** transaction.max.timeout.ms: the largest transaction timeout a producer may ask for (Kafka 900000). */
  readonly transactionMaxTimeoutMs: number;
  /** transactional.id.expiration.ms: a transactional id idle (no transaction open) this long is removed (Kafka 604800000, 7 days). */
  readonly transactionalIdExpirationMs: number;
  /** transaction.remove.expired.transaction.cleanup.interval.ms: how often expired transactional ids are removed (Kafka 3600000). */
  readonly transactionRemoveExpiredTransactionCleanupIntervalMs: number;
  /** Where the status line and notices go. Default: stdout. */
  readonly log: (line: string) => void;
}

export const BROKER_DEFAULTS: BrokerOptions = Object.freeze({
  dataDir: './data',
  host: '127.0.0.1',
  port: 9092,
  writeMode: 'buffered',
  preallocate: false,
  tailCacheBytes: null,
  maxOpenSegmentFiles: null,
  indexCacheBytes: null,
  minFreeBytes: null,
  logCleanerBackoffMs: 15_000,
  autoCreatePartitions: 1,
  blackhole: false,
  ackMode: 'written',
  flushIntervalMs: null,
  flushIntervalMessages: null,
  statusIntervalMs: 0,
  maxRequestBytes: 104_857_600,
  queuedMaxRequestBytes: 536_870_912,
  connectionsMaxIdleMs: 600_000,
  maxInFlightRequests: 100,
  maxFetchWaiters: 10_000,
  maxFetchWaitMs: 30_000,
  offsetsTopicPartitions: 50,
  groupInitialRebalanceDelayMs: 3000,
  groupMinSessionTimeoutMs: 6000,
  groupMaxSessionTimeoutMs: 1_800_000,
  transactionStateTopicPartitions: 50,
  transactionMaxTimeoutMs: 900_000,
  transactionalIdExpirationMs: 604_800_000,
  transactionRemoveExpiredTransactionCleanupIntervalMs: 3_600_000,
  log: (line: string): void => void process.stdout.write(`${line}\n`),
});
