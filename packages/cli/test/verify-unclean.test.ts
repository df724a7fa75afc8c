// `seglog verify` after an unclean stop (issue 23 item 5): a data directory
// written by a child process that dies by SIGKILL with every batch durable
// (unclean-writer.ts). What such a stop leaves — no clean-shutdown
// marker, the zero-filled preallocated tail of the active .log, preallocated
// .index/.timeindex files — is "recovery:", not damage: verify exits 0 and
// says what recovery will do; real damage in the same directory is still a
// "problem:" and exits 1.

import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { logFiles, removeDir, runSeglog, tempDir, writeUncleanDataDir } from './helpers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});

async function unclean(name: string): Promise<{ dataDir: string; partitionDir: string; logEndOffset: number }> {
  const dataDir = tempDir(name);
  dirs.push(dataDir);
  const logEndOffset = await writeUncleanDataDir(dataDir, 200);
  return { dataDir, partitionDir: path.join(dataDir, 'orders-0'), logEndOffset };
}

/** Position after the last whole batch of a preallocated .log (the first all-zero header). */
function dataEnd(file: string): number {
  const bytes = readFileSync(file);
  let position = 0;
  while (position + 12 <= bytes.length && bytes.readInt32BE(position + 8) > 0) position += bytes.readInt32BE(position + 8) + 12;
  return position;
}

const lines = (text: string): string[] => text.trimEnd().split('\n');

describe('verify after an unclean stop (kill -9, every record intact)', () => {
  it('reports no damage, says recovery will cut the zero tail and rebuild the indexes, exits 0; recover then leaves it clean', async () => {
    const u = await unclean('unclean-intact');
    const active = logFiles(u.partitionDir).at(-1) as string;
    const end = dataEnd(active);
    const size = statSync(active).size;
    expect(size).toBeGreaterThan(end); // the preallocated tail is there
    const index = active.replace(/\.log$/, '.index');
    expect(statSync(index).size).toBe(10 * 1024 * 1024); // a preallocated index, as a running log holds it

    const verify = await runSeglog(['verify', u.dataDir]);
    expect(verify.stdout.split('\n').filter((l) => l.startsWith('problem:'))).toEqual([]);
    expect(verify.stdout).not.toMatch(/more problems/);
    expect(verify.stdout).toContain(`recovery: ${u.dataDir}/.kafka_cleanshutdown: no clean-shutdown marker`);
    expect(verify.stdout).toContain(`recovery: ${active} position ${end}: end of data at position ${end}: ${size - end} zero bytes follow (preallocated, never written): ` +
      `expected after an unclean stop: recovery will cut ${size - end} bytes at position ${end} (${size} → ${end} bytes)`);
    expect(verify.stdout).toMatch(new RegExp(`^recovery: ${index}: \\d+ zero-filled slots \\(preallocated, never written\\): expected after an unclean stop: recovery will rebuild this index from the \\.log \\(\\d+ of 1310720 entries are valid now\\)$`, 'm'));
    expect(lines(verify.stdout).length).toBeLessThan(10); // one line per file, not one per slot
    expect(lines(verify.stdout).at(-1)).toBe(`verified 1 partitions, 4 segments, 200 batches: no damage; needs recovery after an unclean stop (expected, 4 recovery findings): ` +
      `the next broker start, or pnpm seglog recover ${u.dataDir}, repairs them`);
    expect(verify.code).toBe(0);

    const json = await runSeglog(['verify', '--json', u.dataDir]);
    expect(JSON.parse(lines(json.stdout).at(-1) as string)).toMatchObject({ type: 'summary', problems: 0, recovery: 4, needsRecovery: true });
    expect(json.code).toBe(0);

    // What verify predicted is what recovery does: the tail cut at the data end, every record kept.
    const recover = await runSeglog(['recover', u.dataDir]);
    expect(recover.stdout).toContain(`orders-0 (log end offset ${u.logEndOffset}):`);
    expect(recover.stdout).toContain(`${path.basename(active)}: cut ${size - end} bytes at position ${end}`);
    expect(recover.code).toBe(0);
    const again = await runSeglog(['verify', u.dataDir]);
    expect(lines(again.stdout).at(-1)).toBe('verified 1 partitions, 4 segments, 200 batches: OK, no problems');
    expect(again.code).toBe(0);
  });

  it('still reports real damage in the same directory as problems and exits 1', async () => {
    const u = await unclean('unclean-damaged');
    const [sealed] = logFiles(u.partitionDir);
    const bytes = readFileSync(sealed as string);
    const position = bytes.readInt32BE(8) + 12; // the second batch
    bytes[position + 70] = (bytes[position + 70] as number) ^ 0x5a;
    writeFileSync(sealed as string, bytes);
    const active = logFiles(u.partitionDir).at(-1) as string;
    // A sealed segment's index (flushed at its roll; the active segment's entries are written back a page at a
    // time, so after this kill -9 its file holds none: recovery work, not damage).
    const index = (logFiles(u.partitionDir)[1] as string).replace(/\.log$/, '.index');
    const indexBytes = readFileSync(index);
    indexBytes.writeInt32BE(indexBytes.readInt32BE(12) + 1, 12); // entry 1, inside the valid data: off by one
    writeFileSync(index, indexBytes);

    const verify = await runSeglog(['verify', u.dataDir]);
    expect(verify.stdout).toMatch(new RegExp(`^problem: ${sealed} position ${position} offset 2: CRC mismatch in batch 2\\.\\.3`, 'm'));
    expect(verify.stdout).toMatch(new RegExp(`^problem: ${index} position \\d+ offset \\d+: entry 1 points at position \\d+, which is not the start of a batch$`, 'm'));
    expect(verify.stdout).toContain(`recovery: ${active} position`); // the expected part is still told apart
    expect(lines(verify.stdout).at(-1)).toMatch(/: 2 problems \(damage\); also needs recovery after an unclean stop/);
    expect(verify.code).toBe(1);
  });

  it('a partial last batch (a write torn by the crash) is recovery work above the recovery point, damage below it', async () => {
    const u = await unclean('unclean-torn');
    const active = logFiles(u.partitionDir).at(-1) as string;
    const end = dataEnd(active);
    const bytes = readFileSync(active);
    let last = 0;
    for (let position = 0; position < end; position += bytes.readInt32BE(position + 8) + 12) last = position;
    const lastBase = Number(bytes.readBigInt64BE(last));
    truncateSync(active, last + 40); // the last batch cut short, as a torn write leaves it (no zero tail after it)

    const torn = await runSeglog(['verify', u.dataDir]);
    expect(torn.stdout).toContain(`recovery: ${active} position ${last} offset ${lastBase}: torn tail at position ${last}: 40 bytes of a partial batch`);
    expect(torn.stdout).toContain(`expected after an unclean stop: recovery will cut 40 bytes at position ${last} (${last + 40} → ${last} bytes)`);
    expect(torn.code).toBe(0);

    // The last checkpoint said everything up to the log end was durable: the same tail is now lost durable data.
    writeFileSync(path.join(u.dataDir, 'recovery-point-offset-checkpoint'), `0\n1\norders 0 ${u.logEndOffset}\n`);
    const below = await runSeglog(['verify', u.dataDir]);
    expect(below.stdout).toContain(`problem: ${active} position ${last} offset ${lastBase}: torn tail at position ${last}: 40 bytes of a partial batch`);
    expect(below.code).toBe(1);
  });
});
