// Per-log configuration: Kafka's topic-level settings under their Kafka names
// in camelCase, with Kafka's defaults and minimums (reference/kafka-storage.md
// §10), plus seglog's own keys (minFreeBytes, writeMode).
//
// Kafka's Long.MAX_VALUE ("never", "unbounded") is Number.MAX_SAFE_INTEGER
// here: every value is a JS number and must be a safe integer. Keys that are
// INT in Kafka are also bounded by 2^31 − 1. A rejected value raises
// SEGLOG_ERR_LOG_INVALID_CONFIG naming the key (camelCase and Kafka's name).

import { SeglogError } from '@seglog/common';
import { SPARSE_WRITE_BACK_BYTES } from './segment/sparse-index.js';

export type MessageTimestampType = 'CreateTime' | 'LogAppendTime';
export type WriteMode = 'buffered' | 'direct';
/** cleanup.policy: segments go by retention ('delete'), by compaction ('compact'), both, or neither (Kafka's empty list: keep everything). */
export type CleanupPolicy = 'delete' | 'compact' | 'compact,delete' | '';

export interface LogConfigValues {
  /** segment.bytes: roll when an append would make the segment larger than this. */
  readonly segmentBytes: number;
  /** segment.ms: time-based roll. */
  readonly segmentMs: number;
  /** segment.jitter.ms: maximum random jitter subtracted from segmentMs per segment. */
  readonly segmentJitterMs: number;
  /** index.interval.bytes: bytes between offset-index entries. */
  readonly indexIntervalBytes: number;
  /** segment.index.bytes: maximum size of .index and .timeindex. */
  readonly segmentIndexBytes: number;
  /**
   * seglog: bytes of the active segment's .index/.timeindex entries left unwritten before a background
   * write-back (default 4096, a page); the rest is written at the roll or the close, and recovery rebuilds
   * the active segment's indexes. 0: every entry is written back at once (a pool write per batch).
   */
  readonly indexWriteBackBytes: number;
  /**
   * seglog: a buffered segment writer asks the OS to start writing back every this many bytes it has
   * written (sync_file_range WRITE, a hint with no durability meaning), so a later fdatasync (flush, roll,
   * close, a durable append) finds them on their way instead of all dirty at once. It moves the kernel's
   * writeback work into the process, earlier. Default 1 MiB; 0: never (the kernel's own writeback only).
   */
  readonly writebackBytes: number;
  /** max.message.bytes: maximum batch size (after compression) accepted from clients. */
  readonly maxMessageBytes: number;
  /** retention.bytes: size retention per partition; negative = unlimited. */
  readonly retentionBytes: number;
  /** retention.ms: time retention; -1 = unlimited. */
  readonly retentionMs: number;
  /** flush.messages: fsync when LEO − recoveryPoint ≥ this; MAX_SAFE_INTEGER = never. */
  readonly flushIntervalMessages: number;
  /** flush.ms: periodic fsync; MAX_SAFE_INTEGER = never. */
  readonly flushIntervalMs: number;
  /** file.delete.delay.ms: delay before .deleted files are removed. */
  readonly fileDeleteDelayMs: number;
  /** preallocate: reserve segment space ahead in zero-filled steps (capped by segmentBytes), trimmed on roll and close. */
  readonly preallocate: boolean;
  /** message.timestamp.type. */
  readonly messageTimestampType: MessageTimestampType;
  /** message.timestamp.before.max.ms: max allowed now − timestamp (CreateTime). */
  readonly messageTimestampBeforeMaxMs: number;
  /** message.timestamp.after.max.ms: max allowed timestamp − now (CreateTime). */
  readonly messageTimestampAfterMaxMs: number;
  /** producer.id.expiration.ms (a broker setting in Kafka). */
  readonly producerIdExpirationMs: number;
  /** cleanup.policy: 'compact' keeps the latest record per key (the log cleaner); retention by size and time needs 'delete'. */
  readonly cleanupPolicy: CleanupPolicy;
  /** min.cleanable.dirty.ratio: a log is cleaned when dirty / (clean + dirty) bytes reach this (0..1). */
  readonly minCleanableDirtyRatio: number;
  /** min.compaction.lag.ms: a record stays uncompacted at least this long (by segment largest timestamp). */
  readonly minCompactionLagMs: number;
  /** max.compaction.lag.ms: a dirty record older than this makes the log eligible whatever its ratio. */
  readonly maxCompactionLagMs: number;
  /** delete.retention.ms: how long tombstones and empty-transaction markers survive after their first clean (the delete horizon). */
  readonly deleteRetentionMs: number;
  /** seglog: appends are rejected (retriable) when the file system has fewer free bytes than this. */
  readonly minFreeBytes: number;
  /** seglog: page-cache writes or O_DIRECT for new segments. */
  readonly writeMode: WriteMode;
}

