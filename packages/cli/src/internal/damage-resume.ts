// Where reads resume after framing damage in a segment, as the engine finds
// it (surveyDamage from @seglog/log, the survey a damaged fetch runs): verify
// says it next to the damage, so the CLI and the broker describe the same
// bytes the same way (issue 23 0c). Read only.

import type { Io } from '@seglog/io';
import { surveyDamage } from '@seglog/log';

export interface ResumeAfterDamage {
  /** Position of the first damaged byte the survey found. */
  readonly position: number;
  readonly resumePosition: number;
  /** Offsets [firstOffset, nextOffset) cannot be read. */
  readonly firstOffset: number;
  readonly nextOffset: number;
  /** No batch after the damage is readable. */
  readonly atEnd: boolean;
}

/** The damaged range where a scan stopped (`position`) in `file`, as the engine's survey sees it; null if it finds none. */
export async function resumeAfterDamage(io: Io, file: string, bounds: { baseOffset: number; nextBase: number; position: number }): Promise<ResumeAfterDamage | null> {
  const handle = await io.open(file, { readOnly: true });
  try {
    const limit = await handle.size();
    const ranges = await surveyDamage(handle, { baseOffset: bounds.baseOffset, limit, limitOffset: bounds.nextBase });
    // The range the scan stopped in, or the last one before it (a damaged length framed a wrong batch first).
    const range = ranges.find((r) => r.position <= bounds.position && bounds.position < r.resumePosition)
      ?? ranges.filter((r) => r.position <= bounds.position).at(-1) ?? ranges[0];
    if (range === undefined) return null;
    return { ...range, atEnd: range.resumePosition >= limit };
  } finally {
    await handle.close();
  }
}
