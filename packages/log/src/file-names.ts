// Names of the files and directories of a Kafka log, byte for byte as Kafka
// writes them (reference/kafka-storage.md §1).
//
// Format and invariants:
// - A segment file is `<prefix><suffix>[<transient suffix>]`, the prefix being
//   the segment's base offset (for `.snapshot`: the producer-state map end
//   offset) in decimal, left-padded with zeros to 20 digits, no sign, no
//   grouping. Suffixes: .log .index .timeindex .txnindex .snapshot; transient
//   suffixes appended after them: .deleted .cleaned .swap.
// - Parsing takes the text before the first '.' as an int64 (Kafka accepts any
//   number of digits; so do we). We accept only digits, and only values that
//   are safe JS integers (2^53 − 1); anything else is a typed error, never a
//   rounded offset.
// - A partition directory is `<topic>-<partition>`; the partition is the text
//   after the LAST '-' (topics may contain '-'). Topics follow Kafka's rules:
//   1..249 characters of [a-zA-Z0-9._-], not '.' or '..' (so no path
//   separator can appear). The partition is a non-negative int32.
// - Directories being deleted / moved / stray are
//   `<topic>-<partition>.<uniqueId>-delete|-future|-stray`, uniqueId being a
//   UUID without dashes; the uniqueId contains no '.', so it is the text after
//   the last '.'. As Kafka (UnifiedLog.logDeleteDirName), the topic in a
//   -delete name is cut so that the name fits in 255 bytes (a 249-character
//   topic would otherwise make the rename fail with ENAMETOOLONG and take the
//   directory offline); a cut topic still parses (≥ 204 legal characters).
// - A data directory entry is a partition directory exactly when it is a
//   directory whose name parses as one (classifyDataDirEntry: the one rule the
//   LogManager's load and the CLI share). No prefix is special: Kafka allows a
//   leading dot, so `.hidden-0` is partition 0 of topic `.hidden`; the data
//   directory's own files (`.lock`, `.kafka_cleanshutdown`, checkpoints and
//   their `.tmp` twins) are regular files and never taken for partitions.

import { assert, SeglogError } from '@seglog/common';

/** Kinds of per-segment files and their suffixes. */
export const SegmentFileSuffix = {
  log: '.log',
  index: '.index',
  timeindex: '.timeindex',
  txnindex: '.txnindex',
  snapshot: '.snapshot',
} as const;
export type SegmentFileKind = keyof typeof SegmentFileSuffix;

/** Suffixes appended after a segment file's normal suffix while an operation is in flight. */
export const TransientSuffix = {
  /** Marked for deletion; removed after file.delete.delay.ms. */
  deleted: '.deleted',
  /** Cleaner or split output still in progress. */
  cleaned: '.cleaned',
  /** Cleaned segment ready to replace the originals. */
  swap: '.swap',
} as const;
export type TransientKind = keyof typeof TransientSuffix;

/** Partition directory states encoded in the directory name suffix. */
export type PartitionDirState = 'live' | 'delete' | 'future' | 'stray';

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

export interface ParsedSegmentFileName {
  /** Base offset (or map end offset for a snapshot). */
  readonly offset: number;
  readonly kind: SegmentFileKind;
  /** The transient suffix, or null for a file in its normal state. */
  readonly transient: TransientKind | null;
}

export interface ParsedPartitionDirName extends TopicPartition {
  readonly state: PartitionDirState;
  /** The unique id of a -delete / -future / -stray directory; null for a live one. */
  readonly uniqueId: string | null;
}

/** Kafka's limit on topic name length (Topic.MAX_NAME_LENGTH). */
export const TOPIC_NAME_MAX_LENGTH = 249;
const OFFSET_PREFIX_DIGITS = 20;
const INT32_MAX = 0x7fffffff;
const LEGAL_TOPIC = /^[a-zA-Z0-9._-]+$/;
const DIGITS = /^[0-9]+$/;
const UNIQUE_ID = /^[0-9a-fA-F]+$/;

/** Names of the files a data directory and a partition directory hold besides segments. */
const fixedNames = {
  leaderEpochCheckpoint: 'leader-epoch-checkpoint',
  recoveryPointCheckpoint: 'recovery-point-offset-checkpoint',
  logStartOffsetCheckpoint: 'log-start-offset-checkpoint',
  replicationOffsetCheckpoint: 'replication-offset-checkpoint',
  /** The log cleaner's first dirty offsets (cleaner/log-cleaner.ts). */
  cleanerOffsetCheckpoint: 'cleaner-offset-checkpoint',
  /** The log cleaner's figures across restarts (checkpoint/cleaner-stats-checkpoint.ts). */
  cleanerStats: 'cleaner-stats',
  cleanShutdown: '.kafka_cleanshutdown',
  /** What a clean close knew of every sealed segment (log-dir/sealed-sizes.ts). */
  sealedSizes: '.seglog_sealed_sizes',
  lock: '.lock',
  partitionMetadata: 'partition.metadata',
} as const;

