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
// Findings are 'problem' (damage or an inconsistency; verify exits 1) or
// 'note' (worth knowing, not damage: a zero-filled preallocated tail, offset
// gaps as compaction leaves them, a stale snapshot the next open deletes).

import path from 'node:path';
import type { Io } from '@seglog/io';
import {
  FileNames, LeaderEpochCheckpoint, OffsetIndex, TimeIndex, TxnIndex, decodeSnapshot, snapshotOffsets,
} from '@seglog/log';
import { readOffsetCheckpoint } from './checkpoints.js';
import { resumeAfterDamage } from './damage-resume.js';
import { describeEnd, errorText, hex32 } from './dump-log.js';
import { listSegments, segmentPath } from './log-dirs.js';
import type { LogDirs, PartitionDir, SegmentFiles } from './log-dirs.js';
import type { Progress } from './progress.js';
import { SegmentScanner } from './segment-scanner.js';

export interface Finding {
  readonly severity: 'problem' | 'note';
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
}

const INT32_MAX = 0x7fffffff;
const READ_ONLY_INDEX_BYTES = 10 * 1024 * 1024;
/** Per index, findings after this many are summarised in one line (a zero tail would repeat thousands). */
const MAX_FINDINGS_PER_INDEX = 5;

export class Verifier {
  readonly findings: Finding[] = [];
  segments = 0;
  batches = 0;
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

  private add(finding: Finding): void {
    this.findings.push(finding);
  }

  /** Verifies every partition of `dirs` and, for a data directory, its checkpoints. */
  async verify(dirs: LogDirs): Promise<void> {
    const logEndOffsets = new Map<string, number>();
    for (const partition of dirs.partitions) logEndOffsets.set(partition.name, await this.verifyPartition(partition));
    if (dirs.kind === 'data') {
      await this.verifyOffsetCheckpoint(dirs.dataDir, FileNames.recoveryPointCheckpoint, 'recovery point', logEndOffsets);
      await this.verifyOffsetCheckpoint(dirs.dataDir, FileNames.logStartOffsetCheckpoint, 'log start offset', logEndOffsets);
    }
  }

