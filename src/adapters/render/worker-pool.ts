import { mkdirSync, realpathSync, statSync } from 'node:fs';
import { isInside } from '../../core/inside.ts';
import { renderSandbox, type RenderSandbox } from './sandbox.ts';
import { WorkerProcess, type RenderLimits } from './worker-process.ts';
import type { WorkerFailureKind, WorkerJob, WorkerOutput } from './worker-protocol.ts';

/**
 * A pool of long-lived render workers (hack/render-worker: kustomize and Helm as libraries), each under the
 * kernel sandbox (hack/render-sandbox: Landlock reads confined to the checkout directory, no TCP,
 * RLIMIT_AS + GOMEMLIMIT), speaking length-prefixed JSON frames over stdio, one render at a time each
 * (docs/adr/0038). A worker that runs past the render's time limit, panics, crashes or runs out of memory is
 * killed and replaced, and the render is tried once more on a fresh worker: a library's half-written state
 * never serves the next render, and one bad package costs one worker, not the controller.
 *
 * This file is the pool's scheduling and replacement; one worker's process is worker-process.ts, its frames
 * worker-protocol.ts.
 */

export interface WorkerPoolOptions {
  /** The render-worker binary. */
  bin: string;
  /** Workers at most (each renders one package at a time). */
  size: number;
  /** What the workers may read: the directories checkouts live in (each resolved once). */
  readRoots: string[];
  /** The launcher and its memory bound; default: the configured render sandbox. */
  sandbox?: RenderSandbox;
  /**
   * A worker idle this long exits (default 5 minutes): a settled fleet renders rarely, so at rest the controller
   * runs no worker, and the next render starts one (~0.1 s). 0 keeps them.
   */
  idleMs?: number;
}

/** How long an idle worker is kept by default. */
export const WORKER_IDLE_MS = 5 * 60_000;

export type WorkerOutcome =
  | ({ ok: true } & WorkerOutput)
  | { ok: false; kind: WorkerFailureKind; error: string; exitCode?: number | null; attempts: number };

export interface WorkerPoolStats {
  /** Workers started, replacements included. */
  started: number;
  /** Workers killed after a timeout, panic or crash. */
  replaced: number;
  /** Workers that exited after idleMs without a render. */
  retired: number;
}

/** Kinds after which the worker is gone and the render is tried once more. */
const RETRIED: ReadonlySet<WorkerFailureKind> = new Set(['panic', 'crash', 'timeout']);

export class RenderWorkerPool {
  readonly bin: string;
  private readonly size: number;
  private readonly readRoots: string[];
  private readonly sandbox: () => RenderSandbox;
  private readonly idle: WorkerProcess[] = [];
  private readonly idleMs: number;
  /** The exit timer of each idle worker. */
  private readonly retiring = new Map<WorkerProcess, NodeJS.Timeout>();
  private readonly live = new Set<WorkerProcess>();
  private readonly waiting: ((w: WorkerProcess) => void)[] = [];
  private versionAnswer: Promise<string> | undefined;
  private counters: WorkerPoolStats = { started: 0, replaced: 0, retired: 0 };
  private closed = false;

  constructor(options: WorkerPoolOptions) {
    this.bin = options.bin;
    this.size = Math.max(1, options.size);
    this.readRoots = options.readRoots.map((r) => {
      mkdirSync(r, { recursive: true, mode: 0o700 });
      return realpathSync(r);
    });
    this.sandbox = () => options.sandbox ?? renderSandbox();
    this.idleMs = options.idleMs ?? WORKER_IDLE_MS;
  }

  /** Whether a checkout (resolved) is inside what the workers may read. */
  covers(checkoutRoot: string): boolean {
    return this.readRoots.some((r) => isInside(r, checkoutRoot));
  }

  stats(): WorkerPoolStats {
    return { ...this.counters };
  }

