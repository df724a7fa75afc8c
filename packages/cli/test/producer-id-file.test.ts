// `seglog verify` and `seglog recover` on the broker's broker-producer-id
// (issue 23 item 6): verify reports a damaged file or one not above the
// producer ids in the logs; recover rewrites it above every producer id in
// the batches and snapshots plus a margin (ids are never reused), or
// refuses and says why when damage in the logs hides their producer ids.

import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PRODUCER_ID_FILE, PRODUCER_ID_REPAIR_MARGIN, formatProducerIdFile, parseProducerIdFile } from '@seglog/broker';
import { logFiles, readTree, removeDir, runSeglog, tempDir, writeDataDir, writeUncleanDataDir } from './helpers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});

const PRODUCER_ID = 4321;

/** Every file's SHA-256 (the preallocated indexes are 10 MiB: a deep Buffer compare would take minutes). */
function treeHashes(dir: string): Map<string, string> {
  return new Map([...readTree(dir)].map(([name, bytes]) => [name, createHash('sha256').update(bytes).digest('hex')]));
}

/** A kill -9 left data directory whose batches carry producer id 4321, with `content` as its broker-producer-id. */
async function withProducerIdFile(name: string, content: Buffer): Promise<{ dataDir: string; file: string }> {
  const dataDir = tempDir(name);
  dirs.push(dataDir);
  await writeUncleanDataDir(dataDir, 60, PRODUCER_ID);
  const file = path.join(dataDir, PRODUCER_ID_FILE);
  writeFileSync(file, content);
  return { dataDir, file };
}

/** A v1 file for 5000 with one digit flipped to 0000: the CRC no longer matches, and the legible value would reuse ids. */
function flippedDigit(): Buffer {
  return Buffer.from(formatProducerIdFile(5000).toString('latin1').replace('next=5000', 'next=0000'), 'latin1');
}

describe('broker-producer-id', () => {
  it('damaged: verify reports it (exit 1); recover --dry-run changes nothing; recover rewrites it above the logs; verify exits 0', async () => {
    const { dataDir, file } = await withProducerIdFile('pid-damaged', flippedDigit());
    const verify = await runSeglog(['verify', dataDir]);
    expect(verify.stdout).toMatch(new RegExp(`^problem: ${file}: damaged: checksum mismatch \\(stored crc32c [0-9a-f]{8}, computed [0-9a-f]{8}\\); ` +
      `a broker refuses to start on this directory; seglog recover rewrites it at a safe id \\(above the highest producer id in the logs, ${PRODUCER_ID}, plus a margin\\)$`, 'm'));
    expect(verify.stdout).toMatch(/: 1 problems \(damage\)/);
    expect(verify.code).toBe(1);

    const before = treeHashes(dataDir);
    const dry = await runSeglog(['recover', '--dry-run', dataDir]);
    const expectedNext = 5000 + PRODUCER_ID_REPAIR_MARGIN; // the old legible 0000 is below the logs: above 4321, block 5000
    expect(dry.stdout).toContain(`${PRODUCER_ID_FILE}: would rewrite (damaged: checksum mismatch`);
    expect(dry.stdout).toContain(`next producer id ${expectedNext}, above the highest producer id in the logs' batches and snapshots (${PRODUCER_ID}) and the old next id 0`);
    expect(dry.code).toBe(0);
    expect(treeHashes(dataDir)).toEqual(before);

    const recover = await runSeglog(['recover', dataDir]);
    expect(recover.stdout).toContain(`${PRODUCER_ID_FILE}: rewrote (damaged: checksum mismatch`);
    expect(recover.stdout).not.toContain('remaining problem');
    expect(recover.code).toBe(0);
    const content = parseProducerIdFile(readFileSync(file));
    expect(content).toEqual({ kind: 'ok', next: expectedNext, legacy: false });
    const again = await runSeglog(['verify', dataDir]);
    expect(again.stdout).toContain('OK, no problems');
    expect(again.code).toBe(0);
  });

  it('a valid file whose next id is not above the logs\' producer ids is a problem too, and recover moves it up', async () => {
    const { dataDir, file } = await withProducerIdFile('pid-low', formatProducerIdFile(1000));
    const verify = await runSeglog(['verify', dataDir]);
    expect(verify.stdout).toContain(`problem: ${file}: next producer id 1000 is not above producer id ${PRODUCER_ID} in the logs: a broker would hand out an id already used`);
    expect(verify.code).toBe(1);
    const recover = await runSeglog(['recover', dataDir]);
    expect(recover.code).toBe(0);
    expect(parseProducerIdFile(readFileSync(file))).toEqual({ kind: 'ok', next: 5000 + PRODUCER_ID_REPAIR_MARGIN, legacy: false });
  });

  it('recover refuses to rewrite it while damage in the logs hides producer ids, and says why (exit 1)', async () => {
    const dataDir = tempDir('pid-refuse');
    dirs.push(dataDir);
    const w = await writeDataDir(dataDir);
    const file = path.join(dataDir, PRODUCER_ID_FILE);
    writeFileSync(file, 'garbage\n');
    const sealed = logFiles(w.partitionDir)[0] as string;
    const bytes = readFileSync(sealed);
    bytes[80] = (bytes[80] as number) ^ 0x5a; // a CRC mismatch in a segment below the recovery point: recovery does not rescan it
    writeFileSync(sealed, bytes);
    const recover = await runSeglog(['recover', dataDir]);
    expect(recover.stdout).toContain(`${PRODUCER_ID_FILE}: not rewritten (damaged: not "seglog-producer-id v1<id> crc32c=<hex>"`.replace('v1<id>', 'v1 next=<id>'));
    expect(recover.stdout).toContain('1 problems remain in the logs\' batches or snapshots, so the producer ids they hold are not all known');
    expect(recover.stdout).toContain(`remaining problem: ${PRODUCER_ID_FILE}: damaged`);
    expect(recover.code).toBe(1);
    expect(readFileSync(file, 'utf8')).toBe('garbage\n');
  });
});