export type LogConfigKey = keyof LogConfigValues;

const INT32_MAX = 0x7fffffff;
const NEVER = Number.MAX_SAFE_INTEGER;
const DAY_MS = 24 * 60 * 60 * 1000;

type KeySpec =
  | { readonly kafka: string; readonly type: 'int' | 'long'; readonly min: number }
  | { readonly kafka: string; readonly type: 'double'; readonly min: number; readonly max: number }
  | { readonly kafka: string; readonly type: 'boolean' }
  | { readonly kafka: string; readonly type: 'enum'; readonly values: readonly string[] };

/** Kafka name, type and minimum (Kafka's LogConfig validators) of every key. */
const SPECS: { readonly [K in LogConfigKey]: KeySpec } = {
  segmentBytes: { kafka: 'segment.bytes', type: 'int', min: 14 },
  segmentMs: { kafka: 'segment.ms', type: 'long', min: 1 },
  segmentJitterMs: { kafka: 'segment.jitter.ms', type: 'long', min: 0 },
  indexIntervalBytes: { kafka: 'index.interval.bytes', type: 'int', min: 0 },
  segmentIndexBytes: { kafka: 'segment.index.bytes', type: 'int', min: 4 },
  indexWriteBackBytes: { kafka: 'seglog.index.write.back.bytes', type: 'int', min: 0 },
  writebackBytes: { kafka: 'seglog.writeback.bytes', type: 'int', min: 0 },
  maxMessageBytes: { kafka: 'max.message.bytes', type: 'int', min: 0 },
  // Kafka has no validator on retention.bytes: any negative value means unlimited.
  retentionBytes: { kafka: 'retention.bytes', type: 'long', min: -NEVER },
  retentionMs: { kafka: 'retention.ms', type: 'long', min: -1 },
  flushIntervalMessages: { kafka: 'flush.messages', type: 'long', min: 1 },
  flushIntervalMs: { kafka: 'flush.ms', type: 'long', min: 0 },
  fileDeleteDelayMs: { kafka: 'file.delete.delay.ms', type: 'long', min: 0 },
  preallocate: { kafka: 'preallocate', type: 'boolean' },
  messageTimestampType: { kafka: 'message.timestamp.type', type: 'enum', values: ['CreateTime', 'LogAppendTime'] },
  messageTimestampBeforeMaxMs: { kafka: 'message.timestamp.before.max.ms', type: 'long', min: 0 },
  messageTimestampAfterMaxMs: { kafka: 'message.timestamp.after.max.ms', type: 'long', min: 0 },
  producerIdExpirationMs: { kafka: 'producer.id.expiration.ms', type: 'int', min: 1 },
  cleanupPolicy: { kafka: 'cleanup.policy', type: 'enum', values: ['delete', 'compact', 'compact,delete', ''] },
  minCleanableDirtyRatio: { kafka: 'min.cleanable.dirty.ratio', type: 'double', min: 0, max: 1 },
  minCompactionLagMs: { kafka: 'min.compaction.lag.ms', type: 'long', min: 0 },
  maxCompactionLagMs: { kafka: 'max.compaction.lag.ms', type: 'long', min: 1 },
  deleteRetentionMs: { kafka: 'delete.retention.ms', type: 'long', min: 0 },
  minFreeBytes: { kafka: 'seglog.min.free.bytes', type: 'long', min: 0 },
  writeMode: { kafka: 'seglog.write.mode', type: 'enum', values: ['buffered', 'direct'] },
};

const DEFAULTS: LogConfigValues = {
  segmentBytes: 1024 * 1024 * 1024,
  segmentMs: 7 * DAY_MS,
  segmentJitterMs: 0,
  indexIntervalBytes: 4096,
  segmentIndexBytes: 10 * 1024 * 1024,
  indexWriteBackBytes: SPARSE_WRITE_BACK_BYTES,
  writebackBytes: 1024 * 1024,
  maxMessageBytes: 1024 * 1024 + 12,
  retentionBytes: -1,
  retentionMs: 7 * DAY_MS,
  flushIntervalMessages: NEVER,
  flushIntervalMs: NEVER,
  fileDeleteDelayMs: 60_000,
  preallocate: false,
  messageTimestampType: 'CreateTime',
  messageTimestampBeforeMaxMs: NEVER,
  messageTimestampAfterMaxMs: NEVER,
  producerIdExpirationMs: DAY_MS,
  cleanupPolicy: 'delete',
  minCleanableDirtyRatio: 0.5,
  minCompactionLagMs: 0,
  maxCompactionLagMs: NEVER,
  deleteRetentionMs: DAY_MS,
  // Room for a roll (two preallocated 10 MiB indexes, snapshots, checkpoints)
  // and the in-flight writes of a busy log, well before ENOSPC.
  minFreeBytes: 64 * 1024 * 1024,
  writeMode: 'buffered',
};

