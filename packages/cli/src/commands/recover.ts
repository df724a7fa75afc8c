// `seglog recover <dir> [--dry-run]`: runs the engine's own recovery and
// reports what it changed. A data directory is opened with LogManager after
// removing its clean-shutdown marker (so every partition recovers from its
// checkpointed recovery point, §21) and closed again (checkpoints and the
// marker are rewritten). A partition directory is opened with Log.open
// (hadCleanShutdown false; recovery point and log start from the parent's
// checkpoints when it has them, else 0; an unreadable recovery-point
// checkpoint means "unknown", as in LogManager) and closed. Damage below the
// recovery point makes the engine refuse (SEGLOG_ERR_LOG_CORRUPTION) unless
// --truncate-corrupt. --dry-run copies the directories to a temporary
// directory, recovers the copy, reports what WOULD change and deletes the
// copy: the original is never opened for writing.
//
// After the engine's recovery, a data directory's `broker-producer-id` that
// verify finds damaged (or not above the logs' producer ids) is rewritten at
// a safe id (internal/producer-id-repair.ts), or the refusal is explained.

import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Io } from '@seglog/io';
import { PRODUCER_ID_FILE } from '@seglog/broker';
import { FileNames, Log, LogConfig, LogManager } from '@seglog/log';
import type { CorruptionPolicy } from '@seglog/log';
import { COMMON_OPTIONS } from '../command-spec.js';
import type { CommandSpec } from '../command-spec.js';
import type { CliContext } from '../internal/cli-context.js';
import { readOffsetCheckpoint } from '../internal/checkpoints.js';
import { cliError, usageError } from '../internal/cli-error.js';
import { Verifier } from '../internal/verifier.js';
import { repairProducerIdFile } from '../internal/producer-id-repair.js';
import { diffDirState, readDirState, restoreSmallFiles } from '../internal/dir-state.js';
import type { DirState, FileChange } from '../internal/dir-state.js';
import { resolveLogDirs } from '../internal/log-dirs.js';
import type { LogDirs } from '../internal/log-dirs.js';

const DATA_DIR_CHECKPOINTS = [FileNames.recoveryPointCheckpoint, FileNames.logStartOffsetCheckpoint, FileNames.replicationOffsetCheckpoint];

/** Copies what recovery reads into `tmp`; returns the same layout rooted there. */
async function copyForDryRun(io: Io, dirs: LogDirs, tmp: string): Promise<LogDirs> {
  for (const name of DATA_DIR_CHECKPOINTS) {
    const from = path.join(dirs.dataDir, name);
    if (await io.exists(from)) await cp(from, path.join(tmp, name));
  }
  const producerIds = path.join(dirs.dataDir, PRODUCER_ID_FILE);
  if (dirs.kind === 'data' && (await io.exists(producerIds))) await cp(producerIds, path.join(tmp, PRODUCER_ID_FILE));
  const partitions = [];
  for (const partition of dirs.partitions) {
    const dir = path.join(tmp, partition.name);
    await cp(partition.dir, dir, { recursive: true });
    partitions.push({ ...partition, dir });
  }
  return { kind: dirs.kind, dataDir: tmp, partitions };
}

interface RecoveryRun {
  /** Partition name → log end offset after recovery. */
  readonly logEndOffsets: Map<string, number>;
  readonly notes: string[];
}

async function recoverDataDir(io: Io, dirs: LogDirs, onCorruption: CorruptionPolicy, config: LogConfig): Promise<RecoveryRun> {
  const marker = path.join(dirs.dataDir, FileNames.cleanShutdown);
  const markerBytes = (await io.exists(marker)) ? await io.readFile(marker) : null;
  if (markerBytes !== null) {
    await io.unlink(marker);
    await io.fsyncDir(dirs.dataDir);
  }
  let manager: LogManager;
  try {
    manager = await LogManager.open(io, dirs.dataDir, { defaultConfig: config, onCorruption, checkpointIntervalMs: 0, minFreeBytes: 0 });
  } catch (error) {
    // The engine refused (e.g. damage below the recovery point): put back the marker we removed, so the
    // directory is as clean or unclean as before we came.
    if (markerBytes !== null) await restoreFile(io, marker, markerBytes);
    throw error;
  }
  const logEndOffsets = new Map<string, number>();
  for (const log of manager.logs()) logEndOffsets.set(FileNames.partitionDirName(log.topic, log.partition), log.logEndOffset);
  const notes = [...manager.notes, ...manager.skipped.map((s) => `skipped ${s.name}: ${s.reason}`)];
  await manager.close();
  return { logEndOffsets, notes };
}

