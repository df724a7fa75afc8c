// Child process for the unclean-stop tests: writes a data directory with
// LogManager (preallocated segments, so the active .log, .index and
// .timeindex carry zero-filled tails as on a running broker), waits until
// every batch is durable, then kills itself with SIGKILL — the state a
// kill -9 leaves: every acknowledged record intact, no clean-shutdown marker.
//
// argv: <dataDir> <batches> [producerId]. Batches have 2 records; with a
// producerId they are idempotent (epoch 0, sequences from 0).

import { NodeIo } from '@seglog/io';
import { LogConfig, LogManager } from '@seglog/log';
import { buildBatch } from '@seglog/records';

const [dataDir, batchesText, producerIdText] = process.argv.slice(2);
if (dataDir === undefined || batchesText === undefined) throw new Error('usage: unclean-writer <dataDir> <batches> [producerId]');
const batches = Number(batchesText);
const producerId = producerIdText === undefined ? -1 : Number(producerIdText);
const T0 = 1_700_000_000_000;

const config = new LogConfig().with({ segmentBytes: 8192, indexIntervalBytes: 300, preallocate: true });
const manager = await LogManager.open(new NodeIo(), dataDir, { defaultConfig: config, minFreeBytes: 0, checkpointIntervalMs: 0 });
const log = await manager.getOrCreateLog('orders', 0);
for (let i = 0; i < batches; i++) {
  await log.appendAsLeader(buildBatch({
    records: [{ key: `k${i}`, value: `value-${i}-`.repeat(5), timestamp: T0 + i }, { value: `second-${i}`, timestamp: T0 + i }],
    ...(producerId >= 0 ? { producerId, producerEpoch: 0, baseSequence: 2 * i } : {}),
  }), { leaderEpoch: 0 });
}
await log.flush();
process.stdout.write(`durable ${log.logEndOffset}\n`);
process.kill(process.pid, 'SIGKILL');
