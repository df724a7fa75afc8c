// Broker: the reference single-node Kafka-protocol broker. A TCP server
// (node:net) whose connections (internal/connection.ts) decode requests and
// answer them in order; the handlers (internal/handlers/*) run against a
// TopicStore (a LogManager over the data directory, or BlackholeLogs).
//
// Node 0 is the only broker, the controller and the leader (epoch 0) of every
// partition, with replicas = isr = [0]. The high watermark of a partition
// follows the acknowledged end (see handlers/produce.ts), so consumers read
// only acknowledged records.
//
// Lifecycle: start() opens the store (LogManager: lock, recovery), then
// listens; stop() (also on SIGINT/SIGTERM in main.ts) stops accepting, ends
// long polls, lets every connection answer what it has read, and closes the
// LogManager (checkpoints, clean-shutdown marker).

import { SeglogError } from '@seglog/common';
import { LogConfig } from '@seglog/log';
import type { LogManager } from '@seglog/log';
import type { LogConfigValues } from '@seglog/log';
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import { BROKER_DEFAULTS } from './broker-options.js';
import type { BrokerOptions } from './broker-options.js';
import type { BrokerContext, BrokerStats } from './internal/broker-context.js';
import { errorMessageOf } from './internal/errors.js';
import { Connection } from './internal/connection.js';
import { FetchWaiters } from './internal/fetch-waiters.js';
import { handleAlterConfigs } from './internal/handlers/alter-configs.js';
import { handleCreatePartitions } from './internal/handlers/create-partitions.js';
import { handleCreateTopics } from './internal/handlers/create-topics.js';
import { handleDeleteTopics } from './internal/handlers/delete-topics.js';
import { handleDescribeCluster } from './internal/handlers/describe-cluster.js';
import { handleDescribeConfigs } from './internal/handlers/describe-configs.js';
import { handleIncrementalAlterConfigs } from './internal/handlers/incremental-alter-configs.js';
import { GroupCoordinator } from './internal/group/group-coordinator.js';
import { SYSTEM_CLOCK } from './internal/group/group-clock.js';
import type { GroupPersistence } from './internal/group/group-persistence.js';
import { OFFSETS_TOPIC, OffsetsTopic } from './internal/group/offsets-topic.js';
import { handleDeleteGroups } from './internal/handlers/delete-groups.js';
import { handleDeleteRecords } from './internal/handlers/delete-records.js';
import { handleDescribeGroups } from './internal/handlers/describe-groups.js';
import { handleFetch } from './internal/handlers/fetch.js';
import { handleFindCoordinator } from './internal/handlers/find-coordinator.js';
import { handleHeartbeat } from './internal/handlers/heartbeat.js';
import { handleInitProducerId } from './internal/handlers/init-producer-id.js';
import { handleJoinGroup } from './internal/handlers/join-group.js';
import { handleLeaveGroup } from './internal/handlers/leave-group.js';
import { handleListGroups } from './internal/handlers/list-groups.js';
import { handleListOffsets } from './internal/handlers/list-offsets.js';
import { handleMetadata } from './internal/handlers/metadata.js';
import { handleOffsetCommit } from './internal/handlers/offset-commit.js';
import { handleOffsetDelete } from './internal/handlers/offset-delete.js';
import { handleOffsetFetch } from './internal/handlers/offset-fetch.js';
import { handleProduce } from './internal/handlers/produce.js';
import { handleSyncGroup } from './internal/handlers/sync-group.js';
import { handleAddOffsetsToTxn } from './internal/handlers/add-offsets-to-txn.js';
import { handleAddPartitionsToTxn } from './internal/handlers/add-partitions-to-txn.js';
import { handleDescribeTransactions, handleListTransactions } from './internal/handlers/describe-transactions.js';
import { handleEndTxn } from './internal/handlers/end-txn.js';
import { handleTxnOffsetCommit } from './internal/handlers/txn-offset-commit.js';
import { addPendingTxnOffsets } from './internal/group/txn-offsets.js';
import { TransactionCoordinator } from './internal/txn/transaction-coordinator.js';
import type { TxnPersistence } from './internal/txn/txn-persistence.js';
import { TXN_STATE_TOPIC, TxnStateTopic, writeTxnMarkers } from './internal/txn/txn-state-topic.js';
import { ProducerIdAllocator } from './internal/producer-id-allocator.js';
import { StatusReporter } from './internal/status-reporter.js';
import { openFdBudget } from './internal/fd-budget.js';
import type { FdBudget } from './internal/fd-budget.js';
import { TopicStore } from './internal/topic-store.js';
import { MemoryPool, ProtocolWriter, encodeResponse } from '@seglog/protocol';
import type { ApiName, DecodedRequest, FinishedMessage, ResponseBodies } from '@seglog/protocol';
import { apiVersionsFallback, apiVersionsResponse } from './protocol/index.js';

