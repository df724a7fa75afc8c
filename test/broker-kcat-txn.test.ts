// kcat (librdkafka) transactional producer against the broker, in-process on
// a random loopback port: `kcat -P -X transactional.id=…` runs
// init_transactions, begin_transaction, produces the file and
// commit_transaction (kcat's transactional mode, since kafkacat 1.6). Two such
// runs with one transactional id (the second bumps the epoch), with an open
// transaction of another producer in between (written by the test with the
// coordinator's own calls, then aborted by EndTxn), and then a
// read_committed kcat consumer must see exactly the two committed files,
// while read_uncommitted also sees the aborted records.
// kcat cannot abort on request (a signal ends it without abort_transaction),
// so the aborted transaction comes from the coordinator's API directly.
// Skipped only when kcat is not installed (.ci/run installs it). Waits are
// bounded by generous hang guards; no verdict depends on elapsed time.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { buildBatch } from '@seglog/records';
import { Broker } from '@seglog/broker';

const run = promisify(execFile);
const hasKcat = spawnSync('kcat', ['-V'], { encoding: 'utf8' }).status === 0;
const TOPIC = 'kctx';
const HANG_GUARD_MS = 120_000;

async function produceTxn(bootstrap: string, dir: string, values: readonly string[]): Promise<string> {
  const file = path.join(dir, `in-${values[0] ?? 'none'}.txt`);
  writeFileSync(file, `${values.map((v) => `${v}\t${v}`).join('\n')}\n`);
  const { stderr } = await run('kcat', ['-b', bootstrap, '-P', '-t', TOPIC, '-K', '\t', '-l', '-X', 'transactional.id=kcat-tx', file], { timeout: HANG_GUARD_MS });
  return stderr;
}

async function consume(bootstrap: string, isolation: string): Promise<string[]> {
  const { stdout } = await run('kcat', ['-b', bootstrap, '-C', '-t', TOPIC, '-e', '-q', '-f', '%s\\n', '-X', `isolation.level=${isolation}`], { timeout: HANG_GUARD_MS });
  return stdout.split('\n').filter((l) => l.length > 0);
}

describe.skipIf(!hasKcat)('kcat transactional producer', () => {
  let dir: string;
  let broker: Broker;
  let bootstrap: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-kcat-txn-'));
    broker = await Broker.start({
      dataDir: path.join(dir, 'data'), port: 0, autoCreatePartitions: 1, offsetsTopicPartitions: 2, transactionStateTopicPartitions: 2, log: () => undefined,
    });
    await broker.groupsReady();
    bootstrap = `127.0.0.1:${broker.port}`;
  });

  afterAll(async () => {
    const seen = [...broker.stats.versionsSeen].map(([api, v]) => `${api} v${[...v].sort((a, b) => a - b).join(',')}`).join('; ');
    process.stdout.write(`librdkafka (kcat -X transactional.id) request versions seen: ${seen}\n`);
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('two committed kcat transactions and an aborted one: read_committed sees exactly the committed records', async () => {
    const first = Array.from({ length: 30 }, (_, i) => `a${i}`);
    expect(await produceTxn(bootstrap, dir, first)).toMatch(/Transaction successfully committed/);

    // An aborted transaction in between, through the coordinator (what a producer's EndTxn(abort) does).
    const txns = broker.transactions;
    const me = await txns.initProducerId('aborter', 60_000, { producerId: -1, producerEpoch: -1 });
    expect(me.error).toBe('NONE');
    const request = { transactionalId: 'aborter', producerId: me.producerId, producerEpoch: me.producerEpoch };
    expect(await txns.addPartitions(request, [{ topic: TOPIC, partition: 0 }])).toBe('NONE');
    const log = broker.store.get(TOPIC, 0);
    if (log === undefined) throw new Error('no partition');
    const aborted = ['x0', 'x1', 'x2'];
    const batch = buildBatch({
      records: aborted.map((value) => ({ value, timestamp: Date.now() })),
      producerId: me.producerId, producerEpoch: me.producerEpoch, baseSequence: 0, transactional: true,
    });
    const result = await log.appendAsLeader(batch, { leaderEpoch: 0 });
    await log.written(result.lastOffset);
    log.updateHighWatermark(result.lastOffset + 1);
    expect(await txns.endTxn(request, false)).toBe('NONE');

    const second = Array.from({ length: 20 }, (_, i) => `b${i}`);
    expect(await produceTxn(bootstrap, dir, second)).toMatch(/Transaction successfully committed/);
    expect(txns.txns.get('kcat-tx')?.producerEpoch).toBe(1);

    expect(await consume(bootstrap, 'read_committed')).toEqual([...first, ...second]);
    expect(await consume(bootstrap, 'read_uncommitted')).toEqual([...first, ...aborted, ...second]);
  });
});