/** The 20-digit zero-padded decimal prefix of a segment file name. */
function offsetPrefix(offset: number): string {
  assert(Number.isSafeInteger(offset), 'offsetPrefix: offset must be a safe integer');
  assert(offset >= 0, 'offsetPrefix: offset must be non-negative');
  return String(offset).padStart(OFFSET_PREFIX_DIGITS, '0');
}

/** `<20-digit offset><suffix>[<transient suffix>]`, e.g. `00000000000000001234.index`. */
function segmentFileName(offset: number, kind: SegmentFileKind, transient: TransientKind | null = null): string {
  const name = offsetPrefix(offset) + SegmentFileSuffix[kind];
  return transient === null ? name : name + TransientSuffix[transient];
}

function invalidFileName(name: string, reason: string): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_INVALID_FILE_NAME', `invalid segment file name ${JSON.stringify(name)}: ${reason}`, {
    context: { name, reason },
  });
}

/**
 * Parses a decimal offset (digits only) into a safe integer.
 * Returns a reason string instead when it is not one.
 */
function parseOffsetDigits(text: string): number | string {
  if (!DIGITS.test(text)) return 'offset is not a decimal number';
  const significant = text.replace(/^0+(?=.)/, '');
  // 2^53 − 1 has 16 digits; anything longer is not safe (and need not be parsed).
  if (significant.length > 16) return 'offset exceeds 2^53 - 1';
  const value = Number(significant);
  if (!Number.isSafeInteger(value)) return 'offset exceeds 2^53 - 1';
  return value;
}

/**
 * Kafka's `offsetFromFileName`: the text before the first '.' as an offset.
 * Throws SEGLOG_ERR_LOG_INVALID_FILE_NAME if it is not a safe non-negative integer.
 */
function offsetFromFileName(name: string): number {
  const dot = name.indexOf('.');
  const prefix = dot === -1 ? name : name.slice(0, dot);
  const parsed = parseOffsetDigits(prefix);
  if (typeof parsed === 'string') throw invalidFileName(name, parsed);
  return parsed;
}

const KINDS = Object.keys(SegmentFileSuffix) as SegmentFileKind[];
const TRANSIENTS = Object.keys(TransientSuffix) as TransientKind[];

/**
 * Classifies a name found in a partition directory. Returns null when the name
 * does not end in a segment suffix (optionally followed by a transient one),
 * e.g. `leader-epoch-checkpoint`. Throws SEGLOG_ERR_LOG_INVALID_FILE_NAME when
 * the suffix is a segment suffix but the prefix is not a valid offset (Kafka
 * fails the load on such a file too).
 */
function parseSegmentFileName(name: string): ParsedSegmentFileName | null {
  let rest = name;
  let transient: TransientKind | null = null;
  for (const t of TRANSIENTS) {
    if (rest.endsWith(TransientSuffix[t])) {
      transient = t;
      rest = rest.slice(0, rest.length - TransientSuffix[t].length);
      break;
    }
  }
  for (const kind of KINDS) {
    const suffix = SegmentFileSuffix[kind];
    if (!rest.endsWith(suffix)) continue;
    const prefix = rest.slice(0, rest.length - suffix.length);
    const parsed = parseOffsetDigits(prefix);
    if (typeof parsed === 'string') throw invalidFileName(name, parsed);
    return { offset: parsed, kind, transient };
  }
  return null;
}

function invalidTopic(topic: string, reason: string): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_INVALID_TOPIC', `invalid topic ${JSON.stringify(topic)}: ${reason}`, {
    kafka: 'INVALID_TOPIC_EXCEPTION',
    context: { topic, reason },
  });
}

/** Kafka's Topic.validate. Throws SEGLOG_ERR_LOG_INVALID_TOPIC (kafka INVALID_TOPIC_EXCEPTION). */
function validateTopic(topic: string): void {
  if (topic.length === 0) throw invalidTopic(topic, 'topic name is empty');
  if (topic === '.' || topic === '..') throw invalidTopic(topic, "topic name cannot be '.' or '..'");
  if (topic.length > TOPIC_NAME_MAX_LENGTH) {
    throw invalidTopic(topic, `topic name is longer than ${TOPIC_NAME_MAX_LENGTH} characters`);
  }
  if (!LEGAL_TOPIC.test(topic)) throw invalidTopic(topic, 'topic name contains a character outside [a-zA-Z0-9._-]');
}

function invalidPartition(partition: unknown, reason: string): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_INVALID_PARTITION', `invalid partition ${String(partition)}: ${reason}`, {
    kafka: 'UNKNOWN_TOPIC_OR_PARTITION',
    context: { partition: String(partition), reason },
  });
}

/** A partition number must be a non-negative int32. Throws SEGLOG_ERR_LOG_INVALID_PARTITION. */
function validatePartition(partition: number): void {
  if (!Number.isInteger(partition) || partition < 0 || partition > INT32_MAX) {
    throw invalidPartition(partition, 'partition must be an integer in [0, 2^31 - 1]');
  }
}

