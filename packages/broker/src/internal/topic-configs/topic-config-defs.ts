// The topic-level configs the broker accepts, under Kafka's names, with
// Kafka's types, defaults and validators (apache/kafka LogConfig.java,
// commit 1eb7644: segment.bytes INT atLeast(14), retention.ms LONG atLeast(-1),
// min.cleanable.dirty.ratio DOUBLE between(0, 1), cleanup.policy LIST in
// {compact, delete}, ...).
//
// A config is "applied" when LogConfig has a key with its Kafka name
// (LogConfig.kafkaName): its value then reaches every partition's LogConfig
// through LogConfig.fromKafkaProperties. Every config of this table is
// applied today, the compaction settings (cleanup.policy,
// min.cleanable.dirty.ratio, min/max.compaction.lag.ms, delete.retention.ms)
// included: the log cleaner reads them from LogConfig. A Kafka topic config
// not in this table (compression.type, min.insync.replicas, ...) is refused
// with INVALID_CONFIG, as is an unknown name: a setting accepted and then
// ignored would be worse than a refusal.
//
// Values are Kafka's strings; Long.MAX_VALUE ("never") is written as Kafka
// writes it. Validation errors are ApiError INVALID_CONFIG (Kafka's
// ConfigException → INVALID_CONFIG in ConfigurationControlManager).

import { LogConfig } from '@seglog/log';
import type { LogConfigKey } from '@seglog/log';
import { ApiError } from './api-error.js';

export type ConfigType = 'BOOLEAN' | 'STRING' | 'INT' | 'LONG' | 'DOUBLE' | 'LIST';

/** Kafka's DescribeConfigsResponse ConfigType ids. */
export const CONFIG_TYPE_IDS: { readonly [T in ConfigType]: number } = { BOOLEAN: 1, STRING: 2, INT: 3, LONG: 5, DOUBLE: 6, LIST: 7 };

export interface TopicConfigDef {
  readonly name: string;
  readonly type: ConfigType;
  /** Kafka's default, as Kafka prints it. */
  readonly defaultValue: string;
  /** Inclusive bounds for numbers; allowed values for STRING and (each item of) LIST. */
  readonly min?: number;
  readonly max?: number;
  readonly values?: readonly string[];
  readonly doc: string;
}

const LONG_MAX = '9223372036854775807';
const INT32_MAX = 2147483647;
const DAY_MS = 86_400_000;

export const TOPIC_CONFIG_DEFS: readonly TopicConfigDef[] = [
  { name: 'cleanup.policy', type: 'LIST', defaultValue: 'delete', values: ['compact', 'delete'], doc: 'delete and/or compact old segments' },
  { name: 'delete.retention.ms', type: 'LONG', defaultValue: String(DAY_MS), min: 0, doc: 'how long delete tombstones are kept (compacted topics)' },
  { name: 'file.delete.delay.ms', type: 'LONG', defaultValue: '60000', min: 0, doc: 'delay before a deleted segment file is removed' },
  { name: 'flush.messages', type: 'LONG', defaultValue: LONG_MAX, min: 1, doc: 'fsync after this many messages' },
  { name: 'flush.ms', type: 'LONG', defaultValue: LONG_MAX, min: 0, doc: 'fsync after this many milliseconds' },
  { name: 'index.interval.bytes', type: 'INT', defaultValue: '4096', min: 0, doc: 'bytes between offset-index entries' },
  { name: 'max.compaction.lag.ms', type: 'LONG', defaultValue: LONG_MAX, min: 1, doc: 'longest time a record stays uncompacted' },
  { name: 'max.message.bytes', type: 'INT', defaultValue: '1048588', min: 0, doc: 'largest record batch accepted' },
  { name: 'message.timestamp.after.max.ms', type: 'LONG', defaultValue: LONG_MAX, min: 0, doc: 'largest allowed timestamp - now (CreateTime)' },
  { name: 'message.timestamp.before.max.ms', type: 'LONG', defaultValue: LONG_MAX, min: 0, doc: 'largest allowed now - timestamp (CreateTime)' },
  { name: 'message.timestamp.type', type: 'STRING', defaultValue: 'CreateTime', values: ['CreateTime', 'LogAppendTime'], doc: 'CreateTime or LogAppendTime' },
  { name: 'min.cleanable.dirty.ratio', type: 'DOUBLE', defaultValue: '0.5', min: 0, max: 1, doc: 'dirty share of the log before it is compacted' },
  { name: 'min.compaction.lag.ms', type: 'LONG', defaultValue: '0', min: 0, doc: 'shortest time a record stays uncompacted' },
  { name: 'preallocate', type: 'BOOLEAN', defaultValue: 'false', doc: 'preallocate segment files' },
  { name: 'retention.bytes', type: 'LONG', defaultValue: '-1', doc: 'size retention per partition; negative = unlimited' },
  { name: 'retention.ms', type: 'LONG', defaultValue: String(7 * DAY_MS), min: -1, doc: 'time retention; -1 = unlimited' },
  { name: 'segment.bytes', type: 'INT', defaultValue: String(1024 * 1024 * 1024), min: 14, doc: 'segment file size' },
  { name: 'segment.index.bytes', type: 'INT', defaultValue: String(10 * 1024 * 1024), min: 4, doc: 'largest offset/time index size' },
  { name: 'segment.jitter.ms', type: 'LONG', defaultValue: '0', min: 0, doc: 'random jitter subtracted from segment.ms' },
  { name: 'segment.ms', type: 'LONG', defaultValue: String(7 * DAY_MS), min: 1, doc: 'time after which a segment is rolled' },
];

