import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { jittered, WorkQueue } from './work-queue.ts';

// Fake timers: every delay below is the queue's own clock, not the machine's. With real timers these tests
// failed on a loaded machine (a 60 ms window for a hot key, the ratio of two back-off gaps), which is exactly
// where CI runs them beside the e2e suite.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A run's own delay: a timer on the fake clock, which the test moves. */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Moves the fake clock `ms` forward, running every timer and promise due meanwhile. */
const tick = (ms = 10) => vi.advanceTimersByTimeAsync(ms);

/** Moves the clock a millisecond at a time until `done`, for up to 10 s of queue time. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !done(); i++) await tick(1);
  expect(done()).toBe(true);
}

/** Awaits `p` while the clock moves (a shutdown waits out its grace on the queue's clock). */
async function settled<T>(p: Promise<T>): Promise<T> {
  let done = false;
  void p.finally(() => (done = true)).catch(() => undefined);
  await until(() => done);
  return p;
}

describe('WorkQueue', () => {
  it('a run that only waits gives its slot to the next key, and still requeues and shuts down in order', async () => {
    const started: string[] = [];
    let finishWait: () => void = () => undefined;
    const waited = new Promise<void>((r) => (finishWait = r));
    const q = new WorkQueue(
      async (key, _signal, _superseded, onlyWaiting) => {
        started.push(key);
        if (key === 'slow') {
          onlyWaiting();
          await waited;
        }
        return { failed: false };
      },
      { concurrency: 1 },
    );
    q.add('slow');
    q.add('next');
    // one slot: 'next' starts only because 'slow' gave its slot back while it waits
    await until(() => started.includes('next'));
    expect(started).toEqual(['slow', 'next']);
    expect(q.depth).toBe(1);
    // the waiting run is still this key's only run: another add marks it dirty instead of starting it twice
    q.add('slow');
    await tick(20);
    expect(started.filter((k) => k === 'slow')).toHaveLength(1);
    finishWait();
    await until(() => started.filter((k) => k === 'slow').length === 2);
    await settled(q.shutdown(100));
  });

  it('keeps the slot of a run past maxWaiting: waiting outside slots is bounded', async () => {
    const started: string[] = [];
    const gates = new Map<string, () => void>();
    const q = new WorkQueue(
      async (key, _signal, _superseded, onlyWaiting) => {
        started.push(key);
        onlyWaiting();
        await new Promise<void>((r) => gates.set(key, r));
        return { failed: false };
      },
      { concurrency: 1, maxWaiting: 1 },
    );
    for (const k of ['a', 'b', 'c']) q.add(k);
    await until(() => started.length === 2);
    await tick(30);
    // 'a' waits outside the pool, 'b' keeps the only slot: 'c' waits for one
    expect(started).toEqual(['a', 'b']);
    gates.get('a')!();
    await until(() => gates.has('b'));
    gates.get('b')!();
    await until(() => started.length === 3);
    gates.get('c')!();
    await settled(q.shutdown(100));
  });

  it('shutdown waits for a run that waits outside a slot', async () => {
    let ended = false;
    const q = new WorkQueue(
      async (_key, signal, _superseded, onlyWaiting) => {
        onlyWaiting();
        await new Promise<void>((r) => signal.addEventListener('abort', () => r()));
        ended = true;
        return { failed: false };
      },
      { concurrency: 1 },
    );
    q.add('a');
    await tick(20);
    await settled(q.shutdown(10));
    expect(ended).toBe(true);
  });

  it('coalesces a burst of adds for one key into one run', async () => {
    const runs: string[] = [];
    const q = new WorkQueue(async (key) => (runs.push(key), { failed: false }), { concurrency: 2 });
    for (let i = 0; i < 10; i++) q.add('a');
    await tick(50);
    expect(runs).toEqual(['a']);
    await settled(q.shutdown(100));
  });

  it('never runs one key twice at once, and re-runs once if it changed meanwhile', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    let runs = 0;
    const q = new WorkQueue(
      async () => {
        inFlight++;
        runs++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await sleep(30);
        inFlight--;
        return { failed: false };
      },
      { concurrency: 4 },
    );
    q.add('a');
    // "meanwhile" = while the first run is in flight: wait for it to start (a loaded machine may take a while)
    await until(() => inFlight === 1);
    q.add('a');
    q.add('a');
    await until(() => runs === 2 && inFlight === 0);
    await tick(60); // time for a third run, which must not come
    expect(maxInFlight).toBe(1);
    expect(runs).toBe(2);
    await settled(q.shutdown(100));
  });

  it('holds no entry of a key forgotten while it ran (a deleted unit: its finalizer goes in that run)', async () => {
    let inFlight = 0;
    let runs = 0;
    const q = new WorkQueue(
      async () => {
        inFlight++;
        runs++;
        await sleep(20);
        inFlight--;
        return { failed: false, requeueAfterMs: 60_000 };
      },
      { concurrency: 4 },
    );
    for (let i = 0; i < 20; i++) q.add(`k${i}`);
    await until(() => inFlight > 0);
    for (let i = 0; i < 20; i++) q.forget(`k${i}`);
    await until(() => runs === 20 && inFlight === 0);
    await tick(20);
    expect(q.size).toBe(0);
    // added again while it ran (re-created under the same name): kept and run again
    q.add('again');
    await until(() => inFlight === 1);
    q.forget('again');
    q.add('again');
    await until(() => runs === 22);
    expect(q.size).toBe(1);
    await settled(q.shutdown(100));
  });

  it('bounds concurrency across keys', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const q = new WorkQueue(
      async () => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await sleep(20);
        inFlight--;
        return { failed: false };
      },
      { concurrency: 3 },
    );
    for (let i = 0; i < 10; i++) q.add(`k${i}`);
    await tick(150);
    expect(maxInFlight).toBe(3);
    await settled(q.shutdown(100));
  });

  it('requeues after the returned interval, and backs off exponentially on failure', async () => {
    const times: number[] = [];
    const start = Date.now();
    const q = new WorkQueue(async () => (times.push(Date.now() - start), { failed: true, requeueAfterMs: 20 }), {
      concurrency: 1,
    });
    q.add('a');
    await tick(260);
    await settled(q.shutdown(50));
    // 0, ~20, ~40, ~80 (±20 % jitter): gaps grow
    expect(times.length).toBeGreaterThanOrEqual(3);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(gaps[1]!).toBeGreaterThan(gaps[0]! * 1.3);
  });

  it('a hot key does not starve the others', async () => {
    const runs: string[] = [];
    const q = new WorkQueue(
      async (key) => {
        runs.push(key);
        await sleep(5);
        return { failed: false };
      },
      { concurrency: 1 },
    );
    q.add('hot');
    for (let i = 0; i < 20; i++) q.add('hot');
    q.add('cold');
    await tick(60);
    expect(runs).toContain('cold');
    expect(runs.filter((k) => k === 'hot').length).toBeLessThanOrEqual(2);
    await settled(q.shutdown(50));
  });

  it('supersede aborts the run in flight and runs the key again right after it', async () => {
    const seen: { run: number; aborted: boolean }[] = [];
    let run = 0;
    const q = new WorkQueue(
      async (_key, _signal, superseded) => {
        const mine = ++run;
        // a reconcile waiting for health: it waits until told a newer revision is there
        await new Promise<void>((r) => {
          if (mine > 1) return r();
          superseded.addEventListener('abort', () => r());
        });
        seen.push({ run: mine, aborted: superseded.aborted });
        return { failed: false };
      },
      { concurrency: 2 },
    );
    q.add('a');
    await tick(10);
    q.supersede('a');
    await tick(30);
    expect(seen).toEqual([
      { run: 1, aborted: true },
      { run: 2, aborted: false },
    ]);
    q.supersede('b'); // nothing in flight: same as add
    await tick(10);
    expect(run).toBe(3);
    await settled(q.shutdown(50));
  });
});

