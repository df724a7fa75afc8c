// TransactionCoordinator: Kafka's transaction coordinator rules
// (TransactionCoordinator.scala, facts not code) for every transactional id
// of the broker. States and transitions:
//
//   Empty ──AddPartitions/AddOffsets──▶ Ongoing ──EndTxn──▶ PrepareCommit|PrepareAbort
//     ▲                                                        │ markers on every partition
//     └────────────InitProducerId (epoch bump)──── CompleteCommit|CompleteAbort ◀┘
//
// Every transition is first stored in __transaction_state (TxnPersistence),
// then applied in memory; a failed write leaves the state as it was and the
// client is answered COORDINATOR_NOT_AVAILABLE (it retries). EndTxn is
// answered once the markers are on every partition and CompleteX is stored;
// a failure after PrepareX leaves the id prepared, and the retried EndTxn (or
// the next start-up) completes it: a prepared transaction is never undone.
//
// InitProducerId bumps the epoch (a new producer id when the epoch would
// overflow), which fences the previous producer (its epoch gets
// PRODUCER_FENCED here, INVALID_PRODUCER_EPOCH at the partitions); an Ongoing
// transaction of the id is first aborted with the bumped epoch and the client
// answered CONCURRENT_TRANSACTIONS (it retries once the abort is done).
// KIP-360: a producer that sends its current id and epoch gets a bump; one
// that sends the pair it held before the last bump gets the current pair.
// Transactions left Ongoing past their timeout are aborted the same way (with
// an epoch bump) by a timer on the injected clock.
//
// transactional.id.expiration.ms (Kafka's TransactionStateManager, facts not
// code): a second timer, every removeExpiredTransactionalIdsIntervalMs, removes
// each idle id (Empty, CompleteCommit or CompleteAbort, no write pending) whose
// last update is at least transactionalIdExpirationMs old: a tombstone for its
// key is stored, then the id is dropped from memory (a failed write keeps it
// for the next check). The next InitProducerId of the id starts afresh (a new
// producer id). Ongoing and prepared ids never expire.
//
// Until load() completes every call answers COORDINATOR_LOAD_IN_PROGRESS.

import { assert } from '@seglog/common';
import type { BrokerErrorName } from '../../protocol/index.js';
import type { GroupClock, GroupTimer } from '../group/group-clock.js';
import { TxnMetadata, partitionKey } from './txn-metadata.js';
import type { TxnPersistence } from './txn-persistence.js';
import type { StoredTxn, TxnPartition, TxnRecord, TxnStateName } from './txn-records.js';

/** The largest epoch handed out before a new producer id (Kafka: Short.MaxValue - 1). */
export const MAX_PRODUCER_EPOCH = 32766;

export interface TransactionCoordinatorOptions {
  /** transaction.max.timeout.ms (Kafka 900000). */
  readonly transactionMaxTimeoutMs: number;
  /** transaction.abort.timed.out.transaction.cleanup.interval.ms (Kafka 10000). */
  readonly abortTimedOutIntervalMs: number;
  /** transactional.id.expiration.ms: an idle id older than this is removed (Kafka 604800000, 7 days). */
  readonly transactionalIdExpirationMs: number;
  /** transaction.remove.expired.transaction.cleanup.interval.ms: how often expired ids are looked for (Kafka 3600000). */
  readonly removeExpiredTransactionalIdsIntervalMs: number;
}

/** The longest delay a node timer takes (setTimeout fires at once above it). */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

export const TXN_DEFAULTS: TransactionCoordinatorOptions = Object.freeze({
  transactionMaxTimeoutMs: 900_000,
  abortTimedOutIntervalMs: 10_000,
  transactionalIdExpirationMs: 604_800_000,
  removeExpiredTransactionalIdsIntervalMs: 3_600_000,
});

export interface ProducerIdAndEpoch {
  readonly error: BrokerErrorName;
  readonly producerId: number;
  readonly producerEpoch: number;
}

