// The pool's lifecycle — queueing, kill and replace, one retry, limits — with a scripted stand-in for the
// worker (a Node script speaking the same frames) behind a pass-through launcher. The real worker, under the
// real launcher, is tested in test/render/worker-*.test.ts.
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RenderWorkerPool } from './worker-pool.ts';
import type { WorkerJob } from './worker-protocol.ts';

let dir: string;
let launcher: string;
let worker: string;
const pools: RenderWorkerPool[] = [];

// What the stand-in does is in the job's dir: "ok", "slow" (300 ms), "panic", "crash", "crash-once:<file>",
// "loop", "oom", "huge"; it answers with its pid so a test can tell workers apart.
const script = `#!${process.execPath}
const fs = require('node:fs');
let buf = Buffer.alloc(0);
const send = (o) => { const b = Buffer.from(JSON.stringify(o)); const h = Buffer.alloc(4); h.writeUInt32BE(b.length); process.stdout.write(Buffer.concat([h, b])); };
process.stdin.on('data', (d) => {
  buf = Buffer.concat([buf, d]);
  while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
    const req = JSON.parse(buf.subarray(4, 4 + buf.readUInt32BE(0)).toString());
    buf = buf.subarray(4 + buf.readUInt32BE(0));
    if (req.op === 'version') { send({ id: req.id, ok: true, versions: { stand: 'in' } }); continue; }
    const how = req.kustomize.dir;
    if (how === 'ok') send({ id: req.id, ok: true, yaml: 'pid: ' + process.pid + '\\n' });
    else if (how === 'slow') setTimeout(() => send({ id: req.id, ok: true, yaml: 'pid: ' + process.pid + '\\n' }), 300);
    else if (how === 'panic') { send({ id: req.id, ok: false, kind: 'panic', error: 'panic: boom' }); process.exit(3); }
    else if (how === 'crash') { process.stderr.write('something broke\\n'); process.exit(9); }
    else if (how.startsWith('crash-once:')) {
      const mark = how.slice('crash-once:'.length);
      if (!fs.existsSync(mark)) { fs.writeFileSync(mark, ''); process.exit(9); }
      send({ id: req.id, ok: true, yaml: 'second try\\n' });
    }
    else if (how === 'loop') { /* never answers */ }
    else if (how === 'oom') { process.stderr.write('fatal error: runtime: out of memory\\n\\ngoroutine 1 [running]:\\n' + 'main.main()\\n'.repeat(20000)); process.exit(2); }
    else if (how === 'huge') send({ id: req.id, ok: true, yaml: 'x'.repeat(4 << 20) });
  }
});
`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'worker-pool-'));
  launcher = join(dir, 'launcher.sh');
  worker = join(dir, 'worker.cjs');
  // the launcher's interface (--read/--write/--memory … -- tool) without the kernel: the stand-in is Node
  await writeFile(
    launcher,
    '#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done\nshift\n[ -e "$1" ] || { echo "render-sandbox: $1: not found" >&2; exit 127; }\nexec "$@"\n',
  );
  await writeFile(worker, script);
  await chmod(launcher, 0o755);
  await chmod(worker, 0o755);
});
afterEach(() => {
  for (const p of pools.splice(0)) p.close();
});
afterAll(() => rm(dir, { recursive: true, force: true }));

function pool(size = 1, bin = worker, idleMs?: number): RenderWorkerPool {
  const p = new RenderWorkerPool({
    bin,
    size,
    readRoots: [dir],
    sandbox: { bin: launcher, maxMemoryBytes: 1 << 30 },
    ...(idleMs !== undefined ? { idleMs } : {}),
  });
  pools.push(p);
  return p;
}

