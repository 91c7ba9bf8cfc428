/**
 * Golden equality on real public repositories (issue 27, item 3): every kustomization and every chart found
 * in the given checkouts is rendered through the render worker (kustomize's api and Helm's SDK in-process,
 * with the same checks the controller runs first) and through the pinned binaries run bare
 * (test/support/bare-render.ts), and the two stdouts are compared byte for byte. Prints one row per package.
 *
 *   node hack/render-golden-public.ts DIR...      (each DIR a repository's files, e.g. `git archive | tar -x`)
 *
 * Exits 1 when any package renders differently, or renders on one side and fails on the other. Packages both
 * sides refuse (a remote base with no network, a chart whose dependencies are not vendored) are listed as such.
 * A selection of these packages is vendored under test/render/testdata/public and kept so by
 * test/render/worker-golden.test.ts.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { RenderWorkerPool } from '../src/adapters/render/worker-pool.ts';
import { helmInWorker, kustomizeInWorker } from '../src/adapters/render/worker-render.ts';
import { helmTemplate } from '../src/adapters/render/helm.ts';
import { kustomizeBuild } from '../src/adapters/render/kustomize.ts';
import type { Result } from '../src/core/failure.ts';
import { defaultToolPaths } from '../src/config/tool-paths.ts';
import { bareHelm, bareKustomize, runBare } from '../test/support/bare-render.ts';

const roots = process.argv.slice(2).map((d) => resolve(d));
if (roots.length === 0) {
  console.error('usage: node hack/render-golden-public.ts DIR...');
  process.exit(2);
}
const tools = defaultToolPaths();
const limits = { timeoutMs: 60_000, maxOutputBytes: 64 << 20, maxFiles: 20_000 };
const home = await mkdtemp(join(tmpdir(), 'golden-public-home-'));
const pool = new RenderWorkerPool({ bin: tools.worker, size: 1, readRoots: roots });

const KUSTOMIZATION = new Set(['kustomization.yaml', 'kustomization.yml', 'Kustomization']);

async function packagesOf(root: string): Promise<{ tool: 'kustomize' | 'helm'; path: string }[]> {
  const found: { tool: 'kustomize' | 'helm'; path: string }[] = [];
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = relative(root, entry.parentPath) || '.';
    if (KUSTOMIZATION.has(entry.name)) found.push({ tool: 'kustomize', path });
    if (entry.name === 'Chart.yaml') found.push({ tool: 'helm', path });
  }
  return found.sort((a, b) => a.path.localeCompare(b.path));
}

const firstLine = (s: string) => s.trim().split('\n')[0]?.slice(0, 100) ?? '';
type Side = { ok: true; text: string } | { ok: false; error: string };
const mapOk = <A, B>(r: Result<A>, f: (a: A) => B): Result<B> => (r.ok ? { ok: true, value: f(r.value) } : r);
const side = (r: Result<string>): Side =>
  r.ok ? { ok: true, text: r.value } : { ok: false, error: r.failure.message };

/** One comparison's cell; counts what differs. */
let differing = 0;
function compare(a: Side, b: Side): string {
  if (a.ok && b.ok) {
    if (a.text === b.text) return `identical (${a.text.length} bytes)`;
    differing++;
    return 'DIFFERENT';
  }
  if (!a.ok && !b.ok) return `both fail: "${firstLine(a.error)}" / "${firstLine(b.error)}"`;
  differing++;
  return `ONE SIDE FAILS: "${firstLine(a.ok ? (b as { error: string }).error : a.error)}"`;
}

/**
 * kustomize: the worker on the package as committed (no edit: exactly what `kustomize build` is given) against
 * the bare binary, and the worker against the subprocess path on what the controller builds (the
 * kustomization with its origin annotations added, the same checks first). Helm: the worker against the bare
 * binary, and against the subprocess path.
 */
async function kustomizeRows(root: string, path: string): Promise<[string, string]> {
  const common = { checkoutRoot: root, packagePath: path, spec: undefined, limits };
  const viaWorker = side(await kustomizeInWorker({ ...common, pool }).then((r) => mapOk(r, (v) => v.stdout)));
  const viaSubprocess = side(
    await kustomizeBuild({ ...common, bin: tools.kustomize, scratchDir: home }).then((r) => mapOk(r, (v) => v.stdout)),
  );
  const bare = await runBare(bareKustomize(join(root, path)), home);
  // as committed, through the worker: only once the controller's checks passed (no remote base, no plugin)
  let asCommitted: Side = viaWorker;
  if (viaWorker.ok) {
    const raw = await pool.render(
      { op: 'kustomize', kustomize: { root, dir: join(root, path), replace: {} } },
      { timeoutMs: limits.timeoutMs, maxOutputBytes: limits.maxOutputBytes },
    );
    asCommitted = raw.ok ? { ok: true, text: raw.yaml ?? '' } : { ok: false, error: raw.error };
  }
  const bareSide: Side = bare.ok ? { ok: true, text: bare.stdout } : { ok: false, error: bare.stderr };
  return [compare(asCommitted, bareSide), compare(viaWorker, viaSubprocess)];
}

async function helmRows(root: string, path: string): Promise<[string, string]> {
  const common = {
    checkoutRoot: root,
    packagePath: path,
    spec: undefined,
    limits,
    releaseName: 'web',
    namespace: 'prod',
    valuesFrom: [],
    capabilities: undefined,
  };
  const worker = await helmInWorker({ ...common, pool });
  const viaWorker = side(worker.ok ? { ok: true, value: worker.value.stdout } : worker);
  const viaSubprocess = side(await helmTemplate({ ...common, bin: tools.helm, scratchDir: home }));
  const bare = await runBare(bareHelm({ chartDir: join(root, path) }), home);
  const bareSide: Side = bare.ok ? { ok: true, text: bare.stdout } : { ok: false, error: bare.stderr };
  return [compare(viaWorker, bareSide), compare(viaWorker, viaSubprocess)];
}

console.log('| repository | package | tool | worker vs bare binary | worker vs subprocess path |');
console.log('|---|---|---|---|---|');
for (const root of roots) {
  for (const { tool, path } of await packagesOf(root)) {
    const [bare, subprocess] = tool === 'kustomize' ? await kustomizeRows(root, path) : await helmRows(root, path);
    console.log(`| ${root.split('/').at(-1)} | ${path} | ${tool} | ${bare} | ${subprocess} |`);
  }
}
pool.close();
await rm(home, { recursive: true, force: true });
process.exit(differing > 0 ? 1 : 0);
