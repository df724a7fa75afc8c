// Verifier: the checks behind `seglog verify`, read only. For a partition:
// every segment is scanned (framing, CRC-32C, offsets increasing within the
// segment and within [base, next segment's base)), each index is checked
// against that scan (offset index: every entry is a batch start whose last
// offset equals the entry's offset, entries increasing; time index:
// monotonic, each entry at most the largest batch max timestamp seen up to
// the batch holding its offset; txn index: sane and inside the segment), the
// leader-epoch checkpoint parses with increasing epochs and start offsets,
// and every producer snapshot parses with a valid CRC. For a data
// directory, also the recovery-point and log-start checkpoints: they parse
// and are at most the log end offset of their partition.
//
// Findings are 'problem' (damage or an inconsistency; verify exits 1),
// 'recovery' (expected after an unclean stop and repaired by the recovery
// that the next open, or `seglog recover`, runs; verify exits 0) or 'note'
// (worth knowing, not damage: offset gaps as compaction leaves them, a stale
// snapshot the next open deletes).
//
// Unclean stop: the directory's clean-shutdown marker is absent (a crash,
// kill -9, or a broker still running: LogManager consumes the marker when it
// opens). Recovery then rescans every segment from the one holding the
// partition's recovery point (0 when the checkpoint has none). In those
// segments, and only there, these are expected and not damage:
// - the zero-filled preallocated tail after the last whole batch (recovery
//   cuts it; in a sealed segment only when the next segment starts at the
//   offset where the data ends, so nothing is lost);
// - a partial batch at the very end of the active segment, at or above the
//   recovery point (a write in progress; recovery cuts it);
// - index entries past the valid data: a preallocated index's zero-filled
//   slots and entries pointing beyond the last whole batch (recovery
//   rebuilds the index from the .log).
// Anything else, and all of these after a clean stop or below the recovery
// point, stays a problem. Index findings are one line per file.
//
// The broker's file in a data directory, `broker-producer-id`, is checked
// too (parseProducerIdFile: format and CRC-32C), and its next id must be
// above every producer id the scan saw in a batch header or a producer
// snapshot: otherwise a broker refuses to start, or would hand out an id
// already used. `seglog recover` rewrites it (producer-id-repair.ts).

import path from 'node:path';
import { PRODUCER_ID_FILE, parseProducerIdFile } from '@seglog/broker';
import type { ProducerIdFileContent } from '@seglog/broker';
import type { Io } from '@seglog/io';
import {
  FileNames, LeaderEpochCheckpoint, OffsetIndex, TimeIndex, TxnIndex, decodeSnapshot, snapshotOffsets,
} from '@seglog/log';
import { cleanerStateOf, cleanerText, readCleanerCheckpoint } from './cleaner-state.js';
import { readOffsetCheckpoint } from './checkpoints.js';
import { resumeAfterDamage } from './damage-resume.js';
import { describeEnd, errorText, hex32 } from './dump-log.js';
import { listSegments, segmentPath } from './log-dirs.js';
import type { LogDirs, PartitionDir, SegmentFiles } from './log-dirs.js';
import type { Progress } from './progress.js';
import { SegmentScanner } from './segment-scanner.js';
import type { ScanEnd } from './segment-scanner.js';

export type Severity = 'problem' | 'recovery' | 'note';

export interface Finding {
  readonly severity: Severity;
  readonly file: string;
  readonly position?: number;
  readonly offset?: number;
  readonly what: string;
}

export interface VerifyOptions {
  /** Offset gaps inside a segment are problems, not notes. */
  readonly strict: boolean;
}

/** The batches of one segment as the scan saw them, for the index checks. */
interface SegmentScan {
  readonly positions: number[];
  readonly baseOffsets: number[];
  readonly lastOffsets: number[];
  /** Largest batch max timestamp up to and including batch i. */
  readonly runningMaxTimestamps: number[];
  /** Offset after the last whole batch (the base offset when none). */
  nextOffset: number;
  /** Position after the last whole batch. */
  validBytes: number;
  /** Recovery rescans this segment at the next open (unclean stop, at or after the recovery point's segment). */
  readonly recovered: boolean;
}

