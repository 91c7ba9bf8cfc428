import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toolEnv } from './run-tool.ts';
import type { RenderSandbox } from './sandbox.ts';
import type { HelmLookup, LookupAnswer, LookupQuery } from './worker-lookup.ts';
import {
  answerOf,
  encodeFrame,
  FrameReader,
  type Answer,
  type WorkerFrame,
  type WorkerJob,
} from './worker-protocol.ts';

export interface RenderLimits {
  timeoutMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  /** Answers the render's lookup frames (a helm job with lookup on). */
  lookup?: HelmLookup;
}

/** stderr kept per render (the head of a crash: Go's "out of memory", "goroutine stack exceeds"). */
const STDERR_KEEP = 16 << 10;

/** One worker process: its launcher, its private HOME, its frames. */
export class WorkerProcess {
  alive = true;
  private readonly child: ChildProcessWithoutNullStreams | undefined;
  private readonly home: string;
  private readonly frames = new FrameReader(
    (frame) => this.answer(frame),
    () => {
      const answer = this.pending;
      this.kill();
      answer?.({ ok: false, kind: 'too-large', error: '' });
    },
  );
  private stderr = '';
  private nextId = 1;
  private pending: ((a: Answer) => void) | undefined;
  /** The render in flight: its id and who answers its lookups. */
  private current: { id: number; lookup?: HelmLookup; signal?: AbortSignal } | undefined;
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
      this.frames.limit = 2 * limits.maxOutputBytes + (1 << 20);
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
    this.child?.stdin.write(encodeFrame(frame));
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
    this.frames.push(chunk);
  }

  private answer(frame: Buffer): void {
    let parsed: WorkerFrame;
    try {
      parsed = JSON.parse(frame.toString('utf8')) as WorkerFrame;
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
    const answer = answerOf(parsed);
    // after a panic the worker exits by itself: its library state may be half-written
    if (answer.kind === 'panic' && !parsed.ok) this.kill();
    this.pending?.(answer);
  }
}
