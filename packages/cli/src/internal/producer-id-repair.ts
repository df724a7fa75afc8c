// Rewriting the broker's `broker-producer-id` (format and rules: the
// broker's producer-id-allocator.ts) when verify found it damaged, or not
// above every producer id in the logs. Kafka never reuses a producer id, so
// the new next id comes from safeProducerIdStart: above the highest id in
// any batch or producer snapshot of the data directory and above a next id
// still legible in the damaged text, rounded up to a block, plus a margin
// for ids handed out that no log holds. When damage remains in the logs'
// batches or snapshots, the ids they hold are not all known: the repair
// refuses and says so. The write is durable: `<file>.tmp`, fsync, rename,
// directory fsync.

import path from 'node:path';
import { PRODUCER_ID_FILE, PRODUCER_ID_REPAIR_MARGIN, formatProducerIdFile, safeProducerIdStart } from '@seglog/broker';
import type { Io } from '@seglog/io';
import type { Verifier } from './verifier.js';

export interface ProducerIdRepair {
  /** The file is now (or, in a dry run, would be) trustworthy: its verify problem is resolved. */
  readonly resolved: boolean;
  /** The new next id, or null when refused. */
  readonly next: number | null;
  readonly text: string;
}

/** Repairs `verifier`'s producer-id file if it needs it; null when it does not (or there is none). */
export async function repairProducerIdFile(io: Io, verifier: Verifier, dryRun: boolean): Promise<ProducerIdRepair | null> {
  const found = verifier.producerIdFile;
  if (found === null) return null;
  const { file, content } = found;
  const highest = verifier.highestProducerId;
  if (content.kind === 'ok' && content.next > highest) return null;
  const why = content.kind === 'damaged' ? `damaged: ${content.reason}` : `next producer id ${content.next} is not above producer id ${highest} in the logs`;
  const hidden = verifier.findings.filter((f) => f.severity === 'problem' && /\.(log|snapshot)$/.test(f.file)).length;
  if (hidden > 0) {
    return {
      resolved: false, next: null,
      text: `${PRODUCER_ID_FILE}: not rewritten (${why}): ${hidden} problems remain in the logs' batches or snapshots, so the producer ids they hold are not all known ` +
        'and any new next id could reuse one; repair those first (seglog verify lists them), then run recover again',
    };
  }
  const salvaged = content.kind === 'damaged' ? content.salvagedNext : content.next;
  const next = safeProducerIdStart(highest, salvaged);
  if (next === null) {
    return { resolved: false, next: null, text: `${PRODUCER_ID_FILE}: not rewritten (${why}): the producer ids in use reach the largest producer id; no safe next id is left` };
  }
  if (!dryRun) await writeDurably(io, file, formatProducerIdFile(next));
  const above = [`the highest producer id in the logs' batches and snapshots (${highest})`, salvaged === null ? '' : `the old next id ${salvaged}`].filter((s) => s !== '').join(' and ');
  return {
    resolved: true, next,
    text: `${PRODUCER_ID_FILE}: ${dryRun ? 'would rewrite' : 'rewrote'} (${why}): next producer id ${next}, above ${above}, ` +
      `rounded up to a block, plus a margin of ${PRODUCER_ID_REPAIR_MARGIN} ids for ids handed out that no log holds`,
  };
}

async function writeDurably(io: Io, file: string, bytes: Buffer): Promise<void> {
  const tmp = `${file}.tmp`;
  const handle = await io.open(tmp, { create: true });
  try {
    await handle.truncate(0);
    await handle.pwrite(bytes, 0);
    await handle.fsync();
  } finally {
    await handle.close();
  }
  await io.rename(tmp, file);
  await io.fsyncDir(path.dirname(file));
}
