// Hostile packages against the render worker (issue 27, docs/adr/0038), in three layers:
// (1) through the renderer: the same checks refuse the same packages, with the same message, on both engines;
// (2) below the checks (requests sent to the worker directly, as a check gap or a library bug would let them
//     through): the worker's root-confined filesystem and the kernel (Landlock) still refuse, and no byte of
//     the canary and no TCP connection get out;
// (3) packages that make a library loop or allocate without bound: the render fails naming the file, within
//     its limits, the worker is replaced, and the pool goes on rendering other packages.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRenderer, type BuildRequest, type RenderToolsConfig } from '../../src/adapters/render/build.ts';
import { RenderWorkerPool, type WorkerOutcome } from '../../src/adapters/render/worker-pool.ts';
import { defaultToolPaths } from '../../src/config/tool-paths.ts';
import { chart, cm, hostileCases, type HostileFile } from '../support/hostile-packages.ts';

const CANARY = `worker-canary-${randomBytes(6).toString('hex')}`;
const tools = defaultToolPaths();
let base: string;
let checkouts: string;
let outside: string;
let server: Server;
let port: number;
const contacts: string[] = [];
let n = 0;
let subprocess: RenderToolsConfig;
let worker: RenderToolsConfig;
let pool: RenderWorkerPool;
let kustomizePool: RenderWorkerPool;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'worker-hostile-'));
  // the workers may read checkouts/ only; the canary lives beside it
  checkouts = join(base, 'checkouts');
  outside = join(base, 'outside');
  await mkdir(checkouts);
  await mkdir(outside);
  await writeFile(join(outside, 'canary.txt'), `${CANARY}\n`);
  await writeFile(join(outside, 'secret.yaml'), `apiVersion: v1\nkind: Secret\nmetadata: {name: ${CANARY}}\n`);
  await writeFile(join(outside, 'kustomization.yaml'), 'resources: [secret.yaml]\n');
  server = createServer((req, res) => {
    contacts.push(`${req.method} ${req.url}`);
    res.end('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: remote}\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
  const common = {
    kustomizePath: tools.kustomize,
    helmPath: tools.helm,
    limits: { timeoutMs: 20_000, maxOutputBytes: 16 << 20, maxFiles: 10_000 },
    cacheEntries: 0,
  };
  subprocess = common;
  // as the controller runs them: kustomize renders on the worker built without Helm, Helm renders on the full one
  worker = {
    ...common,
    engine: 'worker',
    worker: { bin: tools.worker, kustomizeBin: tools.workerKustomize, size: 2, readRoots: [checkouts] },
  };
  pool = new RenderWorkerPool({ bin: tools.worker, size: 2, readRoots: [checkouts] });
  kustomizePool = new RenderWorkerPool({ bin: tools.workerKustomize, size: 2, readRoots: [checkouts] });
});

afterAll(async () => {
  pool?.close();
  kustomizePool?.close();
  await new Promise((r) => server?.close(r));
  await rm(base, { recursive: true, force: true });
  // nothing, on any path, ever reached the loopback server
  expect(contacts).toEqual([]);
});

async function repo(files: Record<string, HostileFile>): Promise<string> {
  const root = join(checkouts, `case-${++n}`);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    if (typeof content === 'string') await writeFile(join(root, path), content);
    else await symlink(content.symlink, join(root, path));
  }
  return root;
}

const request = (root: string, extra: Partial<BuildRequest> = {}): BuildRequest => ({
  checkoutRoot: root,
  packagePath: 'app',
  files: [],
  spec: {},
  releaseName: 'web',
  releaseNamespace: 'team-a',
  ...extra,
});

