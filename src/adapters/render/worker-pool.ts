import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isInside } from '../../core/inside.ts';
import { toolEnv } from './run-tool.ts';
import { renderSandbox, type RenderSandbox } from './sandbox.ts';
import type { HelmLookup, LookupAnswer, LookupQuery } from './worker-lookup.ts';

/**
 * A pool of long-lived render workers (hack/render-worker: kustomize and Helm as libraries), each under the
 * kernel sandbox (hack/render-sandbox: Landlock reads confined to the checkout directory, no TCP,
 * RLIMIT_AS + GOMEMLIMIT), speaking length-prefixed JSON frames over stdio, one render at a time each
 * (docs/adr/0038). A worker that runs past the render's time limit, panics, crashes or runs out of memory is
 * killed and replaced, and the render is tried once more on a fresh worker: a library's half-written state
 * never serves the next render, and one bad package costs one worker, not the controller.
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
}

export type WorkerJob =
  | {
      op: 'kustomize';
      kustomize: { root: string; dir: string; replace?: Record<string, string> };
      /** The output as a JSON array of objects where the worker can give it so (WorkerOutput). */
      objects?: boolean;
    }
  | {
      op: 'helm';
      helm: {
        root: string;
        chart: string;
        releaseName: string;
        namespace: string;
        includeCRDs: boolean;
        kubeVersion?: string;
        apiVersions?: string[];
        values?: { path?: string; name?: string; text?: string }[];
        /** spec.helm.lookup: the template's `lookup` asks the render's HelmLookup (RenderLimits.lookup). */
        lookup?: boolean;
      };
      /** The output as a JSON array of `{source, object}` where the worker can give it so (WorkerOutput). */
      objects?: boolean;
    };

/**
 * failed: the library said no (its error); too-large: output past the limit; panic: the library panicked;
 * crash: the worker died (stderr says why: out of memory, stack); timeout, aborted; missing: no worker binary;
 * sandbox-missing: no launcher.
 */
export type WorkerFailureKind =
  'failed' | 'too-large' | 'panic' | 'crash' | 'timeout' | 'aborted' | 'missing' | 'sandbox-missing';

/**
 * A render's output: the YAML the binary would print or, for a job that asked and where the worker could
 * (hack/render-worker/objects.go), the same documents as a JSON array, decoded as kubectl decodes YAML: kustomize's
 * as objects, Helm's as `{source, object}` (the template each came from).
 */
export type WorkerOutput = { yaml: string; objects?: undefined } | { objects: string; yaml?: undefined };

export type WorkerOutcome =
  | ({ ok: true } & WorkerOutput)
  | { ok: false; kind: WorkerFailureKind; error: string; exitCode?: number | null; attempts: number };

export interface RenderLimits {
  timeoutMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  /** Answers the render's lookup frames (a helm job with lookup on). */
  lookup?: HelmLookup;
}

export interface WorkerPoolStats {
  /** Workers started, replacements included. */
  started: number;
  /** Workers killed after a timeout, panic or crash. */
  replaced: number;
}

/** Kinds after which the worker is gone and the render is tried once more. */
const RETRIED: ReadonlySet<WorkerFailureKind> = new Set(['panic', 'crash', 'timeout']);
/** stderr kept per render (the head of a crash: Go's "out of memory", "goroutine stack exceeds"). */
const STDERR_KEEP = 16 << 10;

export class RenderWorkerPool {
  readonly bin: string;
  private readonly size: number;
  private readonly readRoots: string[];
  private readonly sandbox: () => RenderSandbox;
  private readonly idle: Worker[] = [];
  private readonly live = new Set<Worker>();
  private readonly waiting: ((w: Worker) => void)[] = [];
  private versionAnswer: Promise<string> | undefined;
  private counters: WorkerPoolStats = { started: 0, replaced: 0 };
  private closed = false;