/** `<topic>-<partition>`, validating both. */
function partitionDirName(topic: string, partition: number): string {
  validateTopic(topic);
  validatePartition(partition);
  return `${topic}-${partition}`;
}

/** Longest file name on the filesystems Kafka supports (NAME_MAX). */
const FILE_NAME_MAX_BYTES = 255;

/**
 * Kafka's logDeleteDirName: `<topic>-<partition>.<uniqueId>-delete`, the topic
 * cut to fit 255 bytes. Topic names are ASCII, so characters are bytes.
 */
function deleteDirName(topic: string, partition: number, uniqueId: string): string {
  validateTopic(topic);
  validatePartition(partition);
  assert(UNIQUE_ID.test(uniqueId), 'deleteDirName: uniqueId must be hexadecimal');
  const suffix = `-${partition}.${uniqueId}-delete`;
  const name = topic.slice(0, Math.min(topic.length, FILE_NAME_MAX_BYTES - suffix.length)) + suffix;
  assert(name.length <= FILE_NAME_MAX_BYTES, 'deleteDirName: name longer than 255 bytes');
  return name;
}

function invalidDirName(name: string, reason: string): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_INVALID_DIR_NAME', `invalid partition directory name ${JSON.stringify(name)}: ${reason}`, {
    context: { name, reason },
  });
}

function parseLiveDirName(whole: string, name: string): TopicPartition {
  const dash = name.lastIndexOf('-');
  if (dash <= 0 || dash === name.length - 1) throw invalidDirName(whole, 'expected <topic>-<partition>');
  const topic = name.slice(0, dash);
  const digits = name.slice(dash + 1);
  if (!DIGITS.test(digits) || digits.length > 10) throw invalidDirName(whole, 'partition is not a decimal int32');
  const partition = Number(digits);
  validateTopic(topic);
  validatePartition(partition);
  return { topic, partition };
}

const STATE_SUFFIXES = [
  ['delete', '-delete'],
  ['future', '-future'],
  ['stray', '-stray'],
] as const;

/**
 * Parses `<topic>-<partition>` or `<topic>-<partition>.<uniqueId>-delete|-future|-stray`.
 * Throws SEGLOG_ERR_LOG_INVALID_DIR_NAME for a malformed name, and
 * SEGLOG_ERR_LOG_INVALID_TOPIC / SEGLOG_ERR_LOG_INVALID_PARTITION for a
 * well-formed name whose topic or partition is illegal.
 */
function parsePartitionDirName(name: string): ParsedPartitionDirName {
  for (const [state, suffix] of STATE_SUFFIXES) {
    if (!name.endsWith(suffix)) continue;
    const body = name.slice(0, name.length - suffix.length);
    const dot = body.lastIndexOf('.');
    if (dot === -1) throw invalidDirName(name, `expected <topic>-<partition>.<uniqueId>${suffix}`);
    const uniqueId = body.slice(dot + 1);
    if (!UNIQUE_ID.test(uniqueId)) throw invalidDirName(name, 'unique id is not hexadecimal');
    return { ...parseLiveDirName(name, body.slice(0, dot)), state, uniqueId };
  }
  return { ...parseLiveDirName(name, name), state: 'live', uniqueId: null };
}

/** What one entry of a data directory is; see classifyDataDirEntry. */
export type DataDirEntry =
  | { readonly kind: 'partition'; readonly partition: ParsedPartitionDirName }
  /** One of the data directory's own files (lock, marker, checkpoints, their .tmp). */
  | { readonly kind: 'own' }
  /** Anything else, with the reason it is not a partition directory. */
  | { readonly kind: 'other'; readonly reason: string };

const DATA_DIR_OWN_FILES: ReadonlySet<string> = new Set([
  fixedNames.lock, fixedNames.cleanShutdown, fixedNames.recoveryPointCheckpoint,
  fixedNames.logStartOffsetCheckpoint, fixedNames.replicationOffsetCheckpoint,
  fixedNames.cleanerOffsetCheckpoint, fixedNames.cleanerStats, fixedNames.sealedSizes,
]);

/**
 * Classifies a data directory entry by its name and whether it is a directory.
 * Only directories can be partitions, and every directory whose name parses
 * is one, whatever its first character (a topic may start with '.').
 */
function classifyDataDirEntry(name: string, isDirectory: boolean): DataDirEntry {
  if (!isDirectory) {
    if (DATA_DIR_OWN_FILES.has(name) || name.endsWith('.tmp')) return { kind: 'own' };
    return { kind: 'other', reason: 'not a directory' };
  }
  try {
    return { kind: 'partition', partition: parsePartitionDirName(name) };
  } catch (error) {
    return { kind: 'other', reason: (error as Error).message };
  }
}

/** Kafka's file and directory names (LogFileUtils, UnifiedLog name helpers, Topic.validate). */
export const FileNames = {
  ...fixedNames,
  offsetPrefix,
  segmentFileName,
  offsetFromFileName,
  parseSegmentFileName,
  validateTopic,
  validatePartition,
  partitionDirName,
  deleteDirName,
  parsePartitionDirName,
  classifyDataDirEntry,
} as const;