describe('(1) the checks refuse the same packages, with the same message, on both engines', () => {
  const cases = hostileCases(
    [
      'a remote base on the loopback server',
      'a git:: base on the loopback server',
      'a ../ escape',
      'a resource symlinked out of the checkout',
      'an exec KRM function',
      '.Files.Get through a link out of the chart',
      'a chart schema $ref to the loopback server',
    ],
    () => ({ port, outside, leak: join(outside, 'secret.yaml') }),
  );
  it.each(cases)('%s', async (_, files, said) => {
    const root = await repo(files());
    const [viaSubprocess, viaWorker] = await Promise.all([
      createRenderer(subprocess).build(request(root)),
      createRenderer(worker).build(request(root)),
    ]);
    if (viaSubprocess.ok || viaWorker.ok) throw new Error('expected a refusal');
    expect(viaWorker.failure).toEqual(viaSubprocess.failure);
    expect(viaWorker.failure.reason).toBe('RenderRefused');
    expect(viaWorker.failure.message).toContain(said);
    expect(viaWorker.failure.message).not.toContain(CANARY);
  });

  it("a failure kustomize finds itself reads as the binary's, repo-relative", async () => {
    const root = await repo({
      'app/kustomization.yaml': 'resources: [cm.yaml]\npatches:\n  - path: patch.yaml\n',
      'app/cm.yaml': cm('ok', '{a: b}'),
      'app/patch.yaml': cm('missing-target', '{a: b}'),
    });
    const r = createRenderer(worker);
    const built = await r.build(request(root));
    r.close();
    if (built.ok) throw new Error('expected a failure');
    expect(built.failure.reason).toBe('RenderFailed');
    expect(built.failure.message).toMatch(/^kustomize build app failed \(exit 1\): Error: /);
    expect(built.failure.message).toContain('missing-target');
    expect(built.failure.message).not.toContain(base);
  });

  it('a template error names the template, as helm template does', async () => {
    const root = await repo({
      'app/Chart.yaml': chart,
      'app/templates/cm.yaml': '{{ required "name is required" .Values.name }}\n',
    });
    const [s, w] = await Promise.all([
      createRenderer(subprocess).build(request(root)),
      createRenderer(worker).build(request(root)),
    ]);
    if (s.ok || w.ok) throw new Error('expected a failure');
    expect(w.failure).toEqual(s.failure);
    expect(w.failure.message).toContain('app/templates/cm.yaml');
    expect(w.failure.message).toContain('name is required');
  });

  it('kustomize renders on the worker built without Helm, Helm on the full worker; the first refuses a chart', async () => {
    const k = await repo({ 'app/kustomization.yaml': 'resources: [cm.yaml]\n', 'app/cm.yaml': cm('k', '{a: b}') });
    const h = await repo({ 'app/Chart.yaml': chart, 'app/templates/cm.yaml': cm('h', '{a: b}') });
    // a kustomize worker that is not there: kustomize renders fail naming it, charts still render
    const missing = join(base, 'no-such-render-worker-kustomize');
    const r = createRenderer({ ...worker, worker: { ...worker.worker!, kustomizeBin: missing } });
    const [kb, hb] = await Promise.all([r.build(request(k)), r.build(request(h))]);
    r.close();
    if (kb.ok) throw new Error('expected the kustomize render to fail');
    expect(kb.failure.message).toContain(missing);
    expect(hb.ok).toBe(true);
    // both render as configured, and the worker without Helm says so when asked for a chart
    const both = createRenderer(worker);
    expect((await both.build(request(k))).ok).toBe(true);
    expect((await both.build(request(h))).ok).toBe(true);
    both.close();
    const refused = await kustomizePool.render(
      {
        op: 'helm',
        helm: { root: h, chart: join(h, 'app'), releaseName: 'web', namespace: 'team-a', includeCRDs: true },
      },
      { timeoutMs: 20_000, maxOutputBytes: 1 << 20 },
    );
    expect(refused).toMatchObject({ ok: false, kind: 'failed' });
    expect(refused.ok ? '' : refused.error).toContain('render-worker-kustomize renders kustomize only');
  });

  it('a checkout outside what the workers may read renders by subprocess', async () => {
    const root = join(base, 'elsewhere');
    await mkdir(join(root, 'app'), { recursive: true });
    await writeFile(join(root, 'app/kustomization.yaml'), 'resources: [cm.yaml]\n');
    await writeFile(join(root, 'app/cm.yaml'), cm('ok', '{a: b}'));
    const r = createRenderer(worker);
    const built = await r.build(request(root));
    expect(built.ok).toBe(true);
    expect(r.stats().workersStarted).toBe(0);
    r.close();
  });
});