export type { BrokerStats } from './internal/broker-context.js';

const DRAIN_TIMEOUT_MS = 10_000;

function logConfigOf(options: BrokerOptions): LogConfig {
  const overrides: Partial<LogConfigValues> = { writeMode: options.writeMode, preallocate: options.preallocate };
  const values: { -readonly [K in keyof LogConfigValues]?: LogConfigValues[K] } = { ...overrides };
  if (options.flushIntervalMs !== null) values.flushIntervalMs = options.flushIntervalMs;
  if (options.flushIntervalMessages !== null) values.flushIntervalMessages = options.flushIntervalMessages;
  // The disk guard's floor and the reservation's free-space floor (LogManager takes the config's).
  if (options.minFreeBytes !== null) values.minFreeBytes = options.minFreeBytes;
  // Writeback hints only pay when an fdatasync follows (a flush policy); without one they move the kernel's
  // writeback work into the broker (measured: ~+150 ms system CPU per 660 MB under pnpm load, no throughput gain).
  if (options.flushIntervalMs === null && options.flushIntervalMessages === null) values.writebackBytes = 0;
  return new LogConfig(values);
}

export class Broker {
  readonly options: BrokerOptions;
  readonly stats: BrokerStats;
  private readonly ctx: BrokerContext;
  private readonly server: net.Server;
  private readonly connections: Set<Connection>;
  /** queued.max.request.bytes, shared by every connection's frames. */
  readonly requestMemory: MemoryPool;
  private readonly status: StatusReporter | null;
  private stopPromise: Promise<void> | null;
  /** __consumer_offsets once opened (null in blackhole mode and until start-up opens it). */
  private offsetsTopic: OffsetsTopic | null;
  private groupLoad: Promise<void> | null;
  /** __transaction_state once opened (null in blackhole mode and until start-up opens it). */
  private txnTopic: TxnStateTopic | null;

