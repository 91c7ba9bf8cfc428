/**
 * The controller's work queue: one entry per PackageSync key, so a burst of events for one key is one
 * reconcile; at most one reconcile in flight per key (an event during it re-runs it once after); a
 * bounded number in flight overall (p-queue); timers for requeue-after and back-off. A hot key cannot
 * starve the others: it never holds more than one slot. A run that only waits (for its objects' health) gives
 * its slot back, so slow health checks do not hold up the packages behind them (docs/adr/0030). A run that
 * outlives its budget (spec.timeout and a margin: `budgetMs`) gives its slot back too, and is reported until it
 * ends: one stuck PackageSync never takes the workers of the others (docs/adr/0032).
 */
import PQueue from 'p-queue';

/**
 * `signal`: shutdown. `superseded`: a newer revision of this key arrived (see WorkQueue.supersede).
 * `onlyWaiting`: the run only waits from now on (for health): its slot may start another key meanwhile.
 */
export type Worker = (
  key: string,
  signal: AbortSignal,
  superseded: AbortSignal,
  onlyWaiting: () => void,
) => Promise<{ requeueAfterMs?: number; failed: boolean }>;

interface Entry {
  timer?: NodeJS.Timeout;
  dueAt?: number;
  running: boolean;
  /** Another run was requested while this one ran. */
  dirty: boolean;
  failures: number;
  /** Aborts the run in flight when a newer revision arrives. */
  superseded?: AbortController;
  /** The key's object was deleted while this ran: the entry goes when the run ends (unless added again). */
  forgotten?: boolean;
}

export interface WorkQueueOptions {
  concurrency: number;
  /** Upper bound for back-off delays. */
  maxBackoffMs?: number;
  /**
   * ±this percent of random jitter on every requeue after a success (--interval-jitter-percentage, Flux's
   * flag and default of 5): units created or restarted together do not all come due in the same second.
   */
  intervalJitterPercent?: number;
  onDepthChange?: (queued: number, inFlight: number) => void;
  /**
   * Runs that may wait outside a slot at once (see Worker's `onlyWaiting`; default 10 × concurrency): past it, a
   * waiting run keeps its slot, so memory and the final status writes stay bounded.
   */
  maxWaiting?: number;
  /**
   * How long a run of `key` may take before the watchdog calls it overdue (undefined: no limit): its slot is
   * given back at once, `onOverdue` reports it, and the key stays in flight (never two runs of one key) until
   * the run ends, when `onOverdueEnded` says so.
   */
  budgetMs?: (key: string) => number | undefined;
  onOverdue?: (key: string, budgetMs: number) => void;
  onOverdueEnded?: (key: string, ranMs: number) => void;
  /** After shutdown aborted the runs, how long it waits for them to end before it returns anyway (default 2 s). */
  abandonAfterAbortMs?: number;
}

export class WorkQueue {
  private readonly entries = new Map<string, Entry>();
  private readonly pool: PQueue;
  private readonly worker: Worker;
  private readonly abort = new AbortController();
  private readonly maxBackoffMs: number;
  private readonly jitter: number;
  private readonly onDepthChange: WorkQueueOptions['onDepthChange'];
  private stopped = false;
  /** Runs that gave their slot back while they wait (for health); shutdown waits for them too. */
  private readonly waiting = new Set<Promise<void>>();
  private readonly maxWaiting: number;
  private readonly budgetMs: WorkQueueOptions['budgetMs'];
  private readonly onOverdue: WorkQueueOptions['onOverdue'];
  private readonly onOverdueEnded: WorkQueueOptions['onOverdueEnded'];
  private readonly abandonAfterAbortMs: number;
  /** Keys whose run outlived its budget and has not ended yet (the watchdog's list). */
  private readonly overdueKeys = new Set<string>();

  constructor(worker: Worker, opts: WorkQueueOptions) {
    this.worker = worker;
    this.pool = new PQueue({ concurrency: opts.concurrency });
    this.maxWaiting = opts.maxWaiting ?? 10 * opts.concurrency;
    this.maxBackoffMs = opts.maxBackoffMs ?? 10 * 60_000;
    this.jitter = (opts.intervalJitterPercent ?? 0) / 100;
    this.onDepthChange = opts.onDepthChange;
    this.budgetMs = opts.budgetMs;
    this.onOverdue = opts.onOverdue;
    this.onOverdueEnded = opts.onOverdueEnded;
    this.abandonAfterAbortMs = opts.abandonAfterAbortMs ?? 2_000;
  }

  /** Keys whose run outlived its budget and is still going (the watchdog's report: metric, log, readiness). */
  get overdue(): string[] {
    return [...this.overdueKeys];
  }

  /** Runs `key` after `delayMs` (0 = as soon as a slot is free). An earlier request wins. */
  add(key: string, delayMs = 0): void {
    if (this.stopped) return;
    const e = this.entry(key);
    e.forgotten = false;
    if (e.running) {
      if (delayMs === 0) e.dirty = true;
      else this.schedule(key, e, delayMs);
      return;
    }
    this.schedule(key, e, delayMs);
  }

  /**
   * A newer revision of `key` arrived (new generation, trigger annotation): a run in flight is told to stop
   * waiting (its `superseded` signal fires) and the key runs again right after it; otherwise as add(key).
   */
  supersede(key: string): void {
    if (this.stopped) return;
    const e = this.entries.get(key);
    if (!e?.running) return this.add(key);
    e.dirty = true;
    e.superseded?.abort();
  }

