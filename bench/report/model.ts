// The report's data model: every figure keeps its raw samples (one per run),
// its median and min-max are derived from them, and the sections add tables,
// charts and notes that report.ts renders to markdown, JSON and SVG.
import { median } from '../lib/harness.js';

export interface Figure {
  /** Stable key, e.g. 'append.direct.1KiB.1MiB.p1.MBps' (the JSON's and the headline's handle). */
  readonly key: string;
  readonly unit: string;
  /** One value per run. */
  readonly samples: number[];
}

export interface Stat { readonly median: number; readonly min: number; readonly max: number }

export function stat(samples: readonly number[]): Stat {
  if (samples.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN };
  return { median: median(samples), min: Math.min(...samples), max: Math.max(...samples) };
}

export interface Table { readonly caption: string; readonly header: readonly string[]; readonly rows: string[][] }

export interface Section {
  readonly id: string;
  readonly title: string;
  /** What was measured and how (parameters). */
  readonly method: string;
  readonly tables: Table[];
  /** File names (in the output directory) of this section's charts. */
  readonly charts: string[];
  readonly notes: string[];
}

export interface BarItem { readonly label: string; readonly stat: Stat; readonly group?: string }

export class Report {
  readonly figures = new Map<string, Figure>();
  readonly sections: Section[] = [];
  readonly charts = new Map<string, string>();
  readonly raw: Record<string, unknown> = {};

  section(id: string, title: string, method: string): Section {
    const s: Section = { id, title, method, tables: [], charts: [], notes: [] };
    this.sections.push(s);
    return s;
  }

  /** Records a figure's samples (appends when the key exists) and returns it. */
  figure(key: string, unit: string, samples: readonly number[]): Figure {
    const existing = this.figures.get(key);
    if (existing !== undefined) {
      existing.samples.push(...samples);
      return existing;
    }
    const f: Figure = { key, unit, samples: [...samples] };
    this.figures.set(key, f);
    return f;
  }

  /** The median of a figure, NaN when it was not measured (a section skipped or failed). */
  med(key: string): number {
    const f = this.figures.get(key);
    return f === undefined ? Number.NaN : stat(f.samples).median;
  }

  has(key: string): boolean {
    return this.figures.has(key);
  }

  chart(section: Section, name: string, svg: string): void {
    this.charts.set(name, svg);
    section.charts.push(name);
  }
}

// ---- formatting --------------------------------------------------------------

export function num(v: number, digits = 0): string {
  if (!Number.isFinite(v)) return 'n/a';
  if (Math.abs(v) >= 1e6 && digits === 0) return `${(v / 1e6).toFixed(2)}M`;
  if (Math.abs(v) >= 1e4 && digits === 0) return `${(v / 1e3).toFixed(1)}k`;
  return v.toFixed(digits);
}

/** "median (min–max)" with a scale and digits. */
export function fmt(samples: readonly number[], scale = 1, digits = 0): string {
  const s = stat(samples);
  if (samples.length === 1) return num(s.median / scale, digits);
  return `${num(s.median / scale, digits)} (${num(s.min / scale, digits)}–${num(s.max / scale, digits)})`;
}

export function ratio(a: number, b: number, digits = 2): string {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return 'n/a';
  return `${(a / b).toFixed(digits)}x`;
}

export function pct(part: number, whole: number): string {
  if (!Number.isFinite(part) || !Number.isFinite(whole) || whole === 0) return 'n/a';
  return `${((100 * part) / whole).toFixed(0)}%`;
}

export function size(n: number): string {
  return n >= 1024 * 1024 ? `${n / (1024 * 1024)} MiB` : n >= 1024 ? `${n / 1024} KiB` : `${n} B`;
}

export function markdownTable(t: Table): string {
  const esc = (c: string): string => c.replace(/\|/g, '\\|');
  const lines = [`| ${t.header.map(esc).join(' | ')} |`, `|${t.header.map((_, i) => (i === 0 ? '---' : '--:')).join('|')}|`];
  for (const row of t.rows) lines.push(`| ${row.map(esc).join(' | ')} |`);
  return (t.caption === '' ? '' : `${t.caption}\n\n`) + lines.join('\n');
}

// ---- charts (hand-written SVG) ----------------------------------------------

const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];

function xmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Horizontal bars (median) with min–max whiskers; bars of one group share a colour. */
export function barChart(title: string, unit: string, items: readonly BarItem[]): string {
  const labelW = 300, barW = 420, rowH = 20, top = 34, right = 90;
  const finite = items.filter((i) => Number.isFinite(i.stat.max));
  const maxV = Math.max(1e-9, ...finite.map((i) => i.stat.max)) * 1.05;
  const groups = [...new Set(items.map((i) => i.group ?? ''))];
  const height = top + items.length * rowH + 30;
  const x = (v: number): number => labelW + (barW * v) / maxV;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${labelW + barW + right}" height="${height}" font-family="sans-serif" font-size="11">`);
  out.push('<rect width="100%" height="100%" fill="white"/>');
  out.push(`<text x="8" y="16" font-size="13" font-weight="bold">${xmlEscape(title)}</text>`);
  for (let t = 0; t <= 4; t++) {
    const v = (maxV * t) / 4;
    out.push(`<line x1="${x(v).toFixed(1)}" y1="${top - 4}" x2="${x(v).toFixed(1)}" y2="${top + items.length * rowH}" stroke="#ddd"/>`);
    out.push(`<text x="${x(v).toFixed(1)}" y="${top + items.length * rowH + 14}" text-anchor="middle" fill="#555">${num(v, v < 10 ? 1 : 0)}</text>`);
  }
  out.push(`<text x="${labelW + barW / 2}" y="${height - 4}" text-anchor="middle" fill="#555">${xmlEscape(unit)} (bar: median; whisker: min–max over runs)</text>`);
  items.forEach((item, i) => {
    const y = top + i * rowH;
    const color = PALETTE[groups.indexOf(item.group ?? '') % PALETTE.length]!;
    out.push(`<text x="${labelW - 6}" y="${y + 13}" text-anchor="end">${xmlEscape(item.label)}</text>`);
    if (!Number.isFinite(item.stat.median)) return;
    out.push(`<rect x="${labelW}" y="${y + 3}" width="${Math.max(0, x(item.stat.median) - labelW).toFixed(1)}" height="${rowH - 6}" fill="${color}" opacity="0.8"/>`);
    out.push(`<line x1="${x(item.stat.min).toFixed(1)}" y1="${y + rowH / 2}" x2="${x(item.stat.max).toFixed(1)}" y2="${y + rowH / 2}" stroke="#000"/>`);
    for (const v of [item.stat.min, item.stat.max]) out.push(`<line x1="${x(v).toFixed(1)}" y1="${y + 6}" x2="${x(v).toFixed(1)}" y2="${y + rowH - 6}" stroke="#000"/>`);
    out.push(`<text x="${(x(item.stat.max) + 4).toFixed(1)}" y="${y + 13}" fill="#333">${num(item.stat.median, item.stat.median < 10 ? 2 : 0)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}
