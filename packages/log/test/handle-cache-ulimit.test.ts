// A data directory holding more segments than the process may open files
// (issue 24): a child process under `ulimit -n 256` creates 24 partitions ×
// 20 one-batch segments (480 segments, three files each) through LogManager,
// reads every partition from the beginning and checks every record, closes,
// reopens cleanly and reads everything again. The control run is the same
// child with a handle-cache budget larger than the limit: it must fail with
// SEGLOG_ERR_IO_TOO_MANY_FILES (or the directory offline because of it), so
// the limit is real and the pass is the cache's doing.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const url = (p: string): string => JSON.stringify(pathToFileURL(path.join(REPO_ROOT, p)).href);
const PARTITIONS = 24;
const SEGMENTS = 20;

function childScript(dir: string, maxOpenSegmentFiles: number): string {
  return `const { LogManager, LogConfig } = await import(${url('packages/log/src/index.ts')});
const { NodeIo } = await import(${url('packages/io/src/index.ts')});
const { buildBatch, RecordBatch } = await import(${url('packages/records/src/index.ts')});
const dir = ${JSON.stringify(dir)};
const options = { defaultConfig: new LogConfig().with({ segmentBytes: 1024, indexIntervalBytes: 64 }), minFreeBytes: 0, checkpointIntervalMs: 0, maxOpenSegmentFiles: ${maxOpenSegmentFiles} };
const value = (p, i) => Buffer.from(\`p\${p}-record-\${i}-\`.padEnd(600, 'x'));
async function readAll(manager) {
  let records = 0;
  for (let p = 0; p < ${PARTITIONS}; p++) {
    const log = manager.getLog('t', p);
    let offset = log.logStartOffset;
    while (offset < log.logEndOffset) {
      const plan = await log.read(offset, 8192);
      const bytes = await plan.toBuffer();
      await plan.release();
      if (bytes.length === 0) throw new Error(\`empty read at \${p}/\${offset}\`);
      for (let at = 0; at < bytes.length;) {
        const batch = new RecordBatch(bytes, at);
        const cursor = batch.records();
        while (cursor.next()) {
          if (cursor.offset !== offset) throw new Error(\`offset \${cursor.offset} where \${offset} was expected\`);
          if (!cursor.value.equals(value(p, offset))) throw new Error(\`wrong bytes at \${p}/\${offset}\`);
          offset++;
          records++;
        }
        cursor.close();
        at += batch.sizeInBytes;
      }
    }
  }
  return records;
}
try {
  let manager = await LogManager.open(new NodeIo(), dir, options);
  for (let p = 0; p < ${PARTITIONS}; p++) {
    const log = await manager.getOrCreateLog('t', p);
    for (let i = 0; i < ${SEGMENTS}; i++) await log.appendAsLeader(buildBatch({ records: [{ key: null, value: value(p, i) }], baseTimestamp: 1700000000000 + i }), { leaderEpoch: 0 });
  }
  const segments = manager.logs().reduce((n, log) => n + log.numberOfSegments, 0);
  const first = await readAll(manager);
  await manager.close();
  manager = await LogManager.open(new NodeIo(), dir, options);
  const second = await readAll(manager);
  const stats = manager.handleStats();
  await manager.close();
  console.log(JSON.stringify({ ok: true, segments, first, second, peakOpen: stats.peakOpen, evictions: stats.evictions }));
} catch (error) {
  console.log(JSON.stringify({ ok: false, code: error.code ?? String(error), cause: error.cause?.code ?? null }));
}`;
}

function runUnderUlimit(script: string): Promise<Record<string, unknown>> {
  const node = `exec ${JSON.stringify(process.execPath)} --conditions=source --import tsx --input-type=module -e "$SEGLOG_CHILD_SCRIPT"`;
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', `ulimit -n 256 && ${node}`], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SEGLOG_CHILD_SCRIPT: script } });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (status !== 0 || !line.startsWith('{')) reject(new Error(`child exited ${status}: ${out}\n${err}`));
      else resolve(JSON.parse(line) as Record<string, unknown>);
    });
  });
}

describe('a data directory with more segments than open files allowed', () => {
  let root = '';
  afterEach(() => {
    if (root !== '') rmSync(root, { recursive: true, force: true });
    root = '';
  });

  it('under ulimit -n 256, 480 segments are created, read from the beginning, reopened and read again', async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'seglog-ulimit-'));
    const result = await runUnderUlimit(childScript(path.join(root, 'data'), 64));
    expect(result).toMatchObject({ ok: true, first: PARTITIONS * SEGMENTS, second: PARTITIONS * SEGMENTS });
    expect(result.segments as number).toBeGreaterThan(256);
    expect(result.evictions as number).toBeGreaterThan(0);
  });

  it('control: with a budget above the limit the same directory runs out of descriptors', async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'seglog-ulimit-'));
    const result = await runUnderUlimit(childScript(path.join(root, 'data'), 100_000));
    expect(result.ok).toBe(false);
    expect(`${String(result.code)} ${String(result.cause)}`).toMatch(/SEGLOG_ERR_(IO_TOO_MANY_FILES|LOG_OFFLINE|LOG_RESOURCE_UNAVAILABLE)/);
  });
});
