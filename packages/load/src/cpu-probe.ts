// CPU time of the broker over the produce phase. Two sources:
//  - 'process': process.cpuUsage() of this process, for a broker running
//    in-process. It includes the load client's own CPU (same process), so it
//    is an upper bound on the broker's share.
//  - 'pid': utime + stime of an external broker from /proc/<pid>/stat
//    (fields 14 and 15, in clock ticks; USER_HZ is 100 on Linux).
// /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may contain spaces and
// parentheses, so fields are counted from the last ')'.

import { readFileSync } from 'node:fs';

const USER_HZ = 100;

export interface CpuSample {
  readonly userMs: number;
  readonly systemMs: number;
}

export type CpuScope = 'process' | 'pid';

export function readProcStatCpu(pid: number): CpuSample | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const fields = text.slice(close + 2).split(' ');
  // After "(comm) ": state is field 3, so utime (14) and stime (15) are at indexes 11 and 12.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return null;
  return { userMs: (utime * 1000) / USER_HZ, systemMs: (stime * 1000) / USER_HZ };
}

export class CpuProbe {
  readonly scope: CpuScope;
  private readonly pid: number;
  private readonly start: CpuSample | null;

  private constructor(scope: CpuScope, pid: number) {
    this.scope = scope;
    this.pid = pid;
    this.start = this.sample();
  }

  static ofProcess(): CpuProbe {
    return new CpuProbe('process', process.pid);
  }

  static ofPid(pid: number): CpuProbe {
    return new CpuProbe('pid', pid);
  }

  /** CPU spent since the probe was made, or null if the pid could not be read. */
  elapsed(): CpuSample | null {
    const end = this.sample();
    if (end === null || this.start === null) return null;
    return { userMs: end.userMs - this.start.userMs, systemMs: end.systemMs - this.start.systemMs };
  }

  private sample(): CpuSample | null {
    if (this.scope === 'pid') return readProcStatCpu(this.pid);
    const usage = process.cpuUsage();
    return { userMs: usage.user / 1000, systemMs: usage.system / 1000 };
  }
}