/** A request straight to a worker, past the controller's checks: a kustomize one to the worker without Helm. */
function direct(job: Parameters<RenderWorkerPool['render']>[0], timeoutMs = 20_000): Promise<WorkerOutcome> {
  return (job.op === 'kustomize' ? kustomizePool : pool).render(job, { timeoutMs, maxOutputBytes: 16 << 20 });
}
const failed = (o: WorkerOutcome) => {
  if (o.ok) throw new Error(`expected a failure, got ${(o.yaml ?? o.objects).slice(0, 200)}`);
  expect(o.error).not.toContain(CANARY);
  return o;
};

describe('(2) below the checks, the worker and the kernel still confine', () => {
  it('a ../ escape: the root-confined filesystem refuses it', async () => {
    const root = await repo({ 'app/kustomization.yaml': 'resources: [../../../outside]\n' });
    const o = failed(await direct({ op: 'kustomize', kustomize: { root, dir: join(root, 'app') } }));
    expect(o.kind).toBe('failed');
    expect(o.error).toContain('outside the repository');
  });

  it('a symlink out: the root-confined filesystem refuses it', async () => {
    const root = await repo({
      'app/kustomization.yaml': 'resources: [leak.yaml]\n',
      'app/leak.yaml': { symlink: join(outside, 'secret.yaml') },
    });
    const o = failed(await direct({ op: 'kustomize', kustomize: { root, dir: join(root, 'app') } }));
    expect(o.error).toContain('outside the repository');
  });

  it('a read out of the directories the worker may read: the kernel denies it', async () => {
    const root = await repo({ 'app/kustomization.yaml': 'resources: [../../../outside]\n' });
    // the request claims the whole machine as its checkout: only Landlock is left to refuse
    const o = failed(await direct({ op: 'kustomize', kustomize: { root: '/', dir: join(root, 'app') } }));
    expect(o.error).toMatch(/permission denied/i);
  });

  it('a remote base: the kernel denies the TCP connection (the server is never contacted)', async () => {
    const root = await repo({ 'app/kustomization.yaml': `resources: ["http://127.0.0.1:${port}/base.yaml"]\n` });
    failed(await direct({ op: 'kustomize', kustomize: { root, dir: join(root, 'app') } }));
    expect(contacts).toEqual([]);
  });

  it('a git:: base: git cannot even be started', async () => {
    const root = await repo({ 'app/kustomization.yaml': `resources: ["git::http://127.0.0.1:${port}/r.git"]\n` });
    failed(await direct({ op: 'kustomize', kustomize: { root, dir: join(root, 'app') } }));
    expect(contacts).toEqual([]);
  });

  it('an exec plugin: kustomize refuses to run it (exec functions off), nothing runs', async () => {
    const marker = join(checkouts, `ran-${n}`);
    const root = await repo({
      'app/kustomization.yaml': 'resources: [cm.yaml]\ntransformers: [fn.yaml]\n',
      'app/cm.yaml': cm('ok', '{a: b}'),
      'app/run.sh': `#!/bin/sh\ntouch ${marker}\ncat\n`,
      'app/fn.yaml':
        'apiVersion: x/v1\nkind: Run\nmetadata:\n  name: x\n  annotations:\n    config.kubernetes.io/function: |\n      exec: {path: ./run.sh}\n',
    });
    await chmod(join(root, 'app/run.sh'), 0o755); // runnable, were kustomize to run it
    failed(await direct({ op: 'kustomize', kustomize: { root, dir: join(root, 'app') } }));
    expect(existsSync(marker)).toBe(false);
  });

  it('.Files.Get of a path out of the chart reads nothing', async () => {
    const root = await repo({
      'app/Chart.yaml': chart,
      'app/templates/cm.yaml': cm(
        'x',
        '{a: {{ .Files.Get "../../../outside/canary.txt" | quote }}, b: {{ .Files.Get "/etc/hostname" | quote }}}',
      ),
    });
    const o = await direct({
      op: 'helm',
      helm: { root, chart: join(root, 'app'), releaseName: 'web', namespace: 'x', includeCRDs: true },
    });
    if (!o.ok) throw new Error(o.error);
    expect(o.yaml).toContain('a: ""');
    expect(o.yaml).toContain('b: ""');
    expect(o.yaml).not.toContain(CANARY);
  });

  it('a values file out of the checkout: refused by the worker', async () => {
    const root = await repo({ 'app/Chart.yaml': chart, 'app/templates/cm.yaml': cm('x', '{a: b}') });
    const o = failed(
      await direct({
        op: 'helm',
        helm: {
          root,
          chart: join(root, 'app'),
          releaseName: 'web',
          namespace: 'x',
          includeCRDs: true,
          values: [{ path: join(outside, 'canary.txt') }],
        },
      }),
    );
    expect(o.error).toContain('outside the repository');
  });

  it('the environment is the allow-list: no variable of the controller reaches a generator', async () => {
    process.env.PACKAGESYNC_WORKER_CANARY = CANARY;
    try {
      const root = await repo({
        'app/kustomization.yaml': 'configMapGenerator: [{name: env, envs: [vars.env]}]\n',
        'app/vars.env': 'PACKAGESYNC_WORKER_CANARY\nPLAIN=1\n',
      });
      // a fresh pool: its workers start with this environment set in the controller
      const fresh = new RenderWorkerPool({ bin: tools.worker, size: 1, readRoots: [checkouts] });
      const o = await fresh.render(
        { op: 'kustomize', kustomize: { root, dir: join(root, 'app') } },
        { timeoutMs: 20_000, maxOutputBytes: 1 << 20 },
      );
      fresh.close();
      if (!o.ok) throw new Error(o.error);
      expect(o.yaml).toContain('PLAIN');
      expect(o.yaml).not.toContain(CANARY);
    } finally {
      delete process.env.PACKAGESYNC_WORKER_CANARY;
    }
  });
});

