// BrokerContext: what the request handlers share (one per broker).

import type { BrokerOptions } from '../broker-options.js';
import type { FetchWaiters } from './fetch-waiters.js';
import type { GroupCoordinator } from './group/group-coordinator.js';
import type { TopicStore } from './topic-store.js';
import type { TransactionCoordinator } from './txn/transaction-coordinator.js';

/** Counters; one shape, updated in place (the status line reads deltas). */
export interface BrokerStats {
  requests: number;
  appends: number;
  appendedBytes: number;
  fetches: number;
  fetchedBytes: number;
  connections: number;
  connectionsTotal: number;
  /** The highest request version seen per API name (diagnostics and tests). */
  readonly versionsSeen: Map<string, Set<number>>;
}

export interface BrokerContext {
  readonly options: BrokerOptions;
  readonly store: TopicStore;
  readonly waiters: FetchWaiters;
  readonly stats: BrokerStats;
  readonly allocateProducerId: () => Promise<number>;
  /** The group coordinator (answers COORDINATOR_LOAD_IN_PROGRESS until __consumer_offsets is loaded). */
  readonly groups: GroupCoordinator;
  /** The transaction coordinator (answers COORDINATOR_LOAD_IN_PROGRESS until __transaction_state is loaded). */
  readonly txns: TransactionCoordinator;
  /** The host and port advertised in Metadata (the bound port when options.port is 0). */
  readonly advertised: { host: string; port: number };
  /** True once stop() began: long polls end at once. */
  stopping: boolean;
  /** Damaged batches already logged (`<path>@<position>`): read-time damage is said once, not per fetch. */
  readonly reportedDamage: Set<string>;
}

export const CLUSTER_ID = 'seglog-single-node';
export const NODE_ID = 0;
export const LEADER_EPOCH = 0;
export const ZERO_UUID = '00000000000000000000000000000000';
