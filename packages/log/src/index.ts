/**
 * The public surface of the @seglog/log package.
 * @module @seglog/log
 */
// @seglog/log: the storage engine. The front door for embedders is openLog()
// (an EmbeddedLog: one unreplicated log in a directory); below it the
// building blocks (file names, config, indexes, checkpoints, leader-epoch
// cache), Segment, Log, LogManager and FetchPlan, which brokers use.

export { FileNames, SegmentFileSuffix, TransientSuffix, TOPIC_NAME_MAX_LENGTH } from './file-names.js';
export type {
  SegmentFileKind,
  TransientKind,
  PartitionDirState,
  TopicPartition,
  ParsedSegmentFileName,
  ParsedPartitionDirName,
} from './file-names.js';
export { LogConfig } from './log-config.js';
export type { LogConfigValues, LogConfigKey, MessageTimestampType, WriteMode } from './log-config.js';
export { OffsetIndex, OFFSET_INDEX_ENTRY_BYTES, writeOffsetIndexEntry } from './segment/offset-index.js';
export type { OffsetPosition, IndexOpenOptions } from './segment/offset-index.js';
export { TimeIndex, TIME_INDEX_ENTRY_BYTES, writeTimeIndexEntry } from './segment/time-index.js';
export type { TimestampOffset } from './segment/time-index.js';
export { TxnIndex, TXN_INDEX_ENTRY_BYTES, writeAbortedTxn } from './segment/txn-index.js';
export type { AbortedTxn, TxnIndexSearchResult, TxnIndexOpenOptions } from './segment/txn-index.js';
export { CheckpointFile, CHECKPOINT_MAX_BYTES } from './checkpoint/checkpoint-file.js';
export type { CheckpointFormat } from './checkpoint/checkpoint-file.js';
export { OffsetCheckpoint } from './checkpoint/offset-checkpoint.js';
export type { OffsetCheckpointEntry } from './checkpoint/offset-checkpoint.js';
export { LeaderEpochCheckpoint } from './checkpoint/leader-epoch-checkpoint.js';
export { CleanerStatsCheckpoint, CLEANER_STATS_FILE } from './checkpoint/cleaner-stats-checkpoint.js';
export type { CleanerStatsEntry } from './checkpoint/cleaner-stats-checkpoint.js';
export { LeaderEpochCache, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET } from './checkpoint/leader-epoch-cache.js';
export type { EpochEntry, EpochEndOffset } from './checkpoint/leader-epoch-cache.js';
export { FetchPlan, SegmentFileRef } from './fetch-plan.js';
export type { FetchPart, FetchPlanFields, IsolationLevel } from './fetch-plan.js';
export { PlanBatchReader } from './plan-batch-reader.js';
export type { PlanBatchReaderOptions, PlanSource } from './plan-batch-reader.js';
export { Segment } from './segment/segment.js';
export { recoveryVerdict } from './recovery/recovery-verdict.js';
export { surveyDamage } from './recovery/damage-survey.js';
export type { DamagedRange, SurveyBounds } from './recovery/damage-survey.js';
export type { RecoveryFacts, RecoveryVerdict } from './recovery/recovery-verdict.js';
export type { SegmentRecovery, SegmentRange, RecoveryStop, TimestampLookup } from './segment/segment.js';
export { Log, EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from './log/log.js';
export type {
  LogOpenOptions, AppendResult, ReadOptions, LogState, LogMetrics, CorruptionPolicy, TxnMarkerOptions,
  ActiveWriteMode, DirectFallback, TailCacheOptionsForLog, PlacementMetrics, PlacementReasons, PlacementReason,
} from './log/log.js';
export { TailCache, TailCacheBudget } from './cache/tail-cache.js';
export type { TailCacheOptions, TailCacheBudgetOptions } from './cache/tail-cache.js';
export { BlackholeLog } from './blackhole-log.js';
export type { BlackholeLogOptions, BlackholeMetrics } from './blackhole-log.js';
export { ProducerStateManager, DEFAULT_PRODUCER_ID_EXPIRATION_MS } from './producer/producer-state-manager.js';
export type { ProducerStateManagerOptions, ReplayedTxn, DuplicateCandidate } from './producer/producer-state-manager.js';
export { ProducerAppendInfo } from './producer/producer-append-info.js';
export type { AppendOrigin, CompletedTxn, TxnMetadata, ProducerDataBatch, ProducerTxnMarker } from './producer/producer-append-info.js';
export { ProducerStateEntry, NUM_BATCHES_TO_RETAIN, NO_PRODUCER_EPOCH, NO_SEQUENCE } from './producer/producer-state-entry.js';
export type { BatchMetadata } from './producer/producer-state-entry.js';
export { encodeSnapshot, decodeSnapshot, snapshotOffsets, latestValidSnapshot, PRODUCER_SNAPSHOT_ENTRY_BYTES } from './producer/producer-snapshot.js';
export type { ProducerSnapshotEntry } from './producer/producer-snapshot.js';
export { LogManager, CLEAN_SHUTDOWN_VERSION, describeOffline } from './log-manager.js';
export { LogCleaner, CLEANER_OFFSET_CHECKPOINT } from './cleaner/log-cleaner.js';
export type { CleanerLogState, LogCleanerOptions } from './cleaner/log-cleaner.js';
export type { CleanPassStats } from './cleaner/clean-pass.js';
export type { CleanupPolicy } from './log-config.js';
export type { LogManagerOptions, LogManagerState, OfflineNotice, RefusalNotice, SkippedEntry } from './log-manager.js';
export type { HandleCacheStats } from './log-dir/handle-cache.js';
export { DEFAULT_MAX_OPEN_SEGMENT_FILES } from './log-dir/handle-cache.js';
export type { DiskGuard, DiskGuardOptions } from './internal/disk-guard.js';
export { openLog, EMBEDDED_TOPIC } from './embed/open-log.js';
export type { OpenLogOptions, EmbeddedDirectFallback } from './embed/open-log.js';
export { EmbeddedLog } from './embed/embedded-log.js';
export type { AppendOptions } from './embed/embedded-log.js';
export { readRecords } from './embed/record-stream.js';
export type { RecordsOptions, WaitForAppend } from './embed/record-stream.js';