describe('(3) a package that loops or allocates without bound fails naming its file; the pool goes on', () => {
  const renderer = () =>
    createRenderer({
      ...worker,
      limits: { ...worker.limits, timeoutMs: 3_000 },
      worker: { ...worker.worker!, size: 2 },
    });

  it('an endless template: stopped at the timeout, twice, each time on a fresh worker; another package renders meanwhile', async () => {
    const loop = await repo({
      'app/Chart.yaml': chart,
      'app/templates/cm.yaml': '{{- range $i := until 100000 }}{{- range $j := until 100000 }}{{- end }}{{- end }}\n',
    });
    const good = await repo({ 'app/Chart.yaml': chart, 'app/templates/cm.yaml': cm('fine', '{a: b}') });
    const r = renderer();
    const started = performance.now();
    const [looped, fine] = await Promise.all([
      r.build(request(loop)),
      new Promise((res) => setTimeout(res, 500)).then(() => r.build(request(good))),
    ]);
    const seconds = (performance.now() - started) / 1000;
    r.close();
    if (looped.ok) throw new Error('expected a failure');
    expect(looped.failure.reason).toBe('RenderFailed');
    expect(looped.failure.message).toContain('helm template app ran longer than 3s rendering app/Chart.yaml');
    expect(looped.failure.message).toContain('twice, each time on a fresh render worker');
    expect(seconds).toBeLessThan(30);
    expect(fine.ok).toBe(true);
    expect(r.stats().workersReplaced).toBe(2);
  });

  it('a huge allocation: out of memory under the worker bound, said so', async () => {
    const root = await repo({
      'app/Chart.yaml': chart,
      'app/templates/cm.yaml': cm('x', '{n: {{ len (until 400000000) }}}'),
    });
    const r = renderer();
    const built = await r.build(request(root));
    r.close();
    if (built.ok) throw new Error('expected a failure');
    expect(built.failure.reason).toBe('RenderFailed');
    expect(built.failure.message).toMatch(/ran out of memory \(the render's limit is \d+ MiB/);
    expect(built.failure.message).not.toMatch(/goroutine \d+ \[/);
  });

  it('a template that recurses without end: the stack bound stops it, naming the template', async () => {
    const root = await repo({
      'app/Chart.yaml': chart,
      'app/templates/_r.tpl': '{{- define "r" -}}{{ template "r" . }}{{- end -}}\n',
      'app/templates/cm.yaml': cm('x', '{a: {{ template "r" . }}}'),
    });
    const r = renderer();
    const built = await r.build(request(root));
    r.close();
    if (built.ok) throw new Error('expected a failure');
    expect(built.failure.reason).toBe('RenderFailed');
    expect(built.failure.message).toMatch(
      /template recursion too deep in app\/templates|ran out of memory|exceeded max/,
    );
  });
});
