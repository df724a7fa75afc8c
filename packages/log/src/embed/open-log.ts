// openLog: the front door. Opens (creating it if missing) one unreplicated
// log in a data directory and returns an EmbeddedLog (embedded-log.ts, which
// states the directory layout and the defined behaviour).
//
// What it does for the caller that Log.open leaves to it: the directory
// lock, the clean-shutdown marker (read and deleted before loading, so a
// crash while loading counts as unclean), the recovery-point and log-start
// checkpoints, recovery after an unclean stop (all through LogManager), and
// for direct mode the O_DIRECT alignment probe. No timer runs unless asked
// for (checkpointIntervalMs; close() stops it).
//
// Direct mode: with the default NodeIo, the alignment is probed in the
// directory (NodeIo.probeDirectAlignment). When O_DIRECT is refused there,
// `strictDirect: true` rejects with SEGLOG_ERR_LOG_DIRECT_UNAVAILABLE;
// otherwise the log opens buffered, and the fallback is reported through
// onDirectFallback and one log line. Later per-segment fallbacks (no staging
// chunk free, no descriptor) are reported the same way in both settings.

import path from 'node:path';
import { SeglogError } from '@seglog/common';
import { NodeIo } from '@seglog/io';
import type { Io } from '@seglog/io';
import { LogConfig } from '../log-config.js';
import type { LogConfigValues } from '../log-config.js';
import { LogManager } from '../log-manager.js';
import type { CorruptionPolicy } from '../recovery/log-loader.js';
import { EmbeddedLog } from './embedded-log.js';

/** The partition directory of an embedded log: topic `log`, partition 0. */
export const EMBEDDED_TOPIC = 'log';

/** A direct-mode fallback as openLog reports it. */
export interface EmbeddedDirectFallback {
  /** The segment written buffered, or null: the whole log (the probe found O_DIRECT refused at open). */
  readonly segmentBaseOffset: number | null;
  readonly reason: 'unsupported' | 'descriptors' | 'staging';
  readonly cause: unknown;
}

export interface OpenLogOptions {
  /** Log settings (Kafka's topic configs in camelCase, plus writeMode). Default: Kafka's defaults, buffered. */
  readonly config?: LogConfig | Partial<LogConfigValues>;
  /** Direct mode: fail (SEGLOG_ERR_LOG_DIRECT_UNAVAILABLE) instead of opening buffered when O_DIRECT is refused. Default false. */
  readonly strictDirect?: boolean;
  /** Told of each fallback from direct to buffered writes. Default: nothing (the log line is still written). */
  readonly onDirectFallback?: (fallback: EmbeddedDirectFallback) => void;
  /** Where operator lines go (direct fallbacks, the directory going offline). Default: console.warn. */
  readonly logger?: (line: string) => void;
  /** The I/O layer. Default: a NodeIo (in direct mode with the probed alignment). Tests pass a SimIo. */
  readonly io?: Io;
  /** The O_DIRECT probe of the default NodeIo: alignment, or null when refused. Default NodeIo.probeDirectAlignment. */
  readonly probeDirectAlignment?: (dir: string) => Promise<number | null>;
  /** Wall clock in ms (timestamps of records that have none, time-based rolls). Default Date.now. */
  readonly now?: () => number;
  /** Free-space floor: appends are refused (retriable) below it. Default config.minFreeBytes (64 MiB); 0 disables. */
  readonly minFreeBytes?: number;
  /** Write the recovery-point checkpoint every this many ms (fewer segments to scan after a crash). Default 0: only at close. */
  readonly checkpointIntervalMs?: number;
  /** Damage below the recovery point after a crash: 'fail' (default) or 'truncate'. */
  readonly onCorruption?: CorruptionPolicy;
}

function directUnavailable(dir: string, cause: unknown): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_DIRECT_UNAVAILABLE',
    `direct mode with strictDirect: O_DIRECT is not available in ${dir} (the file system refuses it, or the active segment fell back to buffered)`, {
      context: { dir },
      cause,
    });
}

function notEmbedded(dir: string, names: readonly string[]): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_NOT_EMBEDDED',
    `data directory ${dir} holds other logs (${names.join(', ')}): openLog opens a directory with one log, ${EMBEDDED_TOPIC}-0; use LogManager`, {
      context: { dir, logs: names },
    });
}

/** The Io to use and the write mode to open with, after the O_DIRECT probe. */
async function chooseIo(dir: string, config: LogConfig, options: OpenLogOptions, report: (f: EmbeddedDirectFallback) => void): Promise<{ io: Io; config: LogConfig }> {
  if (options.io !== undefined) return { io: options.io, config };
  if (config.writeMode !== 'direct') return { io: new NodeIo(), config };
  // The probe writes a file in the directory: it must exist first.
  const probe = options.probeDirectAlignment ?? ((d: string) => NodeIo.probeDirectAlignment(d));
  const plain = new NodeIo();
  if (!(await plain.exists(dir))) {
    await plain.mkdir(dir, { recursive: true });
    await plain.fsyncDir(path.dirname(path.resolve(dir))); // as LogManager.open does for a directory it creates
  }
  const alignment = await probe(dir);
  if (alignment !== null) return { io: new NodeIo({ directAlignment: Math.max(alignment, 512) }), config };
  if (options.strictDirect === true) throw directUnavailable(dir, null);
  report({ segmentBaseOffset: null, reason: 'unsupported', cause: null });
  return { io: new NodeIo(), config: config.with({ writeMode: 'buffered' }) };
}

/**
 * Opens the log in `dir` (created if missing): locked, recovered after an
 * unclean stop, ready to append. Close it with close().
 */
export async function openLog(dir: string, options: OpenLogOptions = {}): Promise<EmbeddedLog> {
  const base = options.config instanceof LogConfig ? options.config : new LogConfig(options.config ?? {});
  const logger = options.logger ?? ((line: string) => console.warn(line));
  const report = (fallback: EmbeddedDirectFallback): void => {
    const where = fallback.segmentBaseOffset === null ? 'the log' : `segment ${fallback.segmentBaseOffset}`;
    logger(`seglog: ${dir}: direct mode fell back to buffered writes for ${where} (${fallback.reason})`);
    try {
      options.onDirectFallback?.(fallback);
    } catch {
      // A reporting hook never changes what the log does.
    }
  };
  const { io, config } = await chooseIo(dir, base, options, report);
  const now = options.now ?? Date.now;
  const manager = await LogManager.open(io, dir, {
    defaultConfig: config,
    now,
    checkpointIntervalMs: options.checkpointIntervalMs ?? 0,
    ...(options.minFreeBytes === undefined ? {} : { minFreeBytes: options.minFreeBytes }),
    ...(options.onCorruption === undefined ? {} : { onCorruption: options.onCorruption }),
    onOffline: (notice) => logger(notice.message),
    onDirectFallback: (_partition, fallback) => report(fallback),
  });
  try {
    const others = manager.logs().map((l) => `${l.topic}-${l.partition}`).filter((name) => name !== `${EMBEDDED_TOPIC}-0`);
    if (others.length > 0) throw notEmbedded(dir, others);
    const log = await manager.getOrCreateLog(EMBEDDED_TOPIC, 0, config);
    if (options.strictDirect === true && config.writeMode === 'direct' && log.writeMode !== 'direct') throw directUnavailable(dir, null);
    log.updateHighWatermark(log.logEndOffset);
    return new EmbeddedLog(manager, log, now);
  } catch (error) {
    await manager.close().catch(() => undefined);
    throw error;
  }
}