async function restoreFile(io: Io, file: string, bytes: Buffer): Promise<void> {
  const handle = await io.open(file, { create: true });
  try {
    await handle.pwrite(bytes, 0);
    await handle.fsync();
  } finally {
    await handle.close();
  }
  await io.fsyncDir(path.dirname(file));
}

async function recoverPartitionDir(io: Io, dirs: LogDirs, onCorruption: CorruptionPolicy, config: LogConfig): Promise<RecoveryRun> {
  const partition = dirs.partitions[0];
  if (partition === undefined || partition.topicPartition === null) {
    throw cliError('SEGLOG_ERR_CLI_NOT_A_LOG_DIR', `recover needs a <topic>-<partition> directory name to open the log: ${String(partition?.dir)}`, { path: partition?.dir ?? dirs.dataDir });
  }
  const recoveryPoints = await readOffsetCheckpoint(io, dirs.dataDir, FileNames.recoveryPointCheckpoint);
  const logStarts = await readOffsetCheckpoint(io, dirs.dataDir, FileNames.logStartOffsetCheckpoint);
  const notes: string[] = [];
  // The engine's rule (LogManager): an unreadable checkpoint makes the recovery point unknown, never 0.
  let recoveryPoint: number | null = recoveryPoints.offsets.get(partition.name) ?? 0;
  if (recoveryPoints.error !== null) {
    recoveryPoint = null;
    notes.push(`${recoveryPoints.path} could not be read (${(recoveryPoints.error as Error).message}): the recovery point is unknown, every segment is scanned and nothing but a zero tail may be cut`);
  } else if (!recoveryPoints.offsets.has(partition.name)) {
    notes.push(`no recovery point for ${partition.name} in ${recoveryPoints.path}: every segment is scanned and anything after the first invalid batch is cut`);
  }
  const { topic, partition: number } = partition.topicPartition;
  const log = await Log.open(io, partition.dir, config, {
    topic, partition: number, recoveryPoint, logStartOffset: logStarts.offsets.get(partition.name) ?? 0, hadCleanShutdown: false, onCorruption,
  });
  const logEndOffsets = new Map([[partition.name, log.logEndOffset]]);
  await log.close();
  return { logEndOffsets, notes };
}

function changeText(change: FileChange, dryRun: boolean): string {
  const v = (done: string, would: string): string => (dryRun ? `would ${would}` : done);
  switch (change.kind) {
    case 'log-cut':
      return `${change.name}: ${v('cut', 'cut')} ${change.before - change.after} bytes at position ${change.after} (${change.before} → ${change.after} bytes)`;
    case 'log-deleted':
      return `${change.name}: ${v('deleted segment', 'delete segment')} (${change.before} bytes, after a segment that lost bytes)`;
    case 'log-created':
      return `${change.name}: ${v('created empty segment', 'create an empty segment')}`;
    case 'log-grown':
      return `${change.name}: ${v('grew', 'grow')} from ${change.before} to ${change.after} bytes`;
    case 'rebuilt':
      return `${change.name}: ${v('rebuilt', 'rebuild')} (${change.before} → ${change.after} bytes)`;
    case 'created':
      return `${change.name}: ${v('created', 'create')} (${change.after} bytes)`;
    case 'deleted':
      return `${change.name}: ${v('deleted', 'delete')} (${change.before} bytes)`;
  }
}

async function states(io: Io, dirs: LogDirs): Promise<Map<string, DirState>> {
  const map = new Map<string, DirState>();
  if (dirs.kind === 'data') map.set('.', await readDirState(io, dirs.dataDir));
  for (const p of dirs.partitions) map.set(p.name, await readDirState(io, p.dir));
  return map;
}