  /** Returns the partition's log end offset as found on disk. */
  async verifyPartition(partition: PartitionDir): Promise<number> {
    const segments = await listSegments(this.io, partition.dir);
    let logEndOffset = segments[0]?.baseOffset ?? 0;
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i] as SegmentFiles;
      const nextBase = segments[i + 1]?.baseOffset ?? Number.MAX_SAFE_INTEGER;
      const scan = await this.scanSegment(segment, nextBase, i === segments.length - 1);
      await this.verifyOffsetIndex(partition.dir, segment, scan);
      await this.verifyTimeIndex(partition.dir, segment, scan);
      await this.verifyTxnIndex(partition.dir, segment, scan);
      logEndOffset = Math.max(logEndOffset, scan.nextOffset);
    }
    await this.verifyLeaderEpochs(partition.dir, logEndOffset);
    await this.verifySnapshots(partition.dir, logEndOffset);
    return logEndOffset;
  }

  private async scanSegment(segment: SegmentFiles, nextBase: number, isLast: boolean): Promise<SegmentScan> {
    this.segments++;
    const file = segment.log;
    const scan: SegmentScan = { positions: [], baseOffsets: [], lastOffsets: [], runningMaxTimestamps: [], nextOffset: segment.baseOffset };
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
        this.progress.advance(end.trailingBytes);
        if (end.stop === 'partial' || end.stop === 'corrupt') {
          this.add({ severity: 'problem', file, position: end.position, offset: scan.nextOffset, what: describeEnd(end) });
          if (!isLast) await this.noteResume(file, segment.baseOffset, nextBase, end.position);
        } else if (end.stop === 'zero') {
          this.add({ severity: isLast ? 'note' : 'problem', file, position: end.position, what: `${describeEnd(end)}${isLast ? '' : ' in a sealed segment (it should have been trimmed on roll)'}` });
        }
      }
      if (gaps > 0 && !this.options.strict) this.add({ severity: 'note', file, what: `${gaps} offset gap(s) between batches (compaction or follower appends leave them; --strict makes them problems)` });
    } finally {
      await scanner.close();
    }
    return scan;
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
    const found: Finding[] = [];
    try {
      if (index.fileBytes % 8 !== 0) found.push({ severity: 'problem', file, what: `file length ${index.fileBytes} is not a multiple of 8` });
      let previous: { offset: number; position: number } | null = null;
      for (let slot = 0; slot < index.entries; slot++) {
        const entry = index.entry(slot);
        const where = { file, position: entry.position, offset: entry.offset };
        if (previous !== null && (entry.offset <= previous.offset || entry.position <= previous.position)) {
          found.push({ severity: 'problem', ...where, what: `entry ${slot} (offset ${entry.offset}, position ${entry.position}) does not increase over entry ${slot - 1} (offset ${previous.offset}, position ${previous.position})` });
        }
        const batch = batchAt.get(entry.position);
        if (batch === undefined) {
          found.push({ severity: 'problem', ...where, what: `entry ${slot} points at position ${entry.position}, which is not the start of a batch` });
        } else if (scan.lastOffsets[batch] !== entry.offset) {
          found.push({ severity: 'problem', ...where, what: `entry ${slot} has offset ${entry.offset} but the batch at position ${entry.position} ends at offset ${String(scan.lastOffsets[batch])}` });
        }
        previous = entry;
      }
    } finally {
      await index.close();
    }
    this.addCapped(found, file);
  }

  private async verifyTimeIndex(dir: string, segment: SegmentFiles, scan: SegmentScan): Promise<void> {
    const file = segmentPath(dir, segment.baseOffset, 'timeindex');
    if (!(await this.io.exists(file))) {
      if (scan.positions.length > 0) this.add({ severity: 'note', file, what: 'time index missing (read as empty; the next recovery rebuilds it)' });
      return;
    }
    const index = await TimeIndex.open(this.io, file, { baseOffset: segment.baseOffset, maxIndexBytes: READ_ONLY_INDEX_BYTES, readOnly: true });
    const found: Finding[] = [];
    try {
      if (index.fileBytes % 12 !== 0) found.push({ severity: 'problem', file, what: `file length ${index.fileBytes} is not a multiple of 12` });
      let previous: { timestamp: number; offset: number } | null = null;
      for (let slot = 0; slot < index.entries; slot++) {
        const entry = index.entry(slot);
        const where = { file, position: slot * 12, offset: entry.offset };
        if (previous !== null && (entry.timestamp < previous.timestamp || entry.offset < previous.offset)) {
          found.push({ severity: 'problem', ...where, what: `entry ${slot} (timestamp ${entry.timestamp}, offset ${entry.offset}) goes back from entry ${slot - 1} (timestamp ${previous.timestamp}, offset ${previous.offset})` });
        }
        const batch = batchHolding(scan, entry.offset);
        if (batch === -1) {
          found.push({ severity: 'problem', ...where, what: `entry ${slot} names offset ${entry.offset}, which no batch of the segment holds` });
        } else if (entry.timestamp > (scan.runningMaxTimestamps[batch] as number)) {
          found.push({ severity: 'problem', ...where, what: `entry ${slot} has timestamp ${entry.timestamp}, above the largest batch max timestamp ${String(scan.runningMaxTimestamps[batch])} up to offset ${entry.offset}` });
        }
        previous = entry;
      }
    } finally {
      await index.close();
    }
    this.addCapped(found, file);
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
    this.addCapped(found, file);
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
        decodeSnapshot(await this.io.readFile(file), file);
      } catch (error) {
        this.add({ severity: 'problem', file, offset, what: errorText(error) });
        continue;
      }
      if (offset > logEndOffset) this.add({ severity: 'note', file, offset, what: `snapshot beyond the log end offset ${logEndOffset} (the next open deletes it)` });
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

  private addCapped(found: readonly Finding[], file: string): void {
    for (const finding of found.slice(0, MAX_FINDINGS_PER_INDEX)) this.add(finding);
    const more = found.length - MAX_FINDINGS_PER_INDEX;
    if (more > 0) this.add({ severity: 'problem', file, what: `${more} more problems in this index (not listed)` });
  }
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