const KEYS = Object.keys(SPECS) as LogConfigKey[];
const KEY_BY_KAFKA_NAME: ReadonlyMap<string, LogConfigKey> = new Map(KEYS.map((k) => [SPECS[k].kafka, k]));

function invalidConfig(key: string, value: unknown, reason: string): SeglogError {
  const spec = (SPECS as Readonly<Record<string, KeySpec>>)[key];
  const kafkaName = spec === undefined ? null : spec.kafka;
  const shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return new SeglogError('SEGLOG_ERR_LOG_INVALID_CONFIG', `invalid log config ${key}${kafkaName === null ? '' : ` (${kafkaName})`} = ${shown}: ${reason}`, {
    context: { key, kafkaName, value: shown, reason },
  });
}

function checkValue(key: LogConfigKey, value: unknown): void {
  const spec = SPECS[key];
  switch (spec.type) {
    case 'boolean':
      if (typeof value !== 'boolean') throw invalidConfig(key, value, 'must be a boolean');
      return;
    case 'enum':
      if (typeof value !== 'string' || !spec.values.includes(value)) {
        throw invalidConfig(key, value, `must be one of ${spec.values.join(', ')}`);
      }
      return;
    case 'double':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidConfig(key, value, 'must be a finite number');
      if (value < spec.min || value > spec.max) throw invalidConfig(key, value, `must be between ${spec.min} and ${spec.max}`);
      return;
    case 'int':
    case 'long': {
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw invalidConfig(key, value, 'must be a safe integer');
      if (value < spec.min) throw invalidConfig(key, value, `must be at least ${spec.min}`);
      if (spec.type === 'int' && value > INT32_MAX) throw invalidConfig(key, value, 'must be at most 2147483647');
      return;
    }
  }
}

/** Parses one Kafka property string for `key`; Long.MAX and anything above 2^53 − 1 saturate to MAX_SAFE_INTEGER. */
function parseKafkaValue(key: LogConfigKey, text: string): unknown {
  const spec = SPECS[key];
  const trimmed = text.trim();
  if (spec.type === 'boolean') {
    const lower = trimmed.toLowerCase();
    if (lower === 'true') return true;
    if (lower === 'false') return false;
    throw invalidConfig(key, text, 'must be true or false');
  }
  if (spec.type === 'enum') return key === 'cleanupPolicy' ? normalizePolicy(trimmed) : trimmed;
  if (spec.type === 'double') {
    const value = trimmed === '' ? Number.NaN : Number(trimmed);
    if (!Number.isFinite(value)) throw invalidConfig(key, text, 'must be a decimal number');
    return value;
  }
  if (!/^[+-]?[0-9]+$/.test(trimmed)) throw invalidConfig(key, text, 'must be a decimal integer');
  const value = Number(trimmed);
  if (spec.type === 'long' && value > NEVER) {
    // Long.MAX_VALUE (Kafka's "never") and anything close: unbounded either way.
    if (BigInt(trimmed) > 9223372036854775807n) throw invalidConfig(key, text, 'must fit in an int64');
    return NEVER;
  }
  return value;
}

/** Kafka's cleanup.policy is a list ("delete,compact", "compact, delete"): one canonical spelling per set. */
function normalizePolicy(text: string): string {
  const parts = [...new Set(text.split(',').map((part) => part.trim()).filter((part) => part !== ''))].sort();
  return parts.join(',');
}

/** Kafka's cross-key rule (LogConfig.validateValues): the minimum compaction lag cannot exceed the maximum. */
function checkCrossKeys(v: LogConfigValues): void {
  if (v.minCompactionLagMs > v.maxCompactionLagMs) {
    throw invalidConfig('minCompactionLagMs', v.minCompactionLagMs, `must not exceed maxCompactionLagMs (${v.maxCompactionLagMs})`);
  }
}

/**
 * Validated configuration of one log. Every field is assigned in the
 * constructor (one object shape); instances are immutable.
 */
export class LogConfig implements LogConfigValues {
  static readonly DEFAULTS: LogConfigValues = Object.freeze({ ...DEFAULTS });
  static readonly KEYS: readonly LogConfigKey[] = Object.freeze([...KEYS]);