  private constructor(options: BrokerOptions, store: TopicStore, allocate: () => Promise<number>) {
    this.options = options;
    this.stats = {
      requests: 0, appends: 0, appendedBytes: 0, fetches: 0, fetchedBytes: 0, connections: 0, connectionsTotal: 0, versionsSeen: new Map(),
    };
    this.offsetsTopic = null;
    this.txnTopic = null;
    this.groupLoad = null;
    // The coordinator writes through whatever __consumer_offsets is open; until then it only answers LOAD_IN_PROGRESS.
    const persistence: GroupPersistence = {
      append: (groupId, records, producer) => (this.offsetsTopic === null ? Promise.resolve() : this.offsetsTopic.append(groupId, records, producer)),
    };
    const groups = new GroupCoordinator(persistence, SYSTEM_CLOCK, {
      initialRebalanceDelayMs: options.groupInitialRebalanceDelayMs,
      minSessionTimeoutMs: options.groupMinSessionTimeoutMs, maxSessionTimeoutMs: options.groupMaxSessionTimeoutMs,
    });
    // Until __transaction_state is open the coordinator answers LOAD_IN_PROGRESS; a blackhole broker keeps transactions in memory.
    const txnPersistence: TxnPersistence = {
      store: (transactionalId, value) => {
        if (this.txnTopic !== null) return this.txnTopic.store(transactionalId, value);
        return options.blackhole ? Promise.resolve() : Promise.reject(new Error('__transaction_state is not open'));
      },
      writeMarkers: (partitions, marker) => writeTxnMarkers(this.ctx, partitions, marker),
    };
    const txns = new TransactionCoordinator({ persistence: txnPersistence, clock: SYSTEM_CLOCK, allocateProducerId: allocate }, {
      transactionMaxTimeoutMs: options.transactionMaxTimeoutMs,
      transactionalIdExpirationMs: options.transactionalIdExpirationMs,
      removeExpiredTransactionalIdsIntervalMs: options.transactionRemoveExpiredTransactionCleanupIntervalMs,
    });
    this.ctx = {
      options, store, waiters: new FetchWaiters(options.maxFetchWaiters), stats: this.stats, allocateProducerId: allocate, groups, txns,
      advertised: { host: options.host, port: options.port }, stopping: false, reportedDamage: new Set(),
    };
    this.connections = new Set();
    this.requestMemory = new MemoryPool(options.queuedMaxRequestBytes);
    this.server = net.createServer((socket) => this.accept(socket));
    this.status = options.statusIntervalMs > 0 ? new StatusReporter(this.stats, store, options.statusIntervalMs, options.log) : null;
    this.stopPromise = null;
  }

  /** Opens the data directory and listens. Rejects with SEGLOG_ERR_BROKER_LISTEN when the port is taken (the store is closed again). */
  static async start(overrides: Partial<BrokerOptions> = {}): Promise<Broker> {
    const options: BrokerOptions = { ...BROKER_DEFAULTS, ...overrides };
    const config = logConfigOf(options);
    let allocate: () => Promise<number>;
    let ids: ProducerIdAllocator | null = null;
    let fdBudget: FdBudget | null = null;
    if (options.blackhole) {
      let next = 0;
      allocate = () => Promise.resolve(next++);
    } else {
      await mkdir(options.dataDir, { recursive: true });
      // Before any log opens: a limit too low for the budget is one clear refusal, not EMFILE halfway.
      fdBudget = await openFdBudget(options.dataDir, {
        maxOpenSegmentFiles: options.maxOpenSegmentFiles,
        internalTopics: new Map([[OFFSETS_TOPIC, options.offsetsTopicPartitions], [TXN_STATE_TOPIC, options.transactionStateTopicPartitions]]),
      });
      const opened = await ProducerIdAllocator.open(options.dataDir);
      ids = opened;
      allocate = () => opened.allocate();
    }
    const store = await TopicStore.open({ dataDir: options.dataDir, blackhole: options.blackhole, config, tailCacheBytes: options.tailCacheBytes, cleanerBackoffMs: options.logCleanerBackoffMs, maxOpenSegmentFiles: fdBudget?.maxOpenSegmentFiles ?? options.maxOpenSegmentFiles, indexCacheBytes: options.indexCacheBytes, fdBudget, log: options.log });
    try {
      // Producer ids are never reused: none handed out may be one the logs' producer state already holds.
      if (ids !== null) ids.ensureAbove(...highestProducerId(store));
    } catch (error) {
      await store.close();
      throw error;
    }
    // What the engine could not trust at open (an unreadable checkpoint, skipped directories): said once, at start.
    for (const note of store.logManager?.notes ?? []) options.log(`seglog broker: storage: ${note}`);
    for (const skipped of store.logManager?.skipped ?? []) options.log(`seglog broker: storage: skipped ${skipped.name}: ${skipped.reason}`);
    const broker = new Broker(options, store, allocate);
    try {
      await broker.listen();
    } catch (error) {
      await store.close();
      throw error;
    }
    broker.status?.start();
    broker.groupLoad = broker.loadGroups();
    return broker;
  }