export interface TxnRequest {
  readonly transactionalId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
}

export interface TxnDeps {
  readonly persistence: TxnPersistence;
  readonly clock: GroupClock;
  readonly allocateProducerId: () => Promise<number>;
}

export class TransactionCoordinator {
  readonly options: TransactionCoordinatorOptions;
  readonly txns: Map<string, TxnMetadata>;
  loading: boolean;
  private readonly deps: TxnDeps;
  private timer: GroupTimer | null;
  private expirationTimer: GroupTimer | null;
  /** Completions and aborts running in the background (start-up recovery, fencing, timeouts). */
  private readonly background: Set<Promise<void>>;

  constructor(deps: TxnDeps, options: Partial<TransactionCoordinatorOptions> = {}) {
    this.options = { ...TXN_DEFAULTS, ...options };
    assert(Number.isSafeInteger(this.options.transactionalIdExpirationMs), 'TransactionCoordinator: transactionalIdExpirationMs is not an integer');
    assert(this.options.transactionalIdExpirationMs >= 1, 'TransactionCoordinator: transactionalIdExpirationMs < 1');
    assert(Number.isSafeInteger(this.options.removeExpiredTransactionalIdsIntervalMs), 'TransactionCoordinator: removeExpiredTransactionalIdsIntervalMs is not an integer');
    assert(this.options.removeExpiredTransactionalIdsIntervalMs >= 1, 'TransactionCoordinator: removeExpiredTransactionalIdsIntervalMs < 1');
    assert(this.options.removeExpiredTransactionalIdsIntervalMs <= MAX_TIMER_DELAY_MS, 'TransactionCoordinator: removeExpiredTransactionalIdsIntervalMs above a timer\'s range');
    this.deps = deps;
    this.txns = new Map();
    this.loading = true;
    this.timer = null;
    this.expirationTimer = null;
    this.background = new Set();
  }

  /**
   * Applies stored records (last write per id wins, null deletes), starts
   * answering, completes every prepared transaction (markers, then CompleteX)
   * and starts the timeout and expiration timers.
   */
  load(records: Iterable<TxnRecord>): void {
    assert(this.loading, 'TransactionCoordinator.load: already loaded');
    for (const record of records) {
      if (record.value === null) this.txns.delete(record.transactionalId);
      else this.txns.set(record.transactionalId, TxnMetadata.restore(record.transactionalId, record.value));
    }
    this.loading = false;
    for (const txn of this.txns.values()) {
      if (txn.state === 'PrepareCommit' || txn.state === 'PrepareAbort') this.inBackground(txn, () => this.finish(txn, txn.state === 'PrepareCommit'));
    }
    this.scheduleTimeouts();
    this.scheduleExpiration();
  }

  /** Resolves when no background completion runs (tests and stop). */
  async settled(): Promise<void> {
    while (this.background.size > 0) await Promise.all([...this.background]);
  }

  async initProducerId(transactionalId: string, timeoutMs: number, expected: { producerId: number; producerEpoch: number }): Promise<ProducerIdAndEpoch> {
    if (this.loading) return fail('COORDINATOR_LOAD_IN_PROGRESS');
    if (transactionalId.length === 0) return fail('INVALID_REQUEST');
    if (timeoutMs <= 0 || timeoutMs > this.options.transactionMaxTimeoutMs) return fail('INVALID_TRANSACTION_TIMEOUT');
    let txn = this.txns.get(transactionalId);
    let created = false;
    if (txn === undefined) {
      const producerId = await this.deps.allocateProducerId();
      txn = this.txns.get(transactionalId);
      if (txn === undefined) {
        txn = new TxnMetadata(transactionalId, producerId, timeoutMs, this.deps.clock.now());
        this.txns.set(transactionalId, txn);
        created = true;
      }
    }
    if (txn.pending) return fail('CONCURRENT_TRANSACTIONS');
    const hasExpected = expected.producerId >= 0 && expected.producerEpoch >= 0;
    if (hasExpected && !created) {
      // A retry of an InitProducerId already done: the current pair, no second bump.
      if (expected.producerId === txn.lastProducerId && expected.producerEpoch === txn.lastProducerEpoch && isComplete(txn.state)) {
        return { error: 'NONE', producerId: txn.producerId, producerEpoch: txn.producerEpoch };
      }
      if (expected.producerId !== txn.producerId || expected.producerEpoch !== txn.producerEpoch) return fail('PRODUCER_FENCED');
    }
    switch (txn.state) {
      case 'PrepareCommit': case 'PrepareAbort': case 'PrepareEpochFence': return fail('CONCURRENT_TRANSACTIONS');
      case 'Ongoing':
        this.fenceAndAbort(txn);
        return fail('CONCURRENT_TRANSACTIONS');
      default: return this.bumpEpoch(txn, timeoutMs);
    }
  }