/** What the next open will do with a partition, as verify predicts it. */
interface PartitionRecovery {
  /** No clean-shutdown marker: the next open recovers. */
  readonly unclean: boolean;
  readonly recoveryPoint: number;
}

/** One entry of an index as the checks see it, for grouping. */
interface EntryCheck {
  readonly slot: number;
  readonly position: number;
  readonly offset: number;
  readonly what: string;
  /** The entry names data beyond the last whole batch (an unclean stop leaves such entries). */
  readonly pastData: boolean;
}

const INT32_MAX = 0x7fffffff;
const READ_ONLY_INDEX_BYTES = 10 * 1024 * 1024;

export class Verifier {
  readonly findings: Finding[] = [];
  segments = 0;
  batches = 0;
  /** Whether verify saw an unclean stop (no clean-shutdown marker). */
  uncleanStop = false;
  /** The largest producer id in any batch header or producer snapshot scanned (-1: none). */
  highestProducerId = -1;
  /** The data directory's broker-producer-id as read (null: not a data directory, or no such file). */
  producerIdFile: { readonly file: string; readonly content: ProducerIdFileContent } | null = null;
  private readonly io: Io;
  private readonly options: VerifyOptions;
  private readonly progress: Progress;

  constructor(io: Io, options: VerifyOptions, progress: Progress) {
    this.io = io;
    this.options = options;
    this.progress = progress;
  }

  get problems(): number {
    return this.findings.filter((f) => f.severity === 'problem').length;
  }

  /** Findings that the next recovery repairs by design. */
  get recoveryItems(): number {
    return this.findings.filter((f) => f.severity === 'recovery').length;
  }

  private add(finding: Finding): void {
    this.findings.push(finding);
  }

  /** Verifies every partition of `dirs` and, for a data directory, its checkpoints. */
  async verify(dirs: LogDirs): Promise<void> {
    const marker = path.join(dirs.dataDir, FileNames.cleanShutdown);
    this.uncleanStop = !(await this.io.exists(marker));
    const recoveryPoints = this.uncleanStop ? (await readOffsetCheckpoint(this.io, dirs.dataDir, FileNames.recoveryPointCheckpoint)).offsets : new Map<string, number>();
    if (this.uncleanStop) {
      this.add({
        severity: 'recovery', file: marker,
        what: 'no clean-shutdown marker: the directory was not closed cleanly (a crash or kill -9, or a broker is still running on it); ' +
          'the next open recovers every partition from its recovery point (rescan, cut torn and preallocated tails, rebuild indexes and producer snapshots)',
      });
    }
    const logEndOffsets = new Map<string, number>();
    for (const partition of dirs.partitions) {
      const recovery = { unclean: this.uncleanStop, recoveryPoint: recoveryPoints.get(partition.name) ?? 0 };
      logEndOffsets.set(partition.name, await this.verifyPartition(partition, recovery));
    }
    if (dirs.kind === 'data') {
      await this.verifyOffsetCheckpoint(dirs.dataDir, FileNames.recoveryPointCheckpoint, 'recovery point', logEndOffsets);
      await this.verifyOffsetCheckpoint(dirs.dataDir, FileNames.logStartOffsetCheckpoint, 'log start offset', logEndOffsets);
      await this.verifyCleanerCheckpoint(dirs, logEndOffsets);
      await this.verifyProducerIdFile(dirs.dataDir);
    }
  }