  /** One render on a worker; tried once more on a fresh worker after a timeout, panic or crash. */
  async render(job: WorkerJob, limits: RenderLimits): Promise<WorkerOutcome> {
    let outcome: WorkerOutcome | undefined;
    for (let attempt = 1; attempt <= 2; attempt++) {
      outcome = await this.once(job, limits, attempt);
      if (outcome.ok || !RETRIED.has(outcome.kind) || limits.signal?.aborted) return outcome;
    }
    return outcome!;
  }

  /**
   * The worker's own report of its libraries (kustomize api, Helm, Go), and the binary's size and time (the
   * image replaces it in place), asked once: part of the cache key.
   */
  versions(): Promise<string> {
    this.versionAnswer ??= (async () => {
      const binary = statSync(this.bin, { throwIfNoEntry: false });
      const identity = binary ? `${binary.size}@${binary.mtimeMs}` : 'missing';
      // asked a few times, then kept whatever the answer: a key that changed with a flaky answer would miss
      for (let attempt = 0; attempt < 3; attempt++) {
        const worker = await this.acquire();
        const r = await worker.request({ op: 'version' }, { timeoutMs: 30_000, maxOutputBytes: 1 << 16 });
        this.release(worker);
        if (r.ok && r.versions) return JSON.stringify({ ...r.versions, binary: identity });
      }
      return `unknown ${identity}`;
    })();
    return this.versionAnswer;
  }

  /** Stops every worker (the controller's shutdown; the CLI's exit). */
  close(): void {
    this.closed = true;
    for (const t of this.retiring.values()) clearTimeout(t);
    this.retiring.clear();
    for (const w of this.live) w.kill();
    this.live.clear();
    this.idle.length = 0;
  }

  private async once(job: WorkerJob, limits: RenderLimits, attempt: number): Promise<WorkerOutcome> {
    const worker = await this.acquire();
    const r = await worker.request(job, limits);
    if (!worker.alive && r.kind !== 'missing' && r.kind !== 'sandbox-missing' && r.kind !== 'aborted')
      this.counters.replaced++;
    this.release(worker);
    if (r.ok) return r.objects !== undefined ? { ok: true, objects: r.objects } : { ok: true, yaml: r.yaml ?? '' };
    return { ok: false, kind: r.kind, error: r.error, exitCode: r.exitCode, attempts: attempt };
  }

  private acquire(): Promise<WorkerProcess> {
    for (let ready = this.idle.pop(); ready; ready = this.idle.pop()) {
      clearTimeout(this.retiring.get(ready));
      this.retiring.delete(ready);
      if (ready.alive) return Promise.resolve(ready);
      this.live.delete(ready); // died while idle (killed from outside): its slot is free again
    }
    if (this.live.size < this.size) {
      const w = new WorkerProcess(this.bin, this.readRoots, this.sandbox());
      this.counters.started++;
      this.live.add(w);
      return Promise.resolve(w);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(worker: WorkerProcess): void {
    let next: WorkerProcess | undefined = worker;
    if (!worker.alive || this.closed) {
      this.live.delete(worker);
      worker.kill();
      next = undefined;
      // a waiter gets a fresh worker in the freed slot
      if (this.waiting.length > 0 && !this.closed) {
        next = new WorkerProcess(this.bin, this.readRoots, this.sandbox());
        this.counters.started++;
        this.live.add(next);
      }
    }
    if (!next) return;
    const waiter = this.waiting.shift();
    if (waiter) waiter(next);
    else this.rest(next);
  }

  /** An idle worker, kept for the next render until idleMs pass without one. */
  private rest(worker: WorkerProcess): void {
    this.idle.push(worker);
    if (this.idleMs <= 0) return;
    const timer = setTimeout(() => {
      this.retiring.delete(worker);
      const at = this.idle.indexOf(worker);
      if (at < 0) return;
      this.idle.splice(at, 1);
      this.live.delete(worker);
      worker.kill();
      this.counters.retired++;
    }, this.idleMs);
    timer.unref(); // an idle worker never keeps the controller (or the CLI) alive
    this.retiring.set(worker, timer);
  }
}
