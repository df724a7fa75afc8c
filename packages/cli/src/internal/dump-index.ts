// dumpIndexFile: prints the entries of the small files beside a segment —
// `.index`, `.timeindex`, `.txnindex`, `.snapshot` — and of the text
// checkpoints, decoded by the engine's own readers (opened read-only).
// Offsets are absolute: relative offsets plus the base offset from the file
// name. An index is printed as stored: the zero tail of a preallocated index
// left by an unclean stop shows as repeated (base, 0) entries, because that is
// what Kafka's reader would count (reference/kafka-storage.md §7.1).

import type { Io } from '@seglog/io';
import {
  LeaderEpochCheckpoint, OffsetCheckpoint, OffsetIndex, TimeIndex, TxnIndex, decodeSnapshot,
} from '@seglog/log';
import type { CliContext } from './cli-context.js';

export type SmallFileKind = 'index' | 'timeindex' | 'txnindex' | 'snapshot' | 'offset-checkpoint' | 'leader-epoch-checkpoint';

/** segment.index.bytes is irrelevant to a read-only open; any whole number of entries will do. */
const READ_ONLY_INDEX_BYTES = 10 * 1024 * 1024;

function emit(ctx: CliContext, json: boolean, type: string, fields: Record<string, unknown>): void {
  ctx.out(json ? JSON.stringify({ type, ...fields }) : Object.entries(fields).map(([k, v]) => `${k}: ${String(v)}`).join(' '));
}

export async function dumpIndexFile(ctx: CliContext, path: string, kind: SmallFileKind, baseOffset: number, json: boolean): Promise<void> {
  const io: Io = ctx.io;
  if (!json) ctx.out(`Dumping ${path}${kind === 'index' || kind === 'timeindex' || kind === 'txnindex' ? ` (base offset ${baseOffset})` : ''}`);
  let count = 0;
  switch (kind) {
    case 'index': {
      const index = await OffsetIndex.open(io, path, { baseOffset, maxIndexBytes: READ_ONLY_INDEX_BYTES, readOnly: true });
      try {
        for (let slot = 0; slot < index.entries; slot++, count++) emit(ctx, json, 'offset-index-entry', { ...index.entry(slot) });
        if (index.fileBytes % 8 !== 0) ctx.out(json ? JSON.stringify({ type: 'trailing-bytes', bytes: index.fileBytes % 8 }) : `${index.fileBytes % 8} trailing bytes (not a whole entry)`);
      } finally {
        await index.close();
      }
      break;
    }
    case 'timeindex': {
      const index = await TimeIndex.open(io, path, { baseOffset, maxIndexBytes: READ_ONLY_INDEX_BYTES, readOnly: true });
      try {
        for (let slot = 0; slot < index.entries; slot++, count++) emit(ctx, json, 'time-index-entry', { ...index.entry(slot) });
        if (index.fileBytes % 12 !== 0) ctx.out(json ? JSON.stringify({ type: 'trailing-bytes', bytes: index.fileBytes % 12 }) : `${index.fileBytes % 12} trailing bytes (not a whole entry)`);
      } finally {
        await index.close();
      }
      break;
    }
    case 'txnindex': {
      const index = await TxnIndex.open(io, path, { baseOffset, readOnly: true });
      try {
        for (const txn of index.allAbortedTxns()) {
          count++;
          emit(ctx, json, 'aborted-txn', { producerId: txn.producerId, firstOffset: txn.firstOffset, lastOffset: txn.lastOffset, lastStableOffset: txn.lastStableOffset });
        }
      } finally {
        await index.close();
      }
      break;
    }
    case 'snapshot': {
      for (const entry of decodeSnapshot(await io.readFile(path), path)) {
        count++;
        emit(ctx, json, 'producer', { ...entry });
      }
      break;
    }
    case 'offset-checkpoint': {
      for (const entry of await new OffsetCheckpoint(io, path).read()) {
        count++;
        emit(ctx, json, 'checkpoint-entry', { ...entry });
      }
      break;
    }
    case 'leader-epoch-checkpoint': {
      for (const entry of await new LeaderEpochCheckpoint(io, path).read()) {
        count++;
        emit(ctx, json, 'epoch-entry', { ...entry });
      }
      break;
    }
  }
  ctx.out(json ? JSON.stringify({ type: 'end', entries: count }) : `${count} entries`);
}