  /**
   * Opens (creating on first start) __consumer_offsets and replays it into
   * the coordinator, which answers COORDINATOR_LOAD_IN_PROGRESS until then. A
   * load that fails leaves it so (said once): answering from a partial state
   * could hand out offsets older than acknowledged ones.
   */
  private async loadGroups(): Promise<void> {
    if (this.options.blackhole) {
      // Benchmark mode: groups and transactions live in memory only (a blackhole log keeps nothing).
      this.ctx.groups.load([]);
      this.ctx.txns.load([]);
      return;
    }
    try {
      const topic = await OffsetsTopic.open(this.ctx, this.options.offsetsTopicPartitions);
      const records = await topic.load();
      if (this.ctx.stopping) return;
      this.offsetsTopic = topic;
      this.ctx.groups.load(records);
      for (const [producerId, offsets] of topic.pendingAtLoad) addPendingTxnOffsets(this.ctx.groups, producerId, offsets);
    } catch (error) {
      this.options.log(`seglog broker: groups: __consumer_offsets could not be loaded, the group coordinator stays unavailable: ${errorMessageOf(error)}`);
      return;
    }
    await this.loadTransactions();
  }

  /**
   * Opens (creating on first start) __transaction_state and replays it into
   * the transaction coordinator, which then completes every prepared
   * transaction (after the groups: a marker on __consumer_offsets completes
   * the transaction's group offsets). A failed load leaves it answering
   * COORDINATOR_LOAD_IN_PROGRESS (said once).
   */
  private async loadTransactions(): Promise<void> {
    try {
      const topic = await TxnStateTopic.open(this.ctx, this.options.transactionStateTopicPartitions);
      const records = await topic.load();
      if (this.ctx.stopping) return;
      this.txnTopic = topic;
      this.ctx.txns.load(records);
    } catch (error) {
      this.options.log(`seglog broker: transactions: __transaction_state could not be loaded, the transaction coordinator stays unavailable: ${errorMessageOf(error)}`);
    }
  }

  /** Resolves once the group and transaction coordinators answer (their start-up loads are done, or failed). */
  async groupsReady(): Promise<void> {
    await this.groupLoad;
  }

  get host(): string {
    return this.ctx.advertised.host;
  }

  /** The embedded engine's data directory manager (null for a blackhole broker). */
  get logManager(): LogManager | null {
    return this.ctx.store.logManager;
  }

  /** The bound port (the chosen one when options.port was 0). */
  get port(): number {
    return this.ctx.advertised.port;
  }

  get store(): TopicStore {
    return this.ctx.store;
  }

  /** The transaction coordinator (operators' views: DescribeTransactions, open transactions). */
  get transactions(): TransactionCoordinator {
    return this.ctx.txns;
  }

