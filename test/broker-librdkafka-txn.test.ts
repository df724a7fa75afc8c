// librdkafka's own transactional producer against the broker: a small Python
// program (test/lib/librdkafka_txn.py, Debian's python3-confluent-kafka over
// the machine's librdkafka) commits, aborts with abort_transaction, and
// commits again with one transactional id. A read_committed kcat consumer
// must see exactly the committed records, read_uncommitted all three
// transactions' records. Skipped only when kcat or the Python binding is
// missing (.ci/run installs both). No verdict depends on elapsed time; the
// timeouts only guard against hangs.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Broker } from '@seglog/broker';

const run = promisify(execFile);
const PYTHON = '/usr/bin/python3';
const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'lib', 'librdkafka_txn.py');
const hasKcat = spawnSync('kcat', ['-V'], { encoding: 'utf8' }).status === 0;
const hasBinding = spawnSync(PYTHON, ['-c', 'import confluent_kafka'], { encoding: 'utf8' }).status === 0;
const TOPIC = 'pytx';
const HANG_GUARD_MS = 180_000;

async function consume(bootstrap: string, isolation: string): Promise<string[]> {
  const { stdout } = await run('kcat', ['-b', bootstrap, '-C', '-t', TOPIC, '-e', '-q', '-f', '%s\\n', '-X', `isolation.level=${isolation}`], { timeout: HANG_GUARD_MS });
  return stdout.split('\n').filter((l) => l.length > 0);
}

const names = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

describe.skipIf(!hasKcat || !hasBinding)('librdkafka transactional producer (python3-confluent-kafka)', () => {
  let dir: string;
  let broker: Broker;
  let bootstrap: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-librdkafka-txn-'));
    broker = await Broker.start({
      dataDir: path.join(dir, 'data'), port: 0, autoCreatePartitions: 1, offsetsTopicPartitions: 2, transactionStateTopicPartitions: 2, log: () => undefined,
    });
    await broker.groupsReady();
    bootstrap = `127.0.0.1:${broker.port}`;
  });

  afterAll(async () => {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('commit, abort_transaction, commit: read_committed sees exactly the committed records', async () => {
    const { stdout } = await run(PYTHON, [SCRIPT, bootstrap, TOPIC], { timeout: HANG_GUARD_MS });
    expect(stdout.split('\n').filter((l) => l.length > 0)).toEqual(['init', 'committed c1 25', 'aborted ab 15', 'committed c2 10']);
    expect(await consume(bootstrap, 'read_committed')).toEqual([...names('c1', 25), ...names('c2', 10)]);
    expect(await consume(bootstrap, 'read_uncommitted')).toEqual([...names('c1', 25), ...names('ab', 15), ...names('c2', 10)]);
    // The abort went through the coordinator: the id's transaction ended, nothing is left open.
    const state = broker.transactions.txns.get('py-librdkafka-tx');
    expect(state?.state).toMatch(/Complete(Commit|Abort)/);
  });
});