  readonly segmentBytes: number;
  readonly segmentMs: number;
  readonly segmentJitterMs: number;
  readonly indexIntervalBytes: number;
  readonly segmentIndexBytes: number;
  readonly indexWriteBackBytes: number;
  readonly writebackBytes: number;
  readonly maxMessageBytes: number;
  readonly retentionBytes: number;
  readonly retentionMs: number;
  readonly flushIntervalMessages: number;
  readonly flushIntervalMs: number;
  readonly fileDeleteDelayMs: number;
  readonly preallocate: boolean;
  readonly messageTimestampType: MessageTimestampType;
  readonly messageTimestampBeforeMaxMs: number;
  readonly messageTimestampAfterMaxMs: number;
  readonly producerIdExpirationMs: number;
  readonly cleanupPolicy: CleanupPolicy;
  readonly minCleanableDirtyRatio: number;
  readonly minCompactionLagMs: number;
  readonly maxCompactionLagMs: number;
  readonly deleteRetentionMs: number;
  readonly minFreeBytes: number;
  readonly writeMode: WriteMode;

  /** Defaults overridden by `overrides`. Throws SEGLOG_ERR_LOG_INVALID_CONFIG for an unknown key or a bad value. */
  constructor(overrides: Partial<LogConfigValues> = {}) {
    for (const key of Object.keys(overrides)) {
      if (!Object.hasOwn(SPECS, key)) throw invalidConfig(key, (overrides as Record<string, unknown>)[key], 'unknown key');
    }
    const v: LogConfigValues = { ...DEFAULTS, ...stripUndefined(overrides) };
    for (const key of KEYS) checkValue(key, v[key]);
    checkCrossKeys(v);
    this.segmentBytes = v.segmentBytes;
    this.segmentMs = v.segmentMs;
    this.segmentJitterMs = v.segmentJitterMs;
    this.indexIntervalBytes = v.indexIntervalBytes;
    this.segmentIndexBytes = v.segmentIndexBytes;
    this.indexWriteBackBytes = v.indexWriteBackBytes;
    this.writebackBytes = v.writebackBytes;
    this.maxMessageBytes = v.maxMessageBytes;
    this.retentionBytes = v.retentionBytes;
    this.retentionMs = v.retentionMs;
    this.flushIntervalMessages = v.flushIntervalMessages;
    this.flushIntervalMs = v.flushIntervalMs;
    this.fileDeleteDelayMs = v.fileDeleteDelayMs;
    this.preallocate = v.preallocate;
    this.messageTimestampType = v.messageTimestampType;
    this.messageTimestampBeforeMaxMs = v.messageTimestampBeforeMaxMs;
    this.messageTimestampAfterMaxMs = v.messageTimestampAfterMaxMs;
    this.producerIdExpirationMs = v.producerIdExpirationMs;
    this.cleanupPolicy = v.cleanupPolicy;
    this.minCleanableDirtyRatio = v.minCleanableDirtyRatio;
    this.minCompactionLagMs = v.minCompactionLagMs;
    this.maxCompactionLagMs = v.maxCompactionLagMs;
    this.deleteRetentionMs = v.deleteRetentionMs;
    this.minFreeBytes = v.minFreeBytes;
    this.writeMode = v.writeMode;
    Object.freeze(this);
  }

  /** cleanup.policy includes compact: the cleaner compacts this log and null keys are refused. */
  get compacted(): boolean {
    return this.cleanupPolicy === 'compact' || this.cleanupPolicy === 'compact,delete';
  }

  /** cleanup.policy includes delete: retention by size and time applies. */
  get deletes(): boolean {
    return this.cleanupPolicy === 'delete' || this.cleanupPolicy === 'compact,delete';
  }

  /** A new config with `overrides` applied on top of this one (e.g. topic overrides on broker defaults). */
  with(overrides: Partial<LogConfigValues>): LogConfig {
    return new LogConfig({ ...this.values(), ...stripUndefined(overrides) });
  }

  /** The plain values. */
  values(): LogConfigValues {
    const out: Record<string, unknown> = {};
    for (const key of KEYS) out[key] = this[key];
    return out as unknown as LogConfigValues;
  }

  /**
   * Builds a config from Kafka property strings (`{ 'segment.bytes': '1024' }`),
   * as a broker receives them. Unknown Kafka names are an error, so a typo is
   * not silently ignored; pass only the log-level properties.
   */
  static fromKafkaProperties(properties: Readonly<Record<string, string>>, base: LogConfig = new LogConfig()): LogConfig {
    const overrides: Record<string, unknown> = {};
    for (const [name, text] of Object.entries(properties)) {
      const key = KEY_BY_KAFKA_NAME.get(name);
      if (key === undefined) throw invalidConfig(name, text, 'unknown Kafka log config name');
      overrides[key] = parseKafkaValue(key, text);
    }
    return base.with(overrides as Partial<LogConfigValues>);
  }

  /** Kafka's name for a key, e.g. 'segment.bytes' for segmentBytes. */
  static kafkaName(key: LogConfigKey): string {
    return SPECS[key].kafka;
  }
}

function stripUndefined<T extends object>(input: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, value] of Object.entries(input)) if (value !== undefined) out[k] = value;
  return out as Partial<T>;
}