const job = (how: string): WorkerJob => ({ op: 'kustomize', kustomize: { root: dir, dir: how } });
const limits = { timeoutMs: 10_000, maxOutputBytes: 1 << 20 };
const pidOf = (o: { ok: boolean; yaml?: string }) => Number(/pid: (\d+)/.exec(o.ok ? (o.yaml ?? '') : '')?.[1]);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('render worker pool', () => {
  it('keeps a worker for the next render, and runs as many at once as it has workers', async () => {
    const p = pool(2);
    const first = await p.render(job('ok'), limits);
    const again = await p.render(job('ok'), limits);
    expect(pidOf(again)).toBe(pidOf(first));
    const both = await Promise.all([p.render(job('slow'), limits), p.render(job('slow'), limits)]);
    expect(new Set(both.map(pidOf)).size).toBe(2);
    expect(p.stats()).toEqual({ started: 2, replaced: 0, retired: 0 });
  });

  it('a worker idle for idleMs exits; the next render starts another', async () => {
    const p = pool(1, worker, 300);
    const first = pidOf(await p.render(job('ok'), limits));
    // used again before idleMs: the same worker, its exit put off
    await new Promise((r) => setTimeout(r, 150));
    expect(pidOf(await p.render(job('ok'), limits))).toBe(first);
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(first)).toBe(true);
    await new Promise((r) => setTimeout(r, 400));
    expect(alive(first)).toBe(false);
    expect(p.stats()).toEqual({ started: 1, replaced: 0, retired: 1 });
    const next = await p.render(job('ok'), limits);
    expect(next.ok).toBe(true);
    expect(pidOf(next)).not.toBe(first);
    expect(p.stats()).toMatchObject({ started: 2, retired: 1 });
  });

  it('queues renders beyond its size on the workers it has', async () => {
    const p = pool(1);
    const all = await Promise.all([1, 2, 3].map(() => p.render(job('slow'), limits)));
    expect(all.every((o) => o.ok)).toBe(true);
    expect(new Set(all.map(pidOf)).size).toBe(1);
  });

  it('a panic: the worker is replaced and the render tried once more, then the panic is the answer', async () => {
    const p = pool(1);
    const before = await p.render(job('ok'), limits);
    const panicked = await p.render(job('panic'), limits);
    expect(panicked).toMatchObject({ ok: false, kind: 'panic', error: 'panic: boom', attempts: 2 });
    const after = await p.render(job('ok'), limits);
    expect(after.ok).toBe(true);
    expect(pidOf(after)).not.toBe(pidOf(before));
    expect(p.stats().replaced).toBe(2);
  });

  it('a crash once: the retry on a fresh worker succeeds', async () => {
    const p = pool(1);
    const mark = join(dir, `crashed-${Date.now()}`);
    const r = await p.render(job(`crash-once:${mark}`), limits);
    expect(r).toEqual({ ok: true, yaml: 'second try\n' });
    expect(existsSync(mark)).toBe(true);
    expect(p.stats()).toEqual({ started: 2, replaced: 1, retired: 0 });
  });

  it('a crash every time: its exit code and the last words of its stderr', async () => {
    const r = await pool(1).render(job('crash'), limits);
    expect(r).toMatchObject({ ok: false, kind: 'crash', exitCode: 9, error: 'something broke', attempts: 2 });
    const oom = await pool(1).render(job('oom'), limits);
    expect(oom).toMatchObject({ ok: false, kind: 'crash', exitCode: 2 });
    if (!oom.ok) expect(oom.error).toContain('fatal error: runtime: out of memory');
  });

  it('a render past its time is killed with its worker, tried once more, and the pool goes on', async () => {
    const p = pool(1);
    const before = await p.render(job('ok'), limits);
    const started = performance.now();
    const r = await p.render(job('loop'), { ...limits, timeoutMs: 300 });
    expect(r).toMatchObject({ ok: false, kind: 'timeout', attempts: 2 });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(alive(pidOf(before))).toBe(false);
    expect((await p.render(job('ok'), limits)).ok).toBe(true);
  });

  it('an answer past the output limit kills the worker, not the controller', async () => {
    const p = pool(1);
    const r = await p.render(job('huge'), { ...limits, maxOutputBytes: 1 << 10 });
    expect(r).toMatchObject({ ok: false, kind: 'too-large', attempts: 1 });
    expect((await p.render(job('ok'), limits)).ok).toBe(true);
  });

  it('a cancelled render stops its worker and is not retried', async () => {
    const p = pool(1);
    const stop = new AbortController();
    const pending = p.render(job('loop'), { ...limits, signal: stop.signal });
    setTimeout(() => stop.abort(), 100);
    expect(await pending).toMatchObject({ ok: false, kind: 'aborted', attempts: 1 });
  });

  it('a missing worker binary is "missing", not retried', async () => {
    const r = await pool(1, join(dir, 'no-such-worker')).render(job('ok'), limits);
    expect(r).toMatchObject({ ok: false, kind: 'missing', attempts: 1 });
  });

  it('asks the worker its versions once, with the binary identity', async () => {
    const p = pool(1);
    const v = await p.versions();
    expect(JSON.parse(v)).toMatchObject({ stand: 'in', binary: expect.stringMatching(/^\d+@/) });
    expect(await p.versions()).toBe(v);
  });

  it('close stops every worker', async () => {
    const p = pool(2);
    const [a, b] = await Promise.all([p.render(job('slow'), limits), p.render(job('slow'), limits)]);
    p.close();
    await new Promise((r) => setTimeout(r, 100));
    expect([alive(pidOf(a)), alive(pidOf(b))]).toEqual([false, false]);
  });
});
