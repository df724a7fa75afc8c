// Regression: SimIo kept a VIEW of the caller's buffer as a pending write, so
// a writer that reused its buffer after the write completed (the direct
// writer's staging chunks) changed what a later fdatasync made durable. Found
// by the reliability suite (direct-mode crash points with VERIFY poisoning
// released chunks).
import { describe, expect, it } from 'vitest';
import { CrashMode, SimIo } from '@seglog/io';

describe('SimIo buffer ownership', () => {
  for (const mode of [CrashMode.process, 'power-clean', 'power-ordered'] as const) {
    it(`a completed write is unaffected by later changes to the caller's buffer (${mode})`, async () => {
      const io = new SimIo({ seed: 1 });
      await io.mkdir('/d', { recursive: true });
      await io.fsyncDir('/');
      const f = await io.open('/d/a', { create: true });
      await io.fsyncDir('/d');
      const buf = Buffer.alloc(4096, 0x11);
      await f.pwrite(buf.subarray(0, 1024), 0);
      buf.fill(0xa5); // the writer reuses its staging memory
      await f.fdatasync();
      const again = io.recover(mode);
      const bytes = await again.readFile('/d/a');
      expect(bytes.length).toBe(1024);
      expect(bytes.every((b) => b === 0x11)).toBe(true);
    });
  }
});