  /** Returns the partition's log end offset as found on disk. */
  async verifyPartition(partition: PartitionDir, recovery: PartitionRecovery = { unclean: false, recoveryPoint: 0 }): Promise<number> {
    const segments = await listSegments(this.io, partition.dir);
    let logEndOffset = segments[0]?.baseOffset ?? 0;
    // The loader's floor: the last segment whose base is at most the recovery point (the first when none is).
    let firstRecovered = 0;
    for (let i = 0; i < segments.length; i++) if ((segments[i] as SegmentFiles).baseOffset <= recovery.recoveryPoint) firstRecovered = i;
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i] as SegmentFiles;
      const nextBase = segments[i + 1]?.baseOffset ?? Number.MAX_SAFE_INTEGER;
      const recovered = recovery.unclean && i >= firstRecovered;
      const scan = await this.scanSegment(segment, { nextBase, isLast: i === segments.length - 1, recovered, recoveryPoint: recovery.recoveryPoint });
      await this.verifyOffsetIndex(partition.dir, segment, scan);
      await this.verifyTimeIndex(partition.dir, segment, scan);
      await this.verifyTxnIndex(partition.dir, segment, scan);
      logEndOffset = Math.max(logEndOffset, scan.nextOffset);
    }
    await this.verifyLeaderEpochs(partition.dir, logEndOffset);
    await this.verifySnapshots(partition.dir, logEndOffset);
    return logEndOffset;
  }

  private async scanSegment(segment: SegmentFiles, where: { nextBase: number; isLast: boolean; recovered: boolean; recoveryPoint: number }): Promise<SegmentScan> {
    this.segments++;
    const { nextBase } = where;
    const file = segment.log;
    const scan: SegmentScan = {
      positions: [], baseOffsets: [], lastOffsets: [], runningMaxTimestamps: [], nextOffset: segment.baseOffset, validBytes: 0, recovered: where.recovered,
    };
    let gaps = 0;
    let runningMax = -1;
    const scanner = await SegmentScanner.open(this.io, file);
    try {
      for (let next = await scanner.next(); next !== null; next = await scanner.next()) {
        const { batch, position } = next;
        this.batches++;
        this.progress.advance(batch.sizeInBytes);
        let baseOffset: number;
        let lastOffset: number;
        let maxTimestamp: number;
        try {
          baseOffset = batch.baseOffset;
          lastOffset = batch.lastOffset;
          maxTimestamp = batch.maxTimestamp;
        } catch (error) {
          this.add({ severity: 'problem', file, position, what: `batch header unreadable: ${errorText(error)}` });
          continue;
        }
        this.seeProducerId(batch);
        const range = `batch ${baseOffset}..${lastOffset}`;
        if (!batch.isValid()) {
          this.add({ severity: 'problem', file, position, offset: baseOffset, what: `CRC mismatch in ${range} (${batch.sizeInBytes} bytes): stored ${hex32(batch.crc)}, computed ${hex32(batch.computeCrc())}` });
        }
        if (lastOffset < baseOffset) this.add({ severity: 'problem', file, position, offset: baseOffset, what: `${range}: negative lastOffsetDelta ${batch.lastOffsetDelta}` });
        if (baseOffset < scan.nextOffset) {
          const expected = scan.positions.length === 0 ? `the segment base offset ${segment.baseOffset}` : `the previous batch's next offset ${scan.nextOffset}`;
          this.add({ severity: 'problem', file, position, offset: baseOffset, what: `${range} starts below ${expected} (offsets must increase)` });
        } else if (baseOffset > scan.nextOffset) {
          gaps++;
          if (this.options.strict) this.add({ severity: 'problem', file, position, offset: baseOffset, what: `${range}: offsets ${scan.nextOffset}..${baseOffset - 1} missing (gap)` });
        }
        if (lastOffset >= nextBase) this.add({ severity: 'problem', file, position, offset: lastOffset, what: `${range} reaches the next segment's base offset ${nextBase}` });
        if (lastOffset - segment.baseOffset > INT32_MAX) this.add({ severity: 'problem', file, position, offset: lastOffset, what: `${range} does not fit a 32-bit relative offset from base ${segment.baseOffset}` });
        runningMax = Math.max(runningMax, maxTimestamp);
        scan.positions.push(position);
        scan.baseOffsets.push(baseOffset);
        scan.lastOffsets.push(lastOffset);
        scan.runningMaxTimestamps.push(runningMax);
        scan.nextOffset = Math.max(scan.nextOffset, lastOffset + 1);
      }
      const end = scanner.end;
      if (end !== null) {
        scan.validBytes = end.position;
        this.progress.advance(end.trailingBytes);
        this.addEnd(file, end, scan, where);
        if ((end.stop === 'partial' || end.stop === 'corrupt') && !where.isLast) await this.noteResume(file, segment.baseOffset, where.nextBase, end.position);
      }
      if (gaps > 0 && !this.options.strict) this.add({ severity: 'note', file, what: `${gaps} offset gap(s) between batches (compaction or follower appends leave them; --strict makes them problems)` });
    } finally {
      await scanner.close();
    }
    return scan;
  }

  /** How the segment ends: a torn, corrupt or zero-filled tail, told apart by whether recovery cuts it by design. */
  private addEnd(file: string, end: ScanEnd, scan: SegmentScan, where: { nextBase: number; isLast: boolean; recovered: boolean; recoveryPoint: number }): void {
    const cut = `expected after an unclean stop: recovery will cut ${end.trailingBytes} bytes at position ${end.position} (${end.position + end.trailingBytes} → ${end.position} bytes)`;
    if (end.stop === 'corrupt') {
      this.add({ severity: 'problem', file, position: end.position, offset: scan.nextOffset, what: describeEnd(end) });
    } else if (end.stop === 'partial') {
      // A write in progress when the process died; recovery cuts it unless it lies below the recovery point (then it refuses).
      const expected = where.recovered && where.isLast && scan.nextOffset >= where.recoveryPoint;
      this.add({ severity: expected ? 'recovery' : 'problem', file, position: end.position, offset: scan.nextOffset, what: expected ? `${describeEnd(end)}: ${cut}` : describeEnd(end) });
    } else if (end.stop === 'zero') {
      if (where.recovered && (where.isLast || where.nextBase === scan.nextOffset)) {
        this.add({ severity: 'recovery', file, position: end.position, what: `${describeEnd(end)}: ${cut}${where.isLast ? '' : ` (the next segment starts at offset ${where.nextBase}, nothing is lost)`}` });
      } else {
        this.add({ severity: where.isLast ? 'note' : 'problem', file, position: end.position, what: `${describeEnd(end)}${where.isLast ? '' : ' in a sealed segment (it should have been trimmed on roll)'}` });
      }
    }
  }

  /** Where the engine's reads resume after the damage (its own survey), so verify and a fetch agree. */
  private async noteResume(file: string, baseOffset: number, nextBase: number, position: number): Promise<void> {
    const found = await resumeAfterDamage(this.io, file, { baseOffset, nextBase, position });
    if (found === null) return;
    const lost = found.firstOffset === found.nextOffset - 1 ? `offset ${found.firstOffset}` : `offsets ${found.firstOffset}..${found.nextOffset - 1}`;
    this.add({
      severity: 'note', file, position: found.position, offset: found.nextOffset,
      what: found.atEnd ? `no batch after the damage is readable (${lost} from position ${found.position})`
        : `reads resume at position ${found.resumePosition}, offset ${found.nextOffset}: ${lost} cannot be read (damaged bytes ${found.position}..${found.resumePosition - 1})`,
    });
  }

  private async verifyOffsetIndex(dir: string, segment: SegmentFiles, scan: SegmentScan): Promise<void> {
    const file = segmentPath(dir, segment.baseOffset, 'index');
    if (!(await this.io.exists(file))) {
      const severity = scan.positions.length === 0 ? 'note' : 'problem';
      this.add({ severity, file, what: 'offset index missing (the next open rebuilds it from the .log)' });
      return;
    }
    const batchAt = new Map<number, number>();
    for (let i = 0; i < scan.positions.length; i++) batchAt.set(scan.positions[i] as number, i);
    const index = await OffsetIndex.open(this.io, file, { baseOffset: segment.baseOffset, maxIndexBytes: READ_ONLY_INDEX_BYTES, readOnly: true });
    try {
      if (index.fileBytes % 8 !== 0) this.add({ severity: 'problem', file, what: `file length ${index.fileBytes} is not a multiple of 8` });
      const entries = index.entries;
      // After an unclean stop, trailing all-zero slots are the preallocated, never written part of the file.
      let checked = entries;
      if (scan.recovered) while (checked > 0 && isZeroOffsetEntry(index.entry(checked - 1), segment.baseOffset)) checked--;
      const bad: EntryCheck[] = [];
      let previous: { offset: number; position: number } | null = null;
      for (let slot = 0; slot < checked; slot++) {
        const entry = index.entry(slot);
        const batch = batchAt.get(entry.position);
        let what: string | null = null;
        if (previous !== null && (entry.offset <= previous.offset || entry.position <= previous.position)) {
          what = `entry ${slot} (offset ${entry.offset}, position ${entry.position}) does not increase over entry ${slot - 1} (offset ${previous.offset}, position ${previous.position})`;
        } else if (batch === undefined) {
          what = `entry ${slot} points at position ${entry.position}, which is not the start of a batch`;
        } else if (scan.lastOffsets[batch] !== entry.offset) {
          what = `entry ${slot} has offset ${entry.offset} but the batch at position ${entry.position} ends at offset ${String(scan.lastOffsets[batch])}`;
        }
        if (what !== null) bad.push({ slot, position: entry.position, offset: entry.offset, what, pastData: entry.position >= scan.validBytes || entry.offset >= scan.nextOffset });
        previous = entry;
      }
      this.addIndexFindings(file, scan, { entries, zeroSlots: entries - checked, bad });
    } finally {
      await index.close();
    }
  }

  private async verifyTimeIndex(dir: string, segment: SegmentFiles, scan: SegmentScan): Promise<void> {
    const file = segmentPath(dir, segment.baseOffset, 'timeindex');
    if (!(await this.io.exists(file))) {
      if (scan.positions.length > 0) this.add({ severity: 'note', file, what: 'time index missing (read as empty; the next recovery rebuilds it)' });
      return;
    }
    const index = await TimeIndex.open(this.io, file, { baseOffset: segment.baseOffset, maxIndexBytes: READ_ONLY_INDEX_BYTES, readOnly: true });
    try {
      if (index.fileBytes % 12 !== 0) this.add({ severity: 'problem', file, what: `file length ${index.fileBytes} is not a multiple of 12` });
      const entries = index.entries;
      let checked = entries;
      if (scan.recovered) while (checked > 0 && isZeroTimeEntry(index.entry(checked - 1), segment.baseOffset)) checked--;
      const bad: EntryCheck[] = [];
      let previous: { timestamp: number; offset: number } | null = null;
      for (let slot = 0; slot < checked; slot++) {
        const entry = index.entry(slot);
        const batch = batchHolding(scan, entry.offset);
        let what: string | null = null;
        if (previous !== null && (entry.timestamp < previous.timestamp || entry.offset < previous.offset)) {
          what = `entry ${slot} (timestamp ${entry.timestamp}, offset ${entry.offset}) goes back from entry ${slot - 1} (timestamp ${previous.timestamp}, offset ${previous.offset})`;
        } else if (batch === -1) {
          what = `entry ${slot} names offset ${entry.offset}, which no batch of the segment holds`;
        } else if (entry.timestamp > (scan.runningMaxTimestamps[batch] as number)) {
          what = `entry ${slot} has timestamp ${entry.timestamp}, above the largest batch max timestamp ${String(scan.runningMaxTimestamps[batch])} up to offset ${entry.offset}`;
        }
        if (what !== null) bad.push({ slot, position: slot * 12, offset: entry.offset, what, pastData: entry.offset >= scan.nextOffset });
        previous = entry;
      }
      this.addIndexFindings(file, scan, { entries, zeroSlots: entries - checked, bad });
    } finally {
      await index.close();
    }
  }

  /**
   * At most one line per index for its entries: a 'recovery' line when all
   * that is wrong is what an unclean stop leaves past the valid data (the
   * recovery rescanning this segment rebuilds the index), else one 'problem'
   * line naming the first bad entry and how many more there are.
   */
  private addIndexFindings(file: string, scan: SegmentScan, found: { entries: number; zeroSlots: number; bad: readonly EntryCheck[] }): void {
    const { entries, zeroSlots, bad } = found;
    const pastData = bad.filter((b) => b.pastData).length;
    const expected = scan.recovered && pastData === bad.length;
    if (scan.recovered && (zeroSlots > 0 || (expected && pastData > 0))) {
      const parts = [zeroSlots > 0 ? `${zeroSlots} zero-filled slots (preallocated, never written)` : '', expected && pastData > 0 ? `${pastData} entries beyond the last whole batch (position ${scan.validBytes}, offset ${scan.nextOffset})` : ''];
      const valid = entries - zeroSlots - (expected ? pastData : bad.length);
      this.add({
        severity: 'recovery', file,
        what: `${parts.filter((p) => p !== '').join(' and ')}: expected after an unclean stop: recovery will rebuild this index from the .log (${valid} of ${entries} entries are valid now)`,
      });
    }
    if (expected || bad.length === 0) return;
    const first = bad[0] as EntryCheck;
    const more = bad.length > 1 ? ` (and ${bad.length - 1} more bad entries of ${entries} in this index, not listed)` : '';
    this.add({ severity: 'problem', file, position: first.position, offset: first.offset, what: `${first.what}${more}` });
  }

  private async verifyTxnIndex(dir: string, segment: SegmentFiles, scan: SegmentScan): Promise<void> {
    const file = segmentPath(dir, segment.baseOffset, 'txnindex');
    if (!(await this.io.exists(file))) return;
    const index = await TxnIndex.open(this.io, file, { baseOffset: segment.baseOffset, readOnly: true });
    const found: Finding[] = [];
    try {
      index.sanityCheck();
      let previous = -1;
      for (const txn of index.allAbortedTxns()) {
        if (txn.lastOffset <= previous) found.push({ severity: 'problem', file, offset: txn.lastOffset, what: `aborted txn of producer ${txn.producerId} ends at ${txn.lastOffset}, not after the previous entry's ${previous}` });
        if (txn.lastOffset >= scan.nextOffset) found.push({ severity: 'problem', file, offset: txn.lastOffset, what: `aborted txn of producer ${txn.producerId} ends at ${txn.lastOffset}, beyond the segment's data (next offset ${scan.nextOffset})` });
        previous = txn.lastOffset;
      }
    } catch (error) {
      found.push({ severity: 'problem', file, what: errorText(error) });
    } finally {
      await index.close();
    }
    const first = found[0];
    if (first !== undefined) this.add(found.length === 1 ? first : { ...first, what: `${first.what} (and ${found.length - 1} more problems in this index, not listed)` });
  }

  private async verifyLeaderEpochs(dir: string, logEndOffset: number): Promise<void> {
    const file = path.join(dir, FileNames.leaderEpochCheckpoint);
    if (!(await this.io.exists(file))) return;
    try {
      let previous: { epoch: number; startOffset: number } | null = null;
      for (const entry of await new LeaderEpochCheckpoint(this.io, file).read()) {
        if (previous !== null && (entry.epoch <= previous.epoch || entry.startOffset <= previous.startOffset)) {
          this.add({ severity: 'problem', file, offset: entry.startOffset, what: `epoch ${entry.epoch} at ${entry.startOffset} does not increase over epoch ${previous.epoch} at ${previous.startOffset}` });
        }
        if (entry.startOffset > logEndOffset) this.add({ severity: 'problem', file, offset: entry.startOffset, what: `epoch ${entry.epoch} starts at ${entry.startOffset}, beyond the log end offset ${logEndOffset}` });
        previous = entry;
      }
    } catch (error) {
      this.add({ severity: 'problem', file, what: errorText(error) });
    }
  }

  private async verifySnapshots(dir: string, logEndOffset: number): Promise<void> {
    for (const offset of snapshotOffsets(await this.io.readdir(dir))) {
      const file = segmentPath(dir, offset, 'snapshot');
      try {
        for (const entry of decodeSnapshot(await this.io.readFile(file), file)) this.highestProducerId = Math.max(this.highestProducerId, entry.producerId);
      } catch (error) {
        this.add({ severity: 'problem', file, offset, what: errorText(error) });
        continue;
      }
      if (offset > logEndOffset) this.add({ severity: 'note', file, offset, what: `snapshot beyond the log end offset ${logEndOffset} (the next open deletes it)` });
    }
  }

  /** A header whose producer id is not a safe integer is left to the CRC check (the scan cannot know it). */
  private seeProducerId(batch: { readonly producerId: number }): void {
    try {
      this.highestProducerId = Math.max(this.highestProducerId, batch.producerId);
    } catch {
      // unreadable int64: the batch's CRC mismatch (or header problem) is reported on its own
    }
  }

  private async verifyProducerIdFile(dataDir: string): Promise<void> {
    const file = path.join(dataDir, PRODUCER_ID_FILE);
    const highest = this.highestProducerId;
    if (!(await this.io.exists(file))) {
      if (highest >= 0) {
        this.add({ severity: 'note', file, what: `no ${PRODUCER_ID_FILE}, though the logs hold producer ids up to ${highest}: a broker started here begins above the ids its partitions' producer state still holds` });
      }
      return;
    }
    const content = parseProducerIdFile(await this.io.readFile(file));
    this.producerIdFile = { file, content };
    const repair = `seglog recover rewrites it at a safe id (above the highest producer id in the logs${highest >= 0 ? `, ${highest},` : ' (none)'} plus a margin)`;
    if (content.kind === 'damaged') {
      this.add({ severity: 'problem', file, what: `damaged: ${content.reason}; a broker refuses to start on this directory; ${repair}` });
    } else if (content.next <= highest) {
      this.add({ severity: 'problem', file, what: `next producer id ${content.next} is not above producer id ${highest} in the logs: a broker would hand out an id already used; ${repair}` });
    } else if (content.legacy) {
      this.add({ severity: 'note', file, what: `legacy format without a checksum (next producer id ${content.next}); the broker rewrites it checked at its next reservation` });
    }
  }

  /**
   * cleaner-offset-checkpoint: never damage (a stale or unreadable one only
   * makes the next pass start over at the log start), so notes: the cleaner
   * state of each partition it names, an offset beyond the log end, a file
   * that does not parse. cleaner-stats likewise: an unreadable one is a note
   * (its figures start over, nothing else changes).
   */
  private async verifyCleanerCheckpoint(dirs: LogDirs, logEndOffsets: ReadonlyMap<string, number>): Promise<void> {
    const checkpoint = await readCleanerCheckpoint(this.io, dirs.dataDir);
    if (checkpoint.stats.error !== null) {
      this.add({ severity: 'note', file: checkpoint.stats.path, what: `${errorText(checkpoint.stats.error)} (the cleaner's last clean times and bytes saved start over)` });
    }
    const read = checkpoint.read;
    if (!read.exists) return;
    if (read.error !== null) {
      this.add({ severity: 'note', file: read.path, what: `${errorText(read.error)} (the cleaner starts over at each log start)` });
      return;
    }
    for (const partition of dirs.partitions) {
      const state = cleanerStateOf(checkpoint, partition.name, await listSegments(this.io, partition.dir));
      if (state === null) continue;
      const end = logEndOffsets.get(partition.name) ?? 0;
      const beyond = state.firstDirtyOffset > end ? `; beyond the log end offset ${end}: the next pass starts at the log start` : '';
      this.add({ severity: 'note', file: read.path, offset: state.firstDirtyOffset, what: `${partition.name}: ${cleanerText(state)}${beyond}` });
    }
  }

  private async verifyOffsetCheckpoint(dataDir: string, name: string, what: string, logEndOffsets: ReadonlyMap<string, number>): Promise<void> {
    const read = await readOffsetCheckpoint(this.io, dataDir, name);
    if (read.error !== null) {
      this.add({ severity: 'problem', file: read.path, what: errorText(read.error) });
      return;
    }
    for (const [partition, offset] of read.offsets) {
      const end = logEndOffsets.get(partition);
      if (end === undefined) {
        this.add({ severity: 'note', file: read.path, offset, what: `${what} of ${partition}, which has no directory here` });
      } else if (offset > end) {
        this.add({ severity: 'problem', file: read.path, offset, what: `${what} ${offset} of ${partition} is beyond its log end offset ${end}` });
      }
    }
  }
}

/** A slot of a preallocated offset index that was never written: relative offset 0, position 0. */
function isZeroOffsetEntry(entry: { offset: number; position: number }, baseOffset: number): boolean {
  return entry.offset === baseOffset && entry.position === 0;
}

/** A slot of a preallocated time index that was never written: timestamp 0, relative offset 0. */
function isZeroTimeEntry(entry: { timestamp: number; offset: number }, baseOffset: number): boolean {
  return entry.timestamp === 0 && entry.offset === baseOffset;
}

/** The index of the batch holding `offset` (binary search on last offsets), or -1. */
function batchHolding(scan: SegmentScan, offset: number): number {
  let low = 0;
  let high = scan.lastOffsets.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((scan.lastOffsets[mid] as number) < offset) low = mid + 1;
    else high = mid;
  }
  if (low === scan.lastOffsets.length || (scan.baseOffsets[low] as number) > offset) return -1;
  return low;
}
