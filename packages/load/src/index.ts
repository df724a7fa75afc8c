/**
 * The public surface of the @seglog/load package.
 * @module @seglog/load
 */
// @seglog/load: the load/diagnostic client (`seglog-load`, `pnpm load`):
// idempotent producers over our own connection, a consumer that reads every
// partition back, and the integrity checker that proves every acknowledged
// record is present once, at its offset, intact, also when consuming as a
// consumer group (--group). It speaks Kafka through
// @seglog/protocol only; @seglog/broker is imported (types only) for the
// in-process broker a run may embed. See README.md.
export { runLoad } from './run-load.js';
export type { LoadReport, ProduceSummary, BrokerCpu } from './run-load.js';
export { LOAD_DEFAULTS, resolveLoadOptions } from './load-options.js';
export type { LoadOptions, LoadCorruption, LoadGroupLeave, LoadGroupJoinLate } from './load-options.js';
export type { GroupSummary, GroupMemberSummary } from './group-consumer.js';
export { GROUP_ASSIGNORS } from './group-assignor.js';
export type { GroupAssignor } from './group-assignor.js';
export type { ConsumeResult } from './load-consumer.js';
export type { LatencySummary } from './latency-recorder.js';
export { LoadErrorCode } from './load-error.js';
export { parseLoadArgs, LOAD_USAGE } from './load-args.js';
export { formatReport } from './format-report.js';
export { defaultMergeWorkers, warmMergeWorkers } from './merge-pool.js';
export { ReadCommittedChecker } from './read-committed-checker.js';
export type { ReadCommittedSetup, ReadCommittedResult, AbortedTxn } from './read-committed-checker.js';
export { fillPayload } from './payload.js';
export type { PayloadIdentity, PayloadKind } from './payload.js';