describe('jittered (--interval-jitter-percentage)', () => {
  it.each([
    { ms: 600_000, fraction: 0.05, random: 0, want: 570_000 },
    { ms: 600_000, fraction: 0.05, random: 0.5, want: 600_000 },
    { ms: 600_000, fraction: 0.05, random: 0.999999, want: 630_000 },
    { ms: 600_000, fraction: 0, random: 0.9, want: 600_000 },
    { ms: 0, fraction: 0.05, random: 0.9, want: 0 },
  ])('$ms ms ± $fraction at $random → $want', ({ ms, fraction, random, want }) => {
    expect(jittered(ms, fraction, () => random)).toBe(want);
  });

  it('spreads a fleet requeued together over the window instead of one instant', async () => {
    const due: number[] = [];
    const q = new WorkQueue(async () => ({ failed: false, requeueAfterMs: 1_000 }), {
      concurrency: 50,
      intervalJitterPercent: 20,
    });
    const spy = (q as unknown as { schedule: (k: string, e: unknown, ms: number) => void }).schedule.bind(q);
    (q as unknown as { schedule: (k: string, e: unknown, ms: number) => void }).schedule = (k, e, ms) => {
      if (ms > 0) due.push(ms);
      spy(k, e, ms);
    };
    for (let i = 0; i < 50; i++) q.add(`k${i}`);
    await until(() => due.length === 50);
    expect(Math.min(...due)).toBeGreaterThanOrEqual(800);
    expect(Math.max(...due)).toBeLessThanOrEqual(1_200);
    expect(new Set(due).size).toBeGreaterThan(10);
    await settled(q.shutdown(100));
  });

  // ADR 0032: a run stuck past its budget (a request never answered, a promise never settled) gives its slot
  // back and is reported; the other keys keep running; its key never runs twice at once; shutdown does not wait
  // for it beyond its grace.
  it('a run past its budget gives its slot back, is reported until it ends, and never holds up shutdown', async () => {
    const started: string[] = [];
    const overdue: string[] = [];
    const ended: string[] = [];
    const q = new WorkQueue(
      async (key) => {
        started.push(key);
        if (key === 'stuck') await new Promise(() => undefined); // never settles, deaf to every signal
        return { failed: false, requeueAfterMs: 5 };
      },
      {
        concurrency: 1,
        budgetMs: (key) => (key === 'stuck' ? 30 : 10_000),
        onOverdue: (key) => overdue.push(key),
        onOverdueEnded: (key) => ended.push(key),
        abandonAfterAbortMs: 50,
      },
    );
    q.add('stuck');
    await until(() => started.includes('stuck'));
    q.add('a');
    q.add('b');
    // one worker, held by a run that never ends: a and b run only because the watchdog gave the slot back
    await until(() => started.filter((k) => k === 'a').length >= 3 && started.includes('b'));
    expect(overdue).toEqual(['stuck']);
    expect(q.overdue).toEqual(['stuck']);
    q.add('stuck');
    await tick(50);
    expect(started.filter((k) => k === 'stuck')).toHaveLength(1);
    const t = Date.now();
    await settled(q.shutdown(20));
    expect(Date.now() - t).toBeLessThan(1_000);
    expect(ended).toEqual([]);
  });

  it('an overdue run that ends at last is no longer reported, and its key runs again', async () => {
    let finish: () => void = () => undefined;
    const runs: string[] = [];
    const ended: string[] = [];
    const q = new WorkQueue(
      async (key) => {
        runs.push(key);
        if (runs.length === 1) await new Promise<void>((r) => (finish = r));
        return { failed: false };
      },
      { concurrency: 1, budgetMs: () => 20, onOverdueEnded: (key) => ended.push(key) },
    );
    q.add('k');
    await until(() => q.overdue.length === 1);
    q.add('k');
    finish();
    await until(() => runs.length === 2);
    expect(ended).toEqual(['k']);
    expect(q.overdue).toEqual([]);
    await settled(q.shutdown(100));
  });
});