async function recoverAndReport(ctx: CliContext, dirs: LogDirs, options: RecoverOptions): Promise<number> {
  const before = await states(ctx.io, dirs);
  let run: RecoveryRun;
  try {
    run = dirs.kind === 'data' ? await recoverDataDir(ctx.io, dirs, options.onCorruption, options.config) : await recoverPartitionDir(ctx.io, dirs, options.onCorruption, options.config);
  } catch (error) {
    // The engine refused (SEGLOG_ERR_LOG_CORRUPTION) after resetting the indexes of the segment it was
    // recovering; put back every index, snapshot and checkpoint so a refusal changes nothing.
    for (const [name, state] of before) {
      const dir = name === '.' ? dirs.dataDir : dirs.partitions.find((p) => p.name === name)?.dir;
      if (dir !== undefined) await restoreSmallFiles(ctx.io, dir, state);
    }
    throw error;
  }
  const after = await states(ctx.io, dirs);
  let cutBytes = 0;
  let cutSegments = 0;
  let deletedSegments = 0;
  let rebuiltIndexes = 0;
  for (const [name, was] of before) {
    const changes = diffDirState(was, after.get(name) ?? new Map());
    for (const c of changes) {
      if (c.kind === 'log-cut') { cutBytes += c.before - c.after; cutSegments++; }
      if (c.kind === 'log-deleted') { deletedSegments++; cutBytes += c.before; }
      if ((c.kind === 'rebuilt' || c.kind === 'created') && /\.(index|timeindex|txnindex)$/.test(c.name)) rebuiltIndexes++;
    }
    const label = name === '.' ? 'data directory' : name;
    const end = run.logEndOffsets.get(name);
    if (options.json) {
      ctx.out(JSON.stringify({ type: name === '.' ? 'data-dir' : 'partition', name: label, logEndOffset: end ?? null, dryRun: options.dryRun, changes }));
      continue;
    }
    const endText = end === undefined ? '' : ` (log end offset ${end})`;
    ctx.out(changes.length === 0 ? `${label}${endText}: nothing to change` : `${label}${endText}:`);
    for (const c of changes) ctx.out(`  ${changeText(c, options.dryRun)}`);
  }
  for (const note of run.notes) ctx.out(options.json ? JSON.stringify({ type: 'note', note }) : `note: ${note}`);
  const summary = { cutBytes, cutSegments, deletedSegments, rebuiltIndexes };
  ctx.out(options.json
    ? JSON.stringify({ type: 'summary', dryRun: options.dryRun, ...summary })
    : `${options.dryRun ? 'would cut' : 'cut'} ${cutBytes} bytes (${cutSegments} segments cut, ${deletedSegments} deleted), ${rebuiltIndexes} index files ${options.dryRun ? 'to rebuild' : 'rebuilt'}`);
  return verifyAfter(ctx, dirs, options);
}

/** Verifies the recovered directories; lists what recovery left broken. Returns the exit code. */
async function verifyAfter(ctx: CliContext, dirs: LogDirs, options: RecoverOptions): Promise<number> {
  const progress = ctx.progress('verify', 0);
  const verifier = new Verifier(ctx.io, { strict: false }, progress);
  try {
    await verifier.verify(dirs);
  } finally {
    progress.done();
  }
  const repair = await repairProducerIdFile(ctx.io, verifier, options.dryRun);
  if (repair !== null) ctx.out(options.json ? JSON.stringify({ type: 'producer-id', file: PRODUCER_ID_FILE, ...repair }) : repair.text);
  const repairedFile = repair?.resolved === true ? verifier.producerIdFile?.file : undefined;
  const remaining = verifier.findings.filter((f) => f.severity === 'problem' && f.file !== repairedFile);
  for (const f of remaining) {
    const file = path.relative(dirs.dataDir, f.file);
    const where = [f.position === undefined ? '' : `position ${f.position}`, f.offset === undefined ? '' : `offset ${f.offset}`].filter((x) => x !== '').join(' ');
    ctx.out(options.json ? JSON.stringify({ type: 'remaining-problem', ...f, file }) : `remaining problem${options.dryRun ? ' (after the recovery)' : ''}: ${file}${where === '' ? '' : ` ${where}`}: ${f.what}`);
  }
  if (remaining.length > 0 && !options.json) ctx.out(`${remaining.length} problems that recovery does not repair (see seglog verify)`);
  return remaining.length === 0 ? 0 : 1;
}