  private async bumpEpoch(txn: TxnMetadata, timeoutMs: number): Promise<ProducerIdAndEpoch> {
    const fresh = txn.producerEpoch >= MAX_PRODUCER_EPOCH;
    txn.pending = true;
    try {
      const producerId = fresh ? await this.deps.allocateProducerId() : txn.producerId;
      const now = this.deps.clock.now();
      const next = txn.stored({
        producerId, producerEpoch: fresh ? 0 : txn.producerEpoch + 1, transactionTimeoutMs: timeoutMs, state: 'Empty',
        partitions: [], lastUpdateTimestampMs: now, startTimestampMs: -1,
      });
      await this.deps.persistence.store(txn.transactionalId, next);
      txn.lastProducerId = txn.producerId;
      txn.lastProducerEpoch = txn.producerEpoch;
      txn.apply(next);
      return { error: 'NONE', producerId: txn.producerId, producerEpoch: txn.producerEpoch };
    } catch {
      return fail('COORDINATOR_NOT_AVAILABLE');
    } finally {
      txn.pending = false;
    }
  }

  /** The checks every call of a producer inside a transaction passes first; null when it may go on. */
  private gate(request: TxnRequest): { txn: TxnMetadata } | { error: BrokerErrorName } {
    if (this.loading) return { error: 'COORDINATOR_LOAD_IN_PROGRESS' };
    const txn = this.txns.get(request.transactionalId);
    if (txn === undefined || txn.producerId !== request.producerId) return { error: 'INVALID_PRODUCER_ID_MAPPING' };
    if (txn.producerEpoch !== request.producerEpoch) return { error: 'PRODUCER_FENCED' };
    if (txn.pending) return { error: 'CONCURRENT_TRANSACTIONS' };
    return { txn };
  }

  /**
   * AddPartitionsToTxn / AddOffsetsToTxn (the group's __consumer_offsets
   * partition): the partitions join the transaction, which becomes Ongoing.
   * All partitions get the one error, as in Kafka.
   */
  async addPartitions(request: TxnRequest, partitions: readonly TxnPartition[]): Promise<BrokerErrorName> {
    const gated = this.gate(request);
    if ('error' in gated) return gated.error;
    const { txn } = gated;
    if (txn.state === 'PrepareCommit' || txn.state === 'PrepareAbort' || txn.state === 'PrepareEpochFence') return 'CONCURRENT_TRANSACTIONS';
    if (txn.state === 'Dead') return 'INVALID_TXN_STATE';
    const added = partitions.filter((p) => !txn.partitions.has(partitionKey(p.topic, p.partition)));
    if (txn.state === 'Ongoing' && added.length === 0) return 'NONE';
    const now = this.deps.clock.now();
    const starting = txn.state !== 'Ongoing';
    const next = txn.stored({
      state: 'Ongoing', partitions: [...(starting ? [] : txn.partitions.values()), ...dedupe(added)],
      lastUpdateTimestampMs: now, startTimestampMs: starting ? now : txn.startMs,
    });
    txn.pending = true;
    try {
      await this.deps.persistence.store(txn.transactionalId, next);
      txn.apply(next);
      return 'NONE';
    } catch {
      return 'COORDINATOR_NOT_AVAILABLE';
    } finally {
      txn.pending = false;
    }
  }

