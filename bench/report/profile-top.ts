// `node --import tsx bench/report/profile-top.ts FILE.cpuprofile [N]`: the top N
// functions by self time of a V8 CPU profile (node --cpu-prof), with their
// share of the sampled time, and the top N by inclusive time. A small tool
// for the report's "why is this figure far from its reference" notes.
import { readFileSync } from 'node:fs';

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[] }

const file = process.argv[2];
const top = Number(process.argv[3] ?? 25);
if (file === undefined) {
  console.error('usage: profile-top.ts FILE.cpuprofile [N]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const label = (n: Node): string => {
  const f = n.callFrame;
  const where = f.url === '' ? '' : ` ${f.url.replace(/^.*\/(packages|bench|node_modules)\//, '$1/').replace(/^node:/, 'node:')}:${f.lineNumber + 1}`;
  return `${f.functionName || '(anonymous)'}${where}`;
};
const self = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
for (const [id, us] of selfUs) {
  total += us;
  const n = byId.get(id)!;
  self.set(label(n), (self.get(label(n)) ?? 0) + us);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(byId.get(cur)!);
    if (seen.has(l)) continue;
    seen.add(l);
    inclusive.set(l, (inclusive.get(l) ?? 0) + us);
  }
}
const print = (title: string, m: Map<string, number>): void => {
  console.log(`\n${title} (of ${(total / 1000).toFixed(0)} ms sampled)`);
  for (const [l, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${l}`);
};
print('self time', self);
print('inclusive time', inclusive);