  private listen(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onError = (error: NodeJS.ErrnoException): void => {
        reject(new SeglogError('SEGLOG_ERR_BROKER_LISTEN', `cannot listen on ${this.options.host}:${this.options.port}: ${error.code ?? error.message}`, {
          context: { host: this.options.host, port: this.options.port, errno: error.code ?? null }, cause: error,
        }));
      };
      this.server.once('error', onError);
      this.server.listen({ host: this.options.host, port: this.options.port, exclusive: true }, () => {
        this.server.off('error', onError);
        const address = this.server.address();
        if (address !== null && typeof address === 'object') this.ctx.advertised.port = address.port;
        resolve();
      });
    });
  }

  private accept(socket: net.Socket): void {
    if (this.ctx.stopping) {
      socket.destroy();
      return;
    }
    this.stats.connections++;
    this.stats.connectionsTotal++;
    const connection = new Connection(socket, {
      maxFrameBytes: this.options.maxRequestBytes,
      maxInFlight: this.options.maxInFlightRequests,
      pool: this.requestMemory,
      connectionsMaxIdleMs: this.options.connectionsMaxIdleMs,
      dispatch: (request, client) => this.dispatch(request, client),
      notice: this.options.log,
      onClose: (closed) => {
        this.stats.connections--;
        this.connections.delete(closed);
      },
    });
    this.connections.add(connection);
  }

  private async dispatch(request: DecodedRequest, client: { readonly host: string }): Promise<FinishedMessage | null> {
    this.stats.requests++;
    const { apiVersion: version, correlationId } = request.header;
    this.noteVersion(request.api, version);
    switch (request.api) {
      case 'API_VERSIONS_UNSUPPORTED': return apiVersionsFallback(new ProtocolWriter(), correlationId);
      case 'API_VERSIONS': return respond('API_VERSIONS', version, correlationId, apiVersionsResponse());
      case 'METADATA': return respond('METADATA', version, correlationId, await handleMetadata(this.ctx, request.body, version));
      case 'PRODUCE': {
        const body = await handleProduce(this.ctx, request.body);
        return request.body.acks === 0 ? null : respond('PRODUCE', version, correlationId, body);
      }
      case 'FETCH': return respond('FETCH', version, correlationId, await handleFetch(this.ctx, request.body));
      case 'LIST_OFFSETS': return respond('LIST_OFFSETS', version, correlationId, await handleListOffsets(this.ctx, request.body, version));
      case 'CREATE_TOPICS': return respond('CREATE_TOPICS', version, correlationId, await handleCreateTopics(this.ctx, request.body));
      case 'DELETE_RECORDS': return respond('DELETE_RECORDS', version, correlationId, await handleDeleteRecords(this.ctx, request.body));
      case 'INIT_PRODUCER_ID': return respond('INIT_PRODUCER_ID', version, correlationId, await handleInitProducerId(this.ctx, request.body, version));
      // Admin (issue 21).
      case 'DELETE_TOPICS': return respond('DELETE_TOPICS', version, correlationId, await handleDeleteTopics(this.ctx, request.body, version));
      case 'CREATE_PARTITIONS': return respond('CREATE_PARTITIONS', version, correlationId, await handleCreatePartitions(this.ctx, request.body));
      case 'DESCRIBE_CLUSTER': return respond('DESCRIBE_CLUSTER', version, correlationId, handleDescribeCluster(this.ctx, request.body, version));
      case 'DESCRIBE_CONFIGS': return respond('DESCRIBE_CONFIGS', version, correlationId, handleDescribeConfigs(this.ctx, request.body));
      case 'ALTER_CONFIGS': return respond('ALTER_CONFIGS', version, correlationId, await handleAlterConfigs(this.ctx, request.body));
      case 'INCREMENTAL_ALTER_CONFIGS':
        return respond('INCREMENTAL_ALTER_CONFIGS', version, correlationId, await handleIncrementalAlterConfigs(this.ctx, request.body));
      default: return this.dispatchGroup(request, client);
    }
  }

  /** The transaction coordinator's APIs (InitProducerId is dispatched with the producer APIs). */
  private async dispatchTxn(request: DecodedRequest): Promise<FinishedMessage> {
    const { apiVersion: version, correlationId } = request.header;
    const ctx = this.ctx;
    switch (request.api) {
      case 'ADD_PARTITIONS_TO_TXN': return respond('ADD_PARTITIONS_TO_TXN', version, correlationId, await handleAddPartitionsToTxn(ctx, request.body, version));
      case 'ADD_OFFSETS_TO_TXN': return respond('ADD_OFFSETS_TO_TXN', version, correlationId, await handleAddOffsetsToTxn(ctx, request.body, version));
      case 'END_TXN': return respond('END_TXN', version, correlationId, await handleEndTxn(ctx, request.body, version));
      case 'TXN_OFFSET_COMMIT': return respond('TXN_OFFSET_COMMIT', version, correlationId, await handleTxnOffsetCommit(ctx, request.body, version));
      case 'DESCRIBE_TRANSACTIONS': return respond('DESCRIBE_TRANSACTIONS', version, correlationId, handleDescribeTransactions(ctx, request.body));
      case 'LIST_TRANSACTIONS': return respond('LIST_TRANSACTIONS', version, correlationId, handleListTransactions(ctx, request.body));
      default: throw new Error(`dispatchTxn: ${request.api} is not a transaction API`);
    }
  }

  /** The group coordinator's APIs. */
  private async dispatchGroup(request: DecodedRequest, client: { readonly host: string }): Promise<FinishedMessage> {
    const { apiVersion: version, correlationId } = request.header;
    const ctx = this.ctx;
    switch (request.api) {
      case 'FIND_COORDINATOR': return respond('FIND_COORDINATOR', version, correlationId, handleFindCoordinator(ctx, request.body, version));
      case 'JOIN_GROUP': {
        const who = { clientId: request.header.clientId, host: `/${client.host}` };
        return respond('JOIN_GROUP', version, correlationId, await handleJoinGroup(ctx, request.body, version, who));
      }
      case 'SYNC_GROUP': return respond('SYNC_GROUP', version, correlationId, await handleSyncGroup(ctx, request.body));
      case 'HEARTBEAT': return respond('HEARTBEAT', version, correlationId, handleHeartbeat(ctx, request.body));
      case 'LEAVE_GROUP': return respond('LEAVE_GROUP', version, correlationId, handleLeaveGroup(ctx, request.body, version));
      case 'OFFSET_COMMIT': return respond('OFFSET_COMMIT', version, correlationId, await handleOffsetCommit(ctx, request.body));
      case 'OFFSET_FETCH': return respond('OFFSET_FETCH', version, correlationId, handleOffsetFetch(ctx, request.body, version));
      case 'LIST_GROUPS': return respond('LIST_GROUPS', version, correlationId, handleListGroups(ctx, request.body));
      case 'DESCRIBE_GROUPS': return respond('DESCRIBE_GROUPS', version, correlationId, handleDescribeGroups(ctx, request.body));
      case 'DELETE_GROUPS': return respond('DELETE_GROUPS', version, correlationId, await handleDeleteGroups(ctx, request.body));
      case 'OFFSET_DELETE': return respond('OFFSET_DELETE', version, correlationId, await handleOffsetDelete(ctx, request.body));
      default: return this.dispatchTxn(request);
    }
  }

  private noteVersion(api: string, version: number): void {
    let set = this.stats.versionsSeen.get(api);
    if (set === undefined) {
      set = new Set();
      this.stats.versionsSeen.set(api, set);
    }
    set.add(version);
  }

  /**
   * Graceful stop: no new connections, long polls answered now, every
   * connection answers what it already read (up to 10 s, then it is cut),
   * then the LogManager closes (checkpoints and the clean-shutdown marker).
   */
  stop(): Promise<void> {
    this.stopPromise ??= this.doStop();
    return this.stopPromise;
  }

  private async doStop(): Promise<void> {
    this.ctx.stopping = true;
    this.status?.stop();
    this.ctx.groups.shutdown();
    this.ctx.txns.shutdown();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.ctx.waiters.stop();
    const drains = [...this.connections].map((c) => c.drain());
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, DRAIN_TIMEOUT_MS);
    });
    await Promise.race([Promise.all(drains), timeout]);
    clearTimeout(timer);
    for (const connection of this.connections) connection.destroy();
    await closed;
    await this.groupLoad;
    // A completion still running (a marker or state write) finishes before the logs close; a prepared transaction left is completed at the next start.
    await this.ctx.txns.settled();
    await this.ctx.store.close();
  }
}

/** The largest producer id in any log's producer state (-1 for none), and the partition holding it. */
function highestProducerId(store: TopicStore): [number, string] {
  let highest = -1;
  let where = 'the logs';
  for (const log of store.logManager?.logs() ?? []) {
    for (const producerId of log.producerState.activeProducers().keys()) {
      if (producerId > highest) {
        highest = producerId;
        where = `the producer state of ${log.topic}-${log.partition}`;
      }
    }
  }
  return [highest, where];
}

function respond<N extends ApiName>(api: N, apiVersion: number, correlationId: number, body: ResponseBodies[N]): FinishedMessage {
  return encodeResponse(new ProtocolWriter(), { api, apiVersion, correlationId }, body);
}
