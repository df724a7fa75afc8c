// `pnpm bench:report --quick` runs in `pnpm test` (tiny parameters, one run
// per figure, ~5-15 s) so the report never rots: it must exit 0, fill every
// section and write report.md, report.json (raw samples) and its SVGs.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

describe('bench:report smoke', () => {
  it('produces the report with every section', () => {
    const out = mkdtempSync(path.join(os.tmpdir(), 'seglog-report-test-'));
    try {
      const r = spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', 'bench/report.ts', '--quick', '--out', out], {
        cwd: root, encoding: 'utf8', timeout: 540_000,
      });
      expect(r.stderr).not.toMatch(/FAILED|Error/);
      expect(r.status).toBe(0);
      const md = readFileSync(path.join(out, 'report.md'), 'utf8');
      expect(r.stdout).toContain('# seglog benchmark report');
      for (const title of ['## Headline', '## Disk limits', '## Appends', '## Durable appends', '## Reads', '## Fetch', '## End to end', '## Hot path vs plain files']) expect(md).toContain(title);
      const json = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8')) as { figures: Record<string, { samples: number[]; median: number }>; failures: string[] };
      expect(json.failures).toEqual([]);
      for (const key of ['disk.directWrite.MBps', 'append.direct.1KiB.1MiB.p1.MBps', 'durable.buffered.p16.batchesPerFsync', 'read.cache.MBps', 'e2e.storage.p3.recps', 'hotpath.append.buffered.recps', 'hotpath.durable.raw.p50us']) {
        expect(json.figures[key]?.samples.length).toBe(1);
        expect(json.figures[key]!.median).toBeGreaterThan(0);
      }
      expect(readdirSync(out).filter((f) => f.endsWith('.svg')).length).toBe(6);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