  /** AddPartitionsToTxn v4+ VerifyOnly: NONE for a partition of the Ongoing transaction, INVALID_TXN_STATE otherwise. */
  verifyPartitions(request: TxnRequest, partitions: readonly TxnPartition[]): BrokerErrorName[] {
    const gated = this.gate(request);
    if ('error' in gated) return partitions.map(() => gated.error);
    const { txn } = gated;
    return partitions.map((p) => (txn.state === 'Ongoing' && txn.partitions.has(partitionKey(p.topic, p.partition)) ? 'NONE' : 'INVALID_TXN_STATE'));
  }

  /**
   * Produce verification (KIP-890 part 1; Kafka's
   * handleVerifyPartitionsInTransaction, facts not code): NONE when the
   * producer holds the id's current pair and its transaction contains
   * `partition`. Unlike gate() a pending write is not CONCURRENT_TRANSACTIONS:
   * a partition joins `partitions` only once its AddPartitionsToTxn is stored
   * and leaves only once its marker is written, so a produce to an added
   * partition may run while the producer adds the next one. A prepared
   * transaction is CONCURRENT_TRANSACTIONS (the produce handler makes it a
   * retriable error, as Kafka does).
   */
  verifyProduce(request: TxnRequest, partition: TxnPartition): BrokerErrorName {
    if (this.loading) return 'COORDINATOR_LOAD_IN_PROGRESS';
    const txn = this.txns.get(request.transactionalId);
    if (txn === undefined || txn.producerId !== request.producerId) return 'INVALID_PRODUCER_ID_MAPPING';
    if (txn.producerEpoch !== request.producerEpoch) return 'PRODUCER_FENCED';
    if (txn.state === 'PrepareCommit' || txn.state === 'PrepareAbort' || txn.state === 'PrepareEpochFence') return 'CONCURRENT_TRANSACTIONS';
    if (txn.state !== 'Ongoing') return 'INVALID_TXN_STATE';
    return txn.partitions.has(partitionKey(partition.topic, partition.partition)) ? 'NONE' : 'INVALID_TXN_STATE';
  }

  /**
   * For TxnOffsetCommit: NONE when the producer holds the id's current epoch
   * and the transaction is Ongoing with `partition` (the group's
   * __consumer_offsets partition, added by AddOffsetsToTxn: without it no
   * marker would ever complete the offsets).
   */
  checkOngoing(request: TxnRequest, partition: TxnPartition): BrokerErrorName {
    const gated = this.gate(request);
    if ('error' in gated) return gated.error;
    const { txn } = gated;
    return txn.state === 'Ongoing' && txn.partitions.has(partitionKey(partition.topic, partition.partition)) ? 'NONE' : 'INVALID_TXN_STATE';
  }

  async endTxn(request: TxnRequest, commit: boolean): Promise<BrokerErrorName> {
    const gated = this.gate(request);
    if ('error' in gated) return gated.error;
    const { txn } = gated;
    switch (txn.state) {
      case 'Ongoing': return this.complete(txn, commit);
      // A retry after an answered (or lost) EndTxn.
      case 'CompleteCommit': return commit ? 'NONE' : 'INVALID_TXN_STATE';
      case 'CompleteAbort': return commit ? 'INVALID_TXN_STATE' : 'NONE';
      // A prepared transaction whose markers failed: the retry completes it.
      case 'PrepareCommit': return commit ? this.runFinish(txn, true) : 'INVALID_TXN_STATE';
      case 'PrepareAbort': return commit ? 'INVALID_TXN_STATE' : this.runFinish(txn, false);
      default: return 'INVALID_TXN_STATE';
    }
  }

