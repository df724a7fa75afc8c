// Issue 23 item 8, broker side: the data directory going offline is printed
// once with its cause (it used to be silent: kcat only showed "Message timed
// out"), and --min-free-bytes reaches the disk guard.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBatch } from '@seglog/records';
import { describe, expect, it } from 'vitest';
import { Broker } from '../src/index.js';

/** Scratch space inside the repository (gitignored): the project reads no path outside its root. */
const SCRATCH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../.seglog-tmp');

function scratch(prefix: string): string {
  mkdirSync(SCRATCH, { recursive: true });
  return mkdtempSync(path.join(SCRATCH, prefix));
}

describe('broker storage failures', () => {
  it('prints one line with the cause when the data directory goes offline', async () => {
    const dir = scratch('broker-offline-');
    const lines: string[] = [];
    try {
      const broker = await Broker.start({ dataDir: dir, port: 0, log: (line) => lines.push(line) });
      // The group coordinator's start-up (creating __consumer_offsets) is done before the directory is failed.
      await broker.groupsReady();
      try {
        const manager = broker.logManager;
        expect(manager).not.toBeNull();
        const log = await manager!.getOrCreateLog('t', 0);
        const txn = buildBatch({ records: [{ value: 'v', timestamp: Date.now() }], producerId: 5, producerEpoch: 0, baseSequence: 0, transactional: true });
        await log.written((await log.appendAsLeader(txn, { leaderEpoch: 0 })).lastOffset);
        // The .txnindex cannot be created: its path is a directory.
        mkdirSync(path.join(dir, 't-0', `${'0'.repeat(20)}.txnindex`));
        const marker = await log.appendMarker({ type: 'ABORT', producerId: 5, producerEpoch: 0, coordinatorEpoch: 0, leaderEpoch: 0, timestamp: Date.now() })
          .then(() => 'resolved', (e: unknown) => String((e as { code?: unknown }).code));
        expect(marker).toBe('SEGLOG_ERR_LOG_OFFLINE');
        const offline = lines.filter((line) => line.includes('OFFLINE'));
        expect(offline).toHaveLength(1);
        expect(offline[0]).toContain(`data directory ${dir} is OFFLINE (first failure in partition t-0)`);
        expect(offline[0]).toContain('SEGLOG_ERR_IO_IS_DIRECTORY');
        expect(offline[0]).toContain('KAFKA_STORAGE_ERROR');
      } finally {
        await broker.stop().catch(() => undefined);
      }
      expect(lines.filter((line) => line.includes('OFFLINE'))).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('minFreeBytes (--min-free-bytes) sets the disk guard floor (default 64 MiB)', async () => {
    const dir = scratch('broker-floor-');
    try {
      const set = await Broker.start({ dataDir: path.join(dir, 'a'), port: 0, minFreeBytes: 12345, log: () => undefined });
      const defaulted = await Broker.start({ dataDir: path.join(dir, 'b'), port: 0, log: () => undefined });
      try {
        expect(set.logManager?.diskGuard.minFreeBytes).toBe(12345);
        expect(defaulted.logManager?.diskGuard.minFreeBytes).toBe(64 * 1024 * 1024);
      } finally {
        await set.stop();
        await defaulted.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
