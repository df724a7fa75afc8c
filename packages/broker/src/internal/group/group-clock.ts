// GroupClock: the group coordinator's only source of time. The broker uses
// the system clock and node timers; the coordinator model test injects a
// simulated clock whose timers fire when the test advances it, so no verdict
// depends on elapsed time.

export interface GroupTimer {
  cancel(): void;
}

export interface GroupClock {
  /** Milliseconds since the epoch (the group records' timestamps). */
  now(): number;
  /** Calls `fire` once, `delayMs` from now, unless cancelled. */
  schedule(delayMs: number, fire: () => void): GroupTimer;
}

export const SYSTEM_CLOCK: GroupClock = {
  now: () => Date.now(),
  schedule: (delayMs, fire) => {
    const timer = setTimeout(fire, Math.max(0, delayMs));
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
};