  constructor(options: WorkerPoolOptions) {
    this.bin = options.bin;
    this.size = Math.max(1, options.size);
    this.readRoots = options.readRoots.map((r) => {
      mkdirSync(r, { recursive: true, mode: 0o700 });
      return realpathSync(r);
    });
    this.sandbox = () => options.sandbox ?? renderSandbox();
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

  private acquire(): Promise<Worker> {
    for (let ready = this.idle.pop(); ready; ready = this.idle.pop()) {
      if (ready.alive) return Promise.resolve(ready);
      this.live.delete(ready); // died while idle (killed from outside): its slot is free again
    }
    if (this.live.size < this.size) {
      const w = new Worker(this.bin, this.readRoots, this.sandbox());
      this.counters.started++;
      this.live.add(w);
      return Promise.resolve(w);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(worker: Worker): void {
    let next: Worker | undefined = worker;
    if (!worker.alive || this.closed) {
      this.live.delete(worker);
      worker.kill();
      next = undefined;
      // a waiter gets a fresh worker in the freed slot
      if (this.waiting.length > 0 && !this.closed) {
        next = new Worker(this.bin, this.readRoots, this.sandbox());
        this.counters.started++;
        this.live.add(next);
      }
    }
    if (!next) return;
    const waiter = this.waiting.shift();
    if (waiter) waiter(next);
    else this.idle.push(next);
  }
}

interface Answer {
  ok: boolean;
  yaml?: string;
  objects?: string;
  kind: WorkerFailureKind;
  error: string;
  exitCode?: number | null;
  versions?: Record<string, string>;
}

/** One worker process: its launcher, its private HOME, its frames. */
class Worker {
  alive = true;
  private readonly child: ChildProcessWithoutNullStreams | undefined;
  private readonly home: string;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private stderr = '';
  private nextId = 1;
  private pending: ((a: Answer) => void) | undefined;
  /** The render in flight: its id and who answers its lookups. */
  private current: { id: number; lookup?: HelmLookup; signal?: AbortSignal } | undefined;
  private frameLimit = 0;
  private spawnError: 'sandbox-missing' | undefined;
  /** Why it ended, when it ended between renders. */
  private ended: Answer | undefined;

  constructor(bin: string, readRoots: string[], sandbox: RenderSandbox) {
    this.home = mkdtempSync(join(tmpdir(), 'packagesync-worker-'));
    for (const d of ['config', 'cache', 'data']) mkdirSync(join(this.home, d), { mode: 0o700 });
    writeFileSync(join(this.home, 'kubeconfig'), '', { mode: 0o600 });
    const args = [
      ...readRoots.flatMap((r) => ['--read', r]),
      '--write',
      this.home,
      '--memory',
      String(sandbox.maxMemoryBytes),
      '--',
      bin,
    ];
    const child = spawn(sandbox.bin, args, {
      cwd: this.home,
      env: toolEnv(this.home),
      detached: true, // its own process group: the kill reaches all of it
    });
    this.child = child;
    // an idle worker never keeps the controller (or the CLI) alive; a render in flight has its timer
    child.unref();
    for (const s of [child.stdin, child.stdout, child.stderr]) (s as unknown as { unref?: () => void }).unref?.();
    child.stdin.on('error', () => undefined);
    child.stdout.on('data', (chunk: Buffer) => this.onData(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      // the head: Go writes its reason ("fatal error: runtime: out of memory") before pages of goroutines
      if (this.stderr.length < STDERR_KEEP) this.stderr += chunk.toString('utf8').slice(0, STDERR_KEEP);
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT' || e.code === 'EACCES') this.spawnError = 'sandbox-missing';
      this.exited(null);
    });
    // 'close', not 'exit': by then stderr is read to its end (Go's last words)
    child.on('close', (code) => this.exited(code));
  }

  request(job: WorkerJob | { op: 'version' }, limits: RenderLimits): Promise<Answer> {
    if (!this.alive) return Promise.resolve(this.ended ?? { ok: false, kind: 'crash', error: '' });
    return new Promise((resolve) => {
      this.stderr = '';
      // JSON escaping at most doubles text that is mostly ASCII; a frame past this is an output past the limit
      this.frameLimit = 2 * limits.maxOutputBytes + (1 << 20);
      const finish = (a: Answer) => {
        clearTimeout(timer);
        limits.signal?.removeEventListener('abort', onAbort);
        this.pending = undefined;
        this.current = undefined;
        resolve(a);
      };
      const timer = setTimeout(() => {
        this.kill();
        finish({ ok: false, kind: 'timeout', error: '' });
      }, limits.timeoutMs);
      const onAbort = () => {
        this.kill();
        finish({ ok: false, kind: 'aborted', error: '' });
      };
      limits.signal?.addEventListener('abort', onAbort, { once: true });
      this.pending = finish;
      if (limits.signal?.aborted) return onAbort();
      const id = this.nextId++;
      this.current = { id, lookup: limits.lookup, signal: limits.signal };
      this.send({ id, maxOutputBytes: limits.maxOutputBytes, ...job });
    });
  }

  private send(frame: object): void {
    const body = Buffer.from(JSON.stringify(frame), 'utf8');
    const header = Buffer.alloc(4);
    header.writeUInt32BE(body.length);
    this.child?.stdin.write(Buffer.concat([header, body]));
  }

  /** A template's `lookup`, mid-render: asked of the render's HelmLookup, answered on the same frames. */
  private async answerLookup(query: LookupQuery): Promise<void> {
    const current = this.current;
    if (!current) return;
    const answer: LookupAnswer = current.lookup
      ? await current.lookup(query, current.signal).catch((e: unknown) => ({
          code: 500,
          reason: 'InternalError',
          message: e instanceof Error ? e.message : String(e),
        }))
      : {}; // no one to ask: nothing, as `helm template` answers
    // the render may have ended meanwhile (timeout, abort): its worker is gone, nothing to answer
    if (this.current === current && this.alive) this.send({ id: current.id, op: 'lookup-answer', answer });
  }

  kill(): void {
    if (this.child?.pid !== undefined && this.alive) {
      try {
        process.kill(-this.child.pid, 'SIGKILL');
      } catch {
        this.child.kill('SIGKILL');
      }
    }
    this.alive = false;
    rmSync(this.home, { recursive: true, force: true });
  }

  private exited(code: number | null): void {
    const wasAlive = this.alive;
    this.alive = false;
    rmSync(this.home, { recursive: true, force: true });
    if (!wasAlive && !this.pending) return; // killed by us: whoever killed it has answered
    const stderr = this.stderr.trim();
    // the launcher could not exec the worker (127 not found, 126 not executable)
    const missing = (code === 127 || code === 126) && /^render-sandbox: .*(not found|permission denied)/im.test(stderr);
    const kind = this.spawnError ?? (missing ? 'missing' : 'crash');
    this.ended = { ok: false, kind, error: missing ? '' : stderr, exitCode: code };
    this.pending?.(this.ended);
  }

  private onData(chunk: Buffer): void {
    if (!this.alive) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (this.buffered >= 4) {
      if (this.chunks[0]!.length < 4) this.chunks = [Buffer.concat(this.chunks)];
      const size = this.chunks[0]!.readUInt32BE(0);
      if (size > this.frameLimit) {
        const answer = this.pending;
        this.kill();
        answer?.({ ok: false, kind: 'too-large', error: '' });
        return;
      }
      // the chunks are joined once the whole frame is here (a large render arrives in many)
      if (this.buffered < 4 + size) return;
      const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
      const frame = all.subarray(4, 4 + size);
      const rest = all.subarray(4 + size);
      this.chunks = rest.length > 0 ? [rest] : [];
      this.buffered = rest.length;
      this.answer(frame);
    }
  }

  private answer(frame: Buffer): void {
    let parsed: {
      ok?: boolean;
      yaml?: string;
      objects?: string;
      kind?: string;
      error?: string;
      versions?: Record<string, string>;
      lookup?: LookupQuery;
    };
    try {
      parsed = JSON.parse(frame.toString('utf8')) as typeof parsed;
    } catch {
      const answer = this.pending;
      this.kill();
      answer?.({ ok: false, kind: 'crash', error: 'an unreadable answer' });
      return;
    }
    if (parsed.lookup) {
      void this.answerLookup(parsed.lookup);
      return;
    }
    const kind = (['failed', 'too-large', 'panic'] as const).find((k) => k === parsed.kind) ?? 'failed';
    // after a panic the worker exits by itself: its library state may be half-written
    if (kind === 'panic' && !parsed.ok) this.kill();
    this.pending?.({
      ok: parsed.ok === true,
      yaml: parsed.yaml,
      objects: typeof parsed.objects === 'string' ? parsed.objects : undefined,
      kind,
      error: parsed.error ?? '',
      versions: parsed.versions,
    });
  }
}
