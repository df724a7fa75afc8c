// BlockingPool: bounded concurrency and queue, reserved budget, priority order, counters, close.
import { describe, expect, it } from 'vitest';
import { BlockingPool, IoError, Priority } from '../src/index.js';

/** A task that runs until its gate is opened. */
function gated(): { task: () => Promise<string>; open: () => void; started: () => boolean } {
  let open: () => void = () => {};
  let started = false;
  const gate = new Promise<void>((resolve) => (open = resolve));
  return {
    task: async () => {
      started = true;
      await gate;
      return 'done';
    },
    open: () => open(),
    started: () => started,
  };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('BlockingPool', () => {
  it('bounds running and queued work and says so synchronously', async () => {
    const pool = new BlockingPool({ concurrency: 2, maxQueued: 3 });
    const gates = Array.from({ length: 5 }, gated);
    const results = gates.map((g) => pool.submit(g.task, Priority.read));
    await tick();
    expect(pool.running).toBe(2);
    expect(pool.queued).toBe(3);
    expect(gates.map((g) => g.started())).toEqual([true, true, false, false, false]);
    expect(pool.hasRoom(Priority.flush)).toBe(false);
    let thrown: unknown;
    try {
      void pool.submit(async () => 'x', Priority.flush);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(IoError);
    expect(thrown).toMatchObject({ code: 'SEGLOG_ERR_IO_POOL_FULL', retriable: true });
    expect(pool.counters.rejected).toBe(1);
    for (const g of gates) g.open();
    expect(await Promise.all(results)).toEqual(['done', 'done', 'done', 'done', 'done']);
    await pool.onIdle();
    expect(pool.hasRoom(Priority.eviction)).toBe(true);
    expect(pool.counters).toMatchObject({ submitted: 5, completed: 5, failed: 0, rejected: 1 });
  });

  it('keeps reserved queue slots for flushes and rolls', async () => {
    const pool = new BlockingPool({ concurrency: 1, maxQueued: 3, reservedQueued: 1 });
    const blocker = gated();
    const all = [pool.submit(blocker.task, Priority.flush)];
    all.push(pool.submit(async () => 'e1', Priority.eviction));
    all.push(pool.submit(async () => 'c1', Priority.checkpoint));
    expect(pool.hasRoom(Priority.eviction)).toBe(false);
    expect(pool.hasRoom(Priority.append)).toBe(false);
    expect(() => pool.submit(async () => 'e2', Priority.eviction)).toThrow(expect.objectContaining({ code: 'SEGLOG_ERR_IO_POOL_FULL' }));
    expect(pool.hasRoom(Priority.roll)).toBe(true);
    all.push(pool.submit(async () => 'r1', Priority.roll));
    expect(pool.hasRoom(Priority.flush)).toBe(false);
    blocker.open();
    await Promise.all(all);
  });

  it('runs higher priorities first, equal priorities in submission order', async () => {
    const pool = new BlockingPool({ concurrency: 1, maxQueued: 10 });
    const blocker = gated();
    const order: string[] = [];
    const run = (name: string) => async () => void order.push(name);
    const all: Promise<unknown>[] = [pool.submit(blocker.task, Priority.read)];
    all.push(pool.submit(run('eviction'), Priority.eviction));
    all.push(pool.submit(run('append'), Priority.append));
    all.push(pool.submit(run('checkpoint'), Priority.checkpoint));
    all.push(pool.submit(run('flush'), Priority.flush));
    all.push(pool.submit(run('read'), Priority.read));
    all.push(pool.submit(run('roll'), Priority.roll));
    blocker.open();
    await Promise.all(all);
    expect(order).toEqual(['flush', 'roll', 'append', 'read', 'eviction', 'checkpoint']);
  });

  it('counts failures and waiting time, and passes errors through', async () => {
    const pool = new BlockingPool({ concurrency: 1, maxQueued: 5 });
    const boom = new Error('boom');
    const blocker = gated();
    const first = pool.submit(blocker.task, Priority.read);
    const failing = pool.submit(async () => {
      throw boom;
    }, Priority.read);
    await new Promise((resolve) => setTimeout(resolve, 20));
    blocker.open();
    await first;
    await expect(failing).rejects.toBe(boom);
    expect(pool.counters.failed).toBe(1);
    expect(pool.counters.completed).toBe(1);
    expect(pool.counters.waitMsMax).toBeGreaterThanOrEqual(15);
    expect(pool.counters.waitMsTotal).toBeGreaterThanOrEqual(pool.counters.waitMsMax);
  });

  it('close refuses new work and resolves once queued work is done', async () => {
    const pool = new BlockingPool({ concurrency: 1, maxQueued: 5 });
    const blocker = gated();
    const queued = [pool.submit(blocker.task, Priority.read), pool.submit(async () => 'after', Priority.read)];
    const closed = pool.close();
    expect(pool.closed).toBe(true);
    expect(pool.hasRoom(Priority.flush)).toBe(false);
    expect(() => pool.submit(async () => 'late', Priority.flush)).toThrow(expect.objectContaining({ code: 'SEGLOG_ERR_IO_POOL_CLOSED' }));
    let done = false;
    void closed.then(() => (done = true));
    await tick();
    expect(done).toBe(false);
    blocker.open();
    await closed;
    expect(await Promise.all(queued)).toEqual(['done', 'after']);
    expect(pool.running + pool.queued).toBe(0);
  });
});