const DEFS_BY_NAME: ReadonlyMap<string, TopicConfigDef> = new Map(TOPIC_CONFIG_DEFS.map((def) => [def.name, def]));

/** LogConfig keys by Kafka name: the configs that reach a partition's LogConfig. */
const LOG_KEY_BY_NAME: ReadonlyMap<string, LogConfigKey> = new Map(LogConfig.KEYS.map((key) => [LogConfig.kafkaName(key), key]));

export function topicConfigDef(name: string): TopicConfigDef | undefined {
  return DEFS_BY_NAME.get(name);
}

/** Whether LogConfig has this Kafka name (the value is applied to the partitions). */
export function isAppliedConfig(name: string): boolean {
  return LOG_KEY_BY_NAME.has(name);
}

export function logConfigKeyOf(name: string): LogConfigKey | undefined {
  return LOG_KEY_BY_NAME.get(name);
}

function invalid(name: string, value: string, reason: string): ApiError {
  return new ApiError('INVALID_CONFIG', `Invalid value ${value} for configuration ${name}: ${reason}`);
}

/** Splits a LIST value as Kafka's ConfigDef does (comma separated, trimmed; "" is the empty list). */
export function listItems(value: string): string[] {
  const trimmed = value.trim();
  return trimmed === '' ? [] : trimmed.split(/\s*,\s*/);
}

/** Throws ApiError INVALID_CONFIG unless `value` is a valid value of `def` (Kafka's ConfigDef.parseType and validator). */
function checkValue(def: TopicConfigDef, value: string): void {
  const text = value.trim();
  switch (def.type) {
    case 'BOOLEAN':
      if (!/^(true|false)$/i.test(text)) throw invalid(def.name, value, 'Expected value to be either true or false');
      return;
    case 'STRING':
      if (def.values !== undefined && !def.values.includes(text)) throw invalid(def.name, value, `String must be one of: ${def.values.join(', ')}`);
      return;
    case 'LIST':
      for (const item of listItems(text)) {
        if (def.values !== undefined && !def.values.includes(item)) throw invalid(def.name, value, `[${item}] is not in the valid list [${def.values.join(', ')}]`);
      }
      return;
    case 'INT':
    case 'LONG': {
      if (!/^[+-]?\d+$/.test(text)) throw invalid(def.name, value, `Not a number of type ${def.type}`);
      const big = BigInt(text);
      const [lo, hi] = def.type === 'INT' ? [-2147483648n, BigInt(INT32_MAX)] : [-9223372036854775808n, 9223372036854775807n];
      if (big < lo || big > hi) throw invalid(def.name, value, `Not a number of type ${def.type}`);
      if (def.min !== undefined && big < BigInt(def.min)) throw invalid(def.name, value, `Value must be at least ${def.min}`);
      if (def.max !== undefined && big > BigInt(def.max)) throw invalid(def.name, value, `Value must be no more than ${def.max}`);
      return;
    }
    case 'DOUBLE': {
      const number = Number(text);
      if (text === '' || !Number.isFinite(number)) throw invalid(def.name, value, 'Not a number of type DOUBLE');
      if (def.min !== undefined && number < def.min) throw invalid(def.name, value, `Value must be at least ${def.min}`);
      if (def.max !== undefined && number > def.max) throw invalid(def.name, value, `Value must be no more than ${def.max}`);
      return;
    }
  }
}

/**
 * Validates a topic's complete set of overrides (name → Kafka string) and
 * returns the partitions' LogConfig: `base` (the broker's) with the applied
 * overrides. Throws ApiError INVALID_CONFIG for an unknown name, a bad value,
 * min.compaction.lag.ms above max.compaction.lag.ms (Kafka's
 * validateValues), or a value LogConfig itself refuses.
 */
export function validateTopicConfigs(overrides: Readonly<Record<string, string>>, base: LogConfig): LogConfig {
  const applied: Record<string, string> = {};
  for (const [name, value] of Object.entries(overrides)) {
    const def = DEFS_BY_NAME.get(name);
    if (def === undefined) throw new ApiError('INVALID_CONFIG', `Unknown topic config name: ${name}`);
    checkValue(def, value);
    if (LOG_KEY_BY_NAME.has(name)) applied[name] = value.trim();
  }
  const minLag = BigInt((overrides['min.compaction.lag.ms'] ?? '0').trim());
  const maxLag = BigInt((overrides['max.compaction.lag.ms'] ?? LONG_MAX).trim());
  if (minLag > maxLag) {
    throw new ApiError('INVALID_CONFIG', `conflict topic config setting min.compaction.lag.ms (${minLag}) > max.compaction.lag.ms (${maxLag})`);
  }
  try {
    return LogConfig.fromKafkaProperties(applied, base);
  } catch (error) {
    throw new ApiError('INVALID_CONFIG', error instanceof Error ? error.message : String(error));
  }
}

/** A LogConfig value in Kafka's string form (MAX_SAFE_INTEGER, seglog's "never", is Long.MAX_VALUE). */
export function kafkaString(value: number | boolean | string): string {
  if (typeof value === 'number' && value === Number.MAX_SAFE_INTEGER) return LONG_MAX;
  return String(value);
}
