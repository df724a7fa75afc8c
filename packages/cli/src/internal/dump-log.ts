// dumpLog: prints every batch of a `.log` segment (and optionally its
// records) in file order, then how the file ends. Read only; a torn tail or a
// framing error is reported as the end of the file, never thrown; a batch
// whose CRC does not match is printed with both CRCs and the scan goes on
// (its framing is intact).

import { isSeglogError } from '@seglog/common';
import { RecordCursor, readTxnMarker } from '@seglog/records';
import type { RecordBatch } from '@seglog/records';
import type { CliContext } from './cli-context.js';
import { bytesToJson, bytesToText, formatBytes } from './format-bytes.js';
import { SegmentScanner } from './segment-scanner.js';
import type { ScanEnd } from './segment-scanner.js';

export interface DumpLogOptions {
  readonly records: boolean;
  readonly json: boolean;
  readonly maxBytes: number;
}

const CODEC_NAMES = ['none', 'gzip', 'snappy', 'lz4', 'zstd', 'codec-5', 'codec-6', 'codec-7'] as const;

export function hex32(value: number): string {
  return (value >>> 0).toString(16).padStart(8, '0');
}

/** The header fields of a batch, in the order dump prints them. Throws a typed error for an unreadable int64. */
export function describeBatch(batch: RecordBatch, position: number): Record<string, string | number | boolean | null> {
  const crcValid = batch.isValid();
  const fields: Record<string, string | number | boolean | null> = {
    baseOffset: batch.baseOffset,
    lastOffset: batch.lastOffset,
    count: batch.recordsCount,
    position,
    size: batch.sizeInBytes,
    magic: batch.magic,
    partitionLeaderEpoch: batch.partitionLeaderEpoch,
    attributes: `0x${batch.attributes.toString(16).padStart(4, '0')}`,
    compresscodec: CODEC_NAMES[batch.attributes & 7] ?? 'unknown',
    timestampType: batch.timestampType,
    baseTimestamp: batch.baseTimestamp,
    maxTimestamp: batch.maxTimestamp,
    producerId: batch.producerId,
    producerEpoch: batch.producerEpoch,
    baseSequence: batch.baseSequence,
    lastSequence: batch.lastSequence,
    isTransactional: batch.isTransactional,
    isControl: batch.isControl,
    crc: hex32(batch.crc),
    crcValid,
  };
  if (!crcValid) fields['computedCrc'] = hex32(batch.computeCrc());
  if (batch.hasDeleteHorizon) fields['deleteHorizonMs'] = batch.deleteHorizonMs;
  if (batch.isControl && crcValid) {
    try {
      const marker = readTxnMarker(batch);
      if (marker !== null) {
        fields['marker'] = marker.type;
        fields['coordinatorEpoch'] = marker.coordinatorEpoch;
      }
    } catch (error) {
      fields['marker'] = `unreadable (${errorText(error)})`;
    }
  }
  return fields;
}

export function errorText(error: unknown): string {
  if (isSeglogError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

function fieldsToText(fields: Record<string, unknown>): string {
  return Object.entries(fields).map(([key, value]) => `${key}: ${String(value)}`).join(' ');
}

/** What an end of scan means, in words. */
export function describeEnd(end: ScanEnd): string {
  switch (end.stop) {
    case 'end':
      return `end of data at position ${end.position}`;
    case 'zero':
      return `end of data at position ${end.position}: ${end.trailingBytes} zero bytes follow (preallocated, never written)`;
    case 'partial':
      return end.declaredBytes > 0
        ? `torn tail at position ${end.position}: ${end.trailingBytes} bytes of a partial batch (its header declares ${end.declaredBytes} bytes)`
        : `torn tail at position ${end.position}: ${end.trailingBytes} trailing bytes, too few for a batch header`;
    case 'corrupt':
      return `corrupt framing at position ${end.position} (${errorText(end.error)}): ${end.trailingBytes} bytes from there cannot be read`;
  }
}

export async function dumpLog(ctx: CliContext, path: string, options: DumpLogOptions): Promise<void> {
  const scanner = await SegmentScanner.open(ctx.io, path);
  const progress = ctx.progress('dump', scanner.fileBytes);
  const cursor = new RecordCursor();
  let batches = 0;
  let invalid = 0;
  try {
    if (!options.json) ctx.out(`Dumping ${path} (${scanner.fileBytes} bytes)`);
    for (let next = await scanner.next(); next !== null; next = await scanner.next()) {
      batches++;
      progress.advance(next.batch.sizeInBytes);
      let fields: Record<string, string | number | boolean | null>;
      try {
        fields = describeBatch(next.batch, next.position);
      } catch (error) {
        invalid++;
        const what = `batch header unreadable: ${errorText(error)}`;
        ctx.out(options.json ? JSON.stringify({ type: 'batch', position: next.position, size: next.batch.sizeInBytes, error: what }) : `position: ${next.position} size: ${next.batch.sizeInBytes} ${what}`);
        continue;
      }
      if (fields['crcValid'] !== true) invalid++;
      ctx.out(options.json ? JSON.stringify({ type: 'batch', ...fields }) : fieldsToText(fields));
      if (options.records) dumpRecords(ctx, cursor, next.batch, options);
      await ctx.maybeFlush();
    }
    const end = scanner.end as ScanEnd;
    if (options.json) {
      ctx.out(JSON.stringify({ type: 'end', stop: end.stop, position: end.position, trailingBytes: end.trailingBytes, declaredBytes: end.declaredBytes, error: end.error === null ? null : errorText(end.error), batches, invalidBatches: invalid, fileBytes: scanner.fileBytes }));
    } else {
      ctx.out(describeEnd(end));
      ctx.out(`${batches} batches (${invalid} with an invalid CRC or header), ${end.position} bytes of whole batches, file size ${scanner.fileBytes}`);
    }
  } finally {
    progress.done();
    await scanner.close();
  }
}

function dumpRecords(ctx: CliContext, cursor: RecordCursor, batch: RecordBatch, options: DumpLogOptions): void {
  try {
    cursor.open(batch);
    while (cursor.next()) {
      const key = formatBytes(cursor.key, options.maxBytes);
      const value = formatBytes(cursor.value, options.maxBytes);
      const headers = cursor.headers().map((h) => ({ key: h.key, value: formatBytes(h.value, options.maxBytes) }));
      if (options.json) {
        ctx.out(JSON.stringify({
          type: 'record', offset: cursor.offset, timestamp: cursor.timestamp, sequence: cursor.sequence,
          keySize: key.size, key: bytesToJson(key), valueSize: value.size, value: bytesToJson(value),
          headers: headers.map((h) => ({ key: h.key, value: bytesToJson(h.value) })),
        }));
      } else {
        const headerText = headers.map((h) => `${JSON.stringify(h.key)}=${bytesToText(h.value)}`).join(',');
        ctx.out(`| offset: ${cursor.offset} timestamp: ${cursor.timestamp} sequence: ${cursor.sequence} keySize: ${key.size} key: ${bytesToText(key)} valueSize: ${value.size} value: ${bytesToText(value)} headers: [${headerText}]`);
      }
    }
  } catch (error) {
    ctx.out(options.json ? JSON.stringify({ type: 'records-error', error: errorText(error) }) : `| records unreadable: ${errorText(error)}`);
  } finally {
    cursor.close();
  }
}