interface RecoverOptions {
  readonly dryRun: boolean;
  readonly onCorruption: CorruptionPolicy;
  readonly json: boolean;
  readonly config: LogConfig;
}

function configFrom(values: readonly string[]): LogConfig {
  const properties: Record<string, string> = {};
  for (const value of values) {
    const eq = value.indexOf('=');
    if (eq <= 0) throw usageError(`--config expects kafka.property=value, not ${JSON.stringify(value)}`, 'recover');
    properties[value.slice(0, eq)] = value.slice(eq + 1);
  }
  return LogConfig.fromKafkaProperties(properties);
}

export const recoverCommand: CommandSpec = {
  name: 'recover',
  summary: 'run the engine\'s crash recovery and report what was cut or rebuilt (--dry-run: on a copy)',
  args: '<data-dir|partition-dir>',
  description: [
    'Opens the directory as after an unclean stop and closes it again, so the engine cuts torn tails, deletes',
    'segments after a damaged one and rebuilds indexes and producer snapshots (reference/kafka-storage.md §21).',
    'A data directory loses its clean-shutdown marker first and is opened with LogManager (recovery points from',
    'its checkpoint); a partition directory is opened with Log.open (recovery point from the parent\'s checkpoint',
    'if there is one, else 0: every segment is scanned). Segments below the recovery point are not rescanned:',
    'run seglog verify to check them. Damage below the recovery point is refused (SEGLOG_ERR_LOG_CORRUPTION)',
    'unless --truncate-corrupt; so is anything but a zero tail when the recovery-point checkpoint cannot be read',
    '(the recovery point is unknown, never 0). The decision is the engine\'s own (recoveryVerdict), the one the',
    'broker takes at start. Reports bytes cut per segment, segments deleted and files rebuilt, then verifies',
    'the result: problems recovery does not repair (e.g. a bad batch in a segment below the recovery point) are',
    'listed and the exit code is 1. Indexes are rebuilt with the default topic config unless --config says otherwise.',
    'A data directory\'s broker-producer-id that is damaged, or not above every producer id in the logs, is rewritten',
    'above the highest producer id in the batches and snapshots, rounded up to a block, plus a margin of 1000000 ids',
    '(producer ids are never reused); with damage left in the logs it is not rewritten and the reason is printed.',
  ],
  options: {
    'dry-run': { type: 'boolean', short: 'n', description: 'recover a copy in a temporary directory and report what would change; the original is untouched' },
    'truncate-corrupt': { type: 'boolean', description: 'cut the log at damage below the recovery point too (Kafka\'s behaviour; loses durable data)' },
    config: { type: 'string', multiple: true, valueName: 'kafka.property=value', description: 'topic config for the recovery, as Kafka properties (e.g. index.interval.bytes=4096); rebuilt indexes use it' },
    json: { type: 'boolean', description: 'print one JSON object per directory, then a summary object' },
    ...COMMON_OPTIONS,
  },
  positionals: 1,
  async run(ctx, positionals, values) {
    const dirs = await resolveLogDirs(ctx.io, positionals[0] as string);
    const dryRun = values['dry-run'] === true;
    const configValues = values['config'];
    const options: RecoverOptions = {
      dryRun, onCorruption: values['truncate-corrupt'] === true ? 'truncate' : 'fail', json: values['json'] === true,
      config: configFrom(Array.isArray(configValues) ? configValues.map(String) : []),
    };
    if (!dryRun) return recoverAndReport(ctx, dirs, options);
    const tmp = await mkdtemp(path.join(os.tmpdir(), 'seglog-recover-'));
    try {
      if (!options.json) ctx.out(`dry run: recovering a copy in ${tmp}; ${dirs.kind === 'data' ? dirs.dataDir : (dirs.partitions[0]?.dir ?? '')} is not modified`);
      return await recoverAndReport(ctx, await copyForDryRun(ctx.io, dirs, tmp), options);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  },
};