  /** PrepareX stored, then markers and CompleteX. */
  private async complete(txn: TxnMetadata, commit: boolean): Promise<BrokerErrorName> {
    txn.pending = true;
    try {
      const prepared = txn.stored({ state: commit ? 'PrepareCommit' : 'PrepareAbort', lastUpdateTimestampMs: this.deps.clock.now() });
      try {
        await this.deps.persistence.store(txn.transactionalId, prepared);
      } catch {
        return 'COORDINATOR_NOT_AVAILABLE';
      }
      txn.apply(prepared);
      return await this.finishOrError(txn, commit);
    } finally {
      txn.pending = false;
    }
  }

  private async runFinish(txn: TxnMetadata, commit: boolean): Promise<BrokerErrorName> {
    txn.pending = true;
    try {
      return await this.finishOrError(txn, commit);
    } finally {
      txn.pending = false;
    }
  }

  private async finishOrError(txn: TxnMetadata, commit: boolean): Promise<BrokerErrorName> {
    try {
      await this.finish(txn, commit);
      return 'NONE';
    } catch {
      return 'COORDINATOR_NOT_AVAILABLE';
    }
  }

  /** A prepared transaction: markers on every partition, then CompleteX (partitions cleared). Throws when a write fails. */
  private async finish(txn: TxnMetadata, commit: boolean): Promise<void> {
    assert(txn.state === (commit ? 'PrepareCommit' : 'PrepareAbort'), 'TransactionCoordinator.finish: not prepared');
    await this.deps.persistence.writeMarkers([...txn.partitions.values()], { producerId: txn.producerId, producerEpoch: txn.producerEpoch, commit });
    const completed = txn.stored({ state: commit ? 'CompleteCommit' : 'CompleteAbort', partitions: [], lastUpdateTimestampMs: this.deps.clock.now() });
    await this.deps.persistence.store(txn.transactionalId, completed);
    txn.apply(completed);
  }

  /**
   * Fences the producer of an Ongoing transaction (epoch + 1, Kafka's
   * prepareFenceProducerEpoch) and aborts the transaction with the new epoch,
   * in the background. At the epoch limit the abort keeps the epoch (the next
   * InitProducerId hands out a new producer id).
   */
  private fenceAndAbort(txn: TxnMetadata): void {
    assert(txn.state === 'Ongoing' && !txn.pending, 'TransactionCoordinator.fenceAndAbort: not an idle Ongoing transaction');
    this.inBackground(txn, async () => {
      const epoch = txn.producerEpoch < MAX_PRODUCER_EPOCH ? txn.producerEpoch + 1 : txn.producerEpoch;
      const prepared = txn.stored({ producerEpoch: epoch, state: 'PrepareAbort', lastUpdateTimestampMs: this.deps.clock.now() });
      await this.deps.persistence.store(txn.transactionalId, prepared);
      txn.apply(prepared);
      await this.finish(txn, false);
    });
  }

  private inBackground(txn: TxnMetadata, work: () => Promise<void>): void {
    txn.pending = true;
    const running: Promise<void> = work().catch(() => {
      // Left as stored: a prepared transaction completes at the next EndTxn retry, timeout check or start-up;
      // an id whose tombstone failed stays until the next expiration check.
    }).finally(() => {
      txn.pending = false;
      this.background.delete(running);
    });
    this.background.add(running);
  }

  private scheduleTimeouts(): void {
    this.timer = this.deps.clock.schedule(this.options.abortTimedOutIntervalMs, () => {
      this.timer = null;
      this.abortTimedOut();
      if (!this.loading) this.scheduleTimeouts();
    });
  }

