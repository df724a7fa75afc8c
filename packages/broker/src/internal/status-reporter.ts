// StatusReporter: one line every intervalMs with the rates since the last
// line (appends/s, MB/s in, fetches/s, MB/s out), open connections and
// partitions, and the descriptors: `fds <open>/<limit>` (Linux; the limit
// only when known) and the handle cache's `cache <open>/<max>` idle
// sealed-segment descriptors, then the sealed indexes' memory `index
// <used>/<budget> MiB`. An unref'd timer: it never keeps the process alive.

import type { BrokerStats } from './broker-context.js';
import { countOpenDescriptors } from './fd-budget.js';
import type { TopicStore } from './topic-store.js';

export class StatusReporter {
  private readonly stats: BrokerStats;
  private readonly store: TopicStore;
  private readonly intervalMs: number;
  private readonly log: (line: string) => void;
  private timer: NodeJS.Timeout | null;
  private last: { at: number; appends: number; appendedBytes: number; fetches: number; fetchedBytes: number };

  constructor(stats: BrokerStats, store: TopicStore, intervalMs: number, log: (line: string) => void) {
    this.stats = stats;
    this.store = store;
    this.intervalMs = intervalMs;
    this.log = log;
    this.timer = null;
    this.last = { at: Date.now(), appends: 0, appendedBytes: 0, fetches: 0, fetchedBytes: 0 };
  }

  start(): void {
    this.last = { at: Date.now(), ...this.counters() };
    this.timer = setInterval(() => this.report(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private counters(): { appends: number; appendedBytes: number; fetches: number; fetchedBytes: number } {
    const s = this.stats;
    return { appends: s.appends, appendedBytes: s.appendedBytes, fetches: s.fetches, fetchedBytes: s.fetchedBytes };
  }

  /** `, fds 57/20000 (cache 3/1000)`: empty in blackhole mode off Linux. */
  private descriptors(): string {
    const open = countOpenDescriptors();
    const limit = this.store.fdBudget?.limit ?? null;
    const fds = open === null ? '' : `, fds ${open}${limit === null ? '' : `/${limit}`}`;
    const handles = this.store.logManager?.handleStats() ?? null;
    const cache = handles === null ? '' : ` (cache ${handles.open}/${handles.maxOpenFiles})`;
    const index = this.store.logManager?.indexStats() ?? null;
    const mib = (n: number): string => (n / 1048576).toFixed(1);
    const indexes = index === null ? '' : `, index ${mib(index.usedBytes)}/${Number.isFinite(index.budgetBytes) ? mib(index.budgetBytes) : 'unbounded'} MiB`;
    return fds === '' && cache === '' ? indexes : `${fds === '' ? ',' : fds}${cache}${indexes}`;
  }

  private report(): void {
    const now = Date.now();
    const c = this.counters();
    const seconds = Math.max(0.001, (now - this.last.at) / 1000);
    const rate = (n: number): string => (n / seconds).toFixed(0);
    const mbps = (n: number): string => (n / seconds / 1e6).toFixed(2);
    let partitions = 0;
    for (const log of this.store.allLogs()) if (log !== undefined) partitions++;
    this.log(
      `status: ${rate(c.appends - this.last.appends)} appends/s, ${mbps(c.appendedBytes - this.last.appendedBytes)} MB/s in, ` +
      `${rate(c.fetches - this.last.fetches)} fetches/s, ${mbps(c.fetchedBytes - this.last.fetchedBytes)} MB/s out, ` +
      `${this.stats.connections} connections, ${partitions} partitions${this.descriptors()}`,
    );
    this.last = { at: now, ...c };
  }
}