  /** Forget a key (its object was deleted): cancels its timer. */
  forget(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    if (e.timer) clearTimeout(e.timer);
    e.timer = undefined;
    e.dueAt = undefined;
    // a PackageSync's delete event comes once its finalizer is gone, i.e. usually while the reconcile that
    // removed it still runs: that entry goes when the run ends, or a deleted unit's entry stays forever
    if (e.running) e.forgotten = true;
    else this.entries.delete(key);
  }

  /** Keys the queue holds an entry for (running, scheduled or backing off): tests. */
  get size(): number {
    return this.entries.size;
  }

  get depth(): number {
    return this.pool.size + this.inFlight;
  }

  /** Runs under way: those holding a slot and those waiting outside one. */
  private get inFlight(): number {
    return this.pool.pending + this.waiting.size;
  }

  /**
   * Stop taking work; in-flight reconciles see their signal aborted after `graceMs`, and are abandoned if they
   * have not ended `abandonAfterMs` later.
   */
  async shutdown(graceMs: number, abandonAfterMs = this.abandonAfterAbortMs): Promise<void> {
    this.stopped = true;
    for (const e of this.entries.values()) if (e.timer) clearTimeout(e.timer);
    this.pool.clear();
    const idle = this.pool.onIdle().then(() => Promise.all([...this.waiting]).then(() => undefined));
    const timeout = new Promise<void>((r) => setTimeout(r, graceMs).unref());
    await Promise.race([idle, timeout]);
    this.abort.abort();
    // A run that does not heed its signal must not hold the process past its grace period (ADR 0032): it is
    // abandoned, as a crash would abandon it; the next leader takes the key up.
    await Promise.race([idle, new Promise<void>((r) => setTimeout(r, abandonAfterMs).unref())]);
  }

  private entry(key: string): Entry {
    let e = this.entries.get(key);
    if (!e) this.entries.set(key, (e = { running: false, dirty: false, failures: 0 }));
    return e;
  }

  private schedule(key: string, e: Entry, delayMs: number): void {
    const dueAt = Date.now() + delayMs;
    if (e.dueAt !== undefined && e.dueAt <= dueAt) return;
    if (e.timer) clearTimeout(e.timer);
    e.dueAt = dueAt;
    e.timer = setTimeout(() => this.enqueue(key, e), Math.max(0, delayMs));
    e.timer.unref?.();
  }

  private enqueue(key: string, e: Entry): void {
    e.timer = undefined;
    e.dueAt = undefined;
    if (e.running) {
      e.dirty = true;
      return;
    }
    e.running = true;
    void this.pool.add(() => this.holdSlot(key, e));
    this.onDepthChange?.(this.pool.size, this.inFlight);
  }

  /** The pool's task: the run, or until the run says it only waits (then the run goes on outside the pool). */
  private holdSlot(key: string, e: Entry): Promise<void> {
    return new Promise<void>((freeSlot) => {
      let released = false;
      let ended: () => void = () => undefined;
      const done = new Promise<void>((r) => (ended = r));
      const release = () => {
        released = true;
        this.waiting.add(done);
        freeSlot();
      };
      const onlyWaiting = () => {
        if (released || this.waiting.size >= this.maxWaiting) return;
        release();
      };
      const started = Date.now();
      const budget = this.budgetMs?.(key);
      let overdue = false;
      const watchdog =
        budget === undefined
          ? undefined
          : setTimeout(() => {
              overdue = true;
              this.overdueKeys.add(key);
              this.onOverdue?.(key, budget);
              if (!released) release();
              this.onDepthChange?.(this.pool.size, this.inFlight);
            }, budget);
      watchdog?.unref?.();
      void this.run(key, e, onlyWaiting).finally(() => {
        clearTimeout(watchdog);
        if (overdue) {
          this.overdueKeys.delete(key);
          this.onOverdueEnded?.(key, Date.now() - started);
        }
        this.waiting.delete(done);
        ended();
        freeSlot();
        if (released) this.onDepthChange?.(this.pool.size, this.inFlight);
      });
    });
  }

  private async run(key: string, e: Entry, onlyWaiting: () => void): Promise<void> {
    let next: number | undefined;
    try {
      e.superseded = new AbortController();
      const res = await this.worker(key, this.abort.signal, e.superseded.signal, onlyWaiting);
      if (res.failed) {
        e.failures++;
        next = this.backoff(res.requeueAfterMs ?? 30_000, e.failures);
      } else {
        e.failures = 0;
        next = res.requeueAfterMs === undefined ? undefined : jittered(res.requeueAfterMs, this.jitter);
      }
    } catch {
      e.failures++;
      next = this.backoff(30_000, e.failures);
    } finally {
      e.superseded = undefined;
      e.running = false;
      this.onDepthChange?.(this.pool.size, this.inFlight);
    }
    if (this.stopped) return;
    if (e.forgotten && !e.dirty) {
      if (this.entries.get(key) === e) this.entries.delete(key);
      return;
    }
    if (e.dirty) {
      e.dirty = false;
      this.schedule(key, e, 0);
    } else if (next !== undefined) {
      this.schedule(key, e, next);
    }
  }

  /** retryInterval × 2^(failures-1), capped, with ±20 % jitter so a fleet does not retry in lockstep. */
  private backoff(baseMs: number, failures: number): number {
    const exp = Math.min(baseMs * 2 ** Math.min(failures - 1, 20), Math.max(this.maxBackoffMs, baseMs));
    return Math.round(exp * (0.8 + Math.random() * 0.4));
  }
}

/** `ms` ± `fraction` of it, uniformly (0 stays 0: "now" is never postponed). */
export function jittered(ms: number, fraction: number, random: () => number = Math.random): number {
  return Math.round(ms * (1 + fraction * (2 * random() - 1)));
}