  /** Aborts every idle Ongoing transaction past its timeout; retries prepared ones whose completion failed. */
  abortTimedOut(): void {
    const now = this.deps.clock.now();
    for (const txn of this.txns.values()) {
      if (txn.pending) continue;
      if (txn.state === 'Ongoing' && txn.startMs + txn.timeoutMs <= now) this.fenceAndAbort(txn);
      else if (txn.state === 'PrepareCommit' || txn.state === 'PrepareAbort') this.inBackground(txn, () => this.finish(txn, txn.state === 'PrepareCommit'));
    }
  }

  private scheduleExpiration(): void {
    this.expirationTimer = this.deps.clock.schedule(this.options.removeExpiredTransactionalIdsIntervalMs, () => {
      this.expirationTimer = null;
      this.removeExpired();
      if (!this.loading) this.scheduleExpiration();
    });
  }

  /**
   * Removes every idle id (Empty or CompleteX, no write pending) last updated
   * at least transactionalIdExpirationMs ago, in the background: its
   * tombstone is stored, then it leaves `txns`. While the tombstone is
   * written the id is pending (its calls answer CONCURRENT_TRANSACTIONS); a
   * failed write leaves it as it was.
   */
  removeExpired(): void {
    const now = this.deps.clock.now();
    for (const txn of this.txns.values()) {
      if (txn.pending || !isComplete(txn.state)) continue;
      if (txn.updateMs > now - this.options.transactionalIdExpirationMs) continue;
      this.inBackground(txn, async () => {
        await this.deps.persistence.store(txn.transactionalId, null);
        assert(this.txns.get(txn.transactionalId) === txn, 'TransactionCoordinator.removeExpired: the id changed while its tombstone was written');
        assert(isComplete(txn.state), 'TransactionCoordinator.removeExpired: the id left its idle state while its tombstone was written');
        this.txns.delete(txn.transactionalId);
      });
    }
  }

  /** DescribeTransactions: one id. */
  describe(transactionalId: string): { error: BrokerErrorName; txn: TxnMetadata | null } {
    if (this.loading) return { error: 'COORDINATOR_LOAD_IN_PROGRESS', txn: null };
    const txn = this.txns.get(transactionalId);
    return txn === undefined ? { error: 'TRANSACTIONAL_ID_NOT_FOUND', txn: null } : { error: 'NONE', txn };
  }

  /** ListTransactions: ids whose state and producer id pass the filters (empty filter: any), running at least durationMs (< 0: any). */
  list(filter: { states: readonly string[]; producerIds: readonly number[]; durationMs: number }): TxnMetadata[] {
    const now = this.deps.clock.now();
    return [...this.txns.values()].filter((txn) => (filter.states.length === 0 || filter.states.includes(txn.state))
      && (filter.producerIds.length === 0 || filter.producerIds.includes(txn.producerId))
      && (filter.durationMs < 0 || (txn.state === 'Ongoing' && now - txn.startMs >= filter.durationMs)));
  }

  /** The Ongoing and prepared transactions (`seglog stats`, status). */
  openTransactions(): TxnMetadata[] {
    return [...this.txns.values()].filter((txn) => txn.state === 'Ongoing' || txn.state === 'PrepareCommit' || txn.state === 'PrepareAbort');
  }

  /** Stops the timers (broker stop); background completions are awaited by settled(). */
  shutdown(): void {
    this.timer?.cancel();
    this.timer = null;
    this.expirationTimer?.cancel();
    this.expirationTimer = null;
    this.loading = true;
  }
}

function fail(error: BrokerErrorName): ProducerIdAndEpoch {
  return { error, producerId: -1, producerEpoch: -1 };
}

function isComplete(state: TxnStateName): boolean {
  return state === 'Empty' || state === 'CompleteCommit' || state === 'CompleteAbort';
}

function dedupe(partitions: readonly TxnPartition[]): TxnPartition[] {
  const seen = new Map<string, TxnPartition>();
  for (const p of partitions) seen.set(partitionKey(p.topic, p.partition), p);
  return [...seen.values()];
}

export type { StoredTxn };
