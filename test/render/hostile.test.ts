// Bad and hostile packages: each is refused or fails with a condition naming the file and the entry, runs
// nothing it should not, and leaks no path of the controller's filesystem. (That nothing is applied or
// pruned after such a failure is checked on the real control plane: e2e/render-kustomize.test.ts.)
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRenderer, type BuildRequest, type RenderToolsConfig } from '../../src/adapters/render/build.ts';
import { runTool } from '../../src/adapters/render/run-tool.ts';
import { defaultToolPaths } from '../../src/config/tool-paths.ts';

const tools = defaultToolPaths();
const config: RenderToolsConfig = {
  kustomizePath: tools.kustomize,
  helmPath: tools.helm,
  limits: { timeoutMs: 30_000, maxOutputBytes: 16 << 20, maxFiles: 10_000 },
  cacheEntries: 0,
};
let base: string;
let n = 0;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'render-hostile-'));
});
afterAll(() => rm(base, { recursive: true, force: true }));

/** A checkout: files (content, or {link: target} for a symlink) under <base>/<case>/repo; `outside` beside it. */
async function repo(files: Record<string, string | { link: string }>): Promise<string> {
  const dir = join(base, `case-${++n}`);
  const root = join(dir, 'repo');
  await mkdir(join(dir, 'outside'), { recursive: true });
  await writeFile(join(dir, 'outside', 'kustomization.yaml'), 'resources: [secret.yaml]\n');
  await writeFile(join(dir, 'outside', 'secret.yaml'), 'apiVersion: v1\nkind: Secret\nmetadata: {name: stolen}\n');
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    if (typeof content === 'string') await writeFile(join(root, path), content);
    else await symlink(content.link, join(root, path));
  }
  return root;
}

const request = (root: string, packagePath = 'app', extra: Partial<BuildRequest> = {}): BuildRequest => ({
  checkoutRoot: root,
  packagePath,
  files: [],
  spec: {},
  releaseName: 'web',
  releaseNamespace: 'team-a',
  ...extra,
});

const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n';

async function failure(root: string, extra: Partial<BuildRequest> = {}, cfg: Partial<RenderToolsConfig> = {}) {
  const built = await createRenderer({ ...config, ...cfg }).build(request(root, 'app', extra));
  if (built.ok) throw new Error('expected a failure');
  // the controller's filesystem never shows: no scratch dir, no checkout path
  expect(built.failure.message).not.toContain(base);
  expect(built.failure.message).not.toContain(tmpdir() + '/');
  return built.failure;
}

describe('kustomize: refused before anything runs', () => {
  it.each([
    [
      'a base outside the repository through ..',
      { 'app/kustomization.yaml': 'resources:\n  - ../../outside\n' },
      'RenderRefused',
      ['app/kustomization.yaml', 'resources entry "../../outside"', 'outside the repository'],
    ],
    [
      'a base outside the repository through a symlinked directory',
      { 'app/kustomization.yaml': 'resources: [evil]\n', 'app/evil': { link: '../../outside' } },
      'RenderRefused',
      ['app/kustomization.yaml', 'resources entry "evil"', 'outside the repository'],
    ],
    [
      'a resource file that is a symlink to a host file',
      { 'app/kustomization.yaml': 'resources: [cm.yaml]\n', 'app/cm.yaml': { link: '/etc/hostname' } },
      'RenderRefused',
      ['app/kustomization.yaml', 'resources entry "cm.yaml"', 'outside the repository'],
    ],
    [
      'an escape in a base the package reaches',
      {
        'app/kustomization.yaml': 'resources: [../lib]\n',
        'lib/kustomization.yaml': 'configMapGenerator:\n  - name: x\n    files: [/etc/passwd]\n',
      },
      'RenderRefused',
      ['lib/kustomization.yaml', 'configMapGenerator files entry "/etc/passwd"', 'outside the repository'],
    ],
    [
      'a remote base (git over https)',
      { 'app/kustomization.yaml': 'resources:\n  - https://github.com/org/repo//deploy?ref=v1\n' },
      'RenderRefused',
      ['app/kustomization.yaml', 'resources entry "https://github.com/org/repo//deploy?ref=v1"', 'remote bases'],
    ],
    [
      'a remote base (host/path form)',
      { 'app/kustomization.yaml': 'resources:\n  - github.com/org/repo/deploy?ref=v1\n' },
      'RenderRefused',
      ['app/kustomization.yaml', 'github.com/org/repo/deploy?ref=v1', 'remote bases'],
    ],
    [
      'an exec KRM function',
      {
        'app/kustomization.yaml': 'resources: [cm.yaml]\ntransformers: [fn.yaml]\n',
        'app/cm.yaml': cm,
        'app/fn.yaml':
          'apiVersion: x/v1\nkind: Run\nmetadata:\n  name: x\n  annotations:\n    config.kubernetes.io/function: |\n      exec: {path: /bin/sh}\n',
      },
      'RenderRefused',
      ['app/kustomization.yaml', 'transformers entry "fn.yaml"', 'KRM function'],
    ],
    [
      'a containerized KRM function as a generator',
      {
        'app/kustomization.yaml': 'generators: [gen.yaml]\n',
        'app/gen.yaml':
          'apiVersion: x/v1\nkind: Gen\nmetadata:\n  name: x\n  annotations:\n    config.kubernetes.io/function: |\n      container: {image: evil}\n',
      },
      'RenderRefused',
      ['app/kustomization.yaml', 'generators entry "gen.yaml"', 'KRM function'],
    ],
    [
      'a Go or legacy exec plugin (a kind kustomize does not build in)',
      {
        'app/kustomization.yaml': 'transformers: [plugin.yaml]\n',
        'app/plugin.yaml': 'apiVersion: someteam.example.com/v1\nkind: ChartInflator\nmetadata: {name: x}\n',
      },
      'RenderRefused',
      ['app/kustomization.yaml', 'transformers entry "plugin.yaml"', 'ChartInflator plugin'],
    ],
    [
      'helmCharts (kustomize --enable-helm)',
      { 'app/kustomization.yaml': 'helmCharts:\n  - name: redis\n    repo: https://charts.example.com\n' },
      'RenderRefused',
      ['app/kustomization.yaml', 'helmCharts', 'spec.helm'],
    ],
    [
      'a syntax error',
      { 'app/kustomization.yaml': 'resources:\n  - cm.yaml\n bad: [\n' },
      'RenderFailed',
      ['app/kustomization.yaml', 'line 3'],
    ],
    [
      'a missing base',
      { 'app/kustomization.yaml': 'resources: [../base]\n' },
      'RenderFailed',
      ['app/kustomization.yaml', 'resources entry "../base" does not exist'],
    ],
    [
      'a base directory without a kustomization',
      { 'app/kustomization.yaml': 'resources: [../base]\n', 'base/cm.yaml': cm },
      'RenderFailed',
      ['base holds no kustomization.yaml'],
    ],
    [
      'spec.kustomize.components naming a URL',
      { 'app/kustomization.yaml': 'resources: [cm.yaml]\n', 'app/cm.yaml': cm },
      'RenderRefused',
      ['spec.kustomize.components', 'https://example.com/c'],
    ],
  ] as const)('%s', async (name, files, reason, phrases) => {
    const root = await repo(files as Record<string, string | { link: string }>);
    const extra = name.startsWith('spec.kustomize')
      ? { spec: { kustomize: { components: ['https://example.com/c'] } } }
      : {};
    const f = await failure(root, extra);
    expect(f.reason).toBe(reason);
    expect(f.terminal).toBe(true);
    for (const phrase of phrases) expect(f.message).toContain(phrase);
  });

  it('spec.kustomize fields that need a kustomize build, on a plain package', async () => {
    const root = await repo({ 'app/cm.yaml': cm });
    const f = await failure(root, {
      spec: { kustomize: { images: [{ name: 'nginx', newTag: '1' }], namePrefix: 'x-' } },
    });
    expect(f.reason).toBe('RenderRefused');
    expect(f.message).toContain('spec.kustomize.images, spec.kustomize.namePrefix need a kustomization');
    expect(f.message).toContain('app holds no kustomization.yaml');
  });

  it('an error kustomize finds itself names the file, repo-relative', async () => {
    const root = await repo({
      'app/kustomization.yaml': 'resources: [cm.yaml]\npatches:\n  - path: patch.yaml\n',
      'app/cm.yaml': cm,
      'app/patch.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: missing-target}\ndata: {a: b}\n',
    });
    const f = await failure(root);
    expect(f.reason).toBe('RenderFailed');
    expect(f.message).toMatch(/^kustomize build app failed \(exit 1\): /);
    expect(f.message).toContain('missing-target');
  });

  it('output beyond the limit stops the tool', async () => {
    const root = await repo({ 'app/kustomization.yaml': 'resources: [cm.yaml]\n', 'app/cm.yaml': cm });
    const f = await failure(root, {}, { limits: { ...config.limits, maxOutputBytes: 10 } });
    expect(f.reason).toBe('RenderFailed');
    expect(f.message).toContain('wrote more than 10 bytes');
    expect(f.terminal).toBe(true);
  });

  it('a missing kustomize binary says which flag names it, and is retried', async () => {
    const root = await repo({ 'app/kustomization.yaml': 'resources: [cm.yaml]\n', 'app/cm.yaml': cm });
    const f = await failure(root, {}, { kustomizePath: '/nonexistent/packagesync/kustomize' });
    expect(f.message).toContain('kustomize binary is missing');
    expect(f.message).toContain('--kustomize-path');
    expect(f.terminal).toBe(false);
  });
});

describe('helm: refused or failing with the file named', () => {
  const chart = { 'app/Chart.yaml': 'apiVersion: v2\nname: app\nversion: 0.1.0\n' };

  it('a template error names the template', async () => {
    const root = await repo({ ...chart, 'app/templates/cm.yaml': 'kind: ConfigMap\nname: {{ .Values.x.y.z }}\n' });
    const f = await failure(root);
    expect(f.reason).toBe('RenderFailed');
    expect(f.message).toContain('helm template app failed');
    expect(f.message).toContain('templates/cm.yaml');
  });

  it('a dependency that would need a download', async () => {
    const root = await repo({
      'app/Chart.yaml':
        'apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n  - name: redis\n    version: 1.0.0\n    repository: https://charts.example.com\n',
      'app/templates/cm.yaml': cm,
    });
    const f = await failure(root);
    expect(f.reason).toBe('RenderFailed');
    expect(f.message).toContain('redis');
    expect(f.message).toContain("vendor them into the chart's charts/ directory");
  });

  it('a symlink in the chart pointing outside the repository', async () => {
    const root = await repo({ ...chart, 'app/templates/cm.yaml': cm, 'app/files': { link: '../../outside' } });
    const f = await failure(root);
    expect(f.reason).toBe('RenderRefused');
    expect(f.message).toContain('app/files is a symlink that points outside the repository');
  });

  it('a values file outside the repository', async () => {
    const root = await repo({ ...chart, 'app/templates/cm.yaml': cm });
    const f = await failure(root, { spec: { helm: { valuesFiles: ['../outside/secret.yaml'], includeCRDs: true } } });
    expect(f.reason).toBe('RenderRefused');
    expect(f.message).toContain('spec.helm.valuesFiles entry "../outside/secret.yaml"');
  });

  it('a value from a Secret never shows in a failure', async () => {
    const root = await repo({ ...chart, 'app/templates/cm.yaml': 'kind: ConfigMap\ndata: {{ .Values.password }\n' });
    const f = await failure(root, { valuesFrom: ['password: hunter2-very-secret\n'] });
    expect(f.message).not.toContain('hunter2');
  });
});

describe('the sandboxed runner', () => {
  const run = (bin: string, args: string[], extra: { timeoutMs?: number; maxOutputBytes?: number } = {}) =>
    runTool({
      bin,
      args,
      cwd: base,
      // these helpers are dynamic C programs: under the render sandbox they need the C library's files (and
      // sh its sleep); the Go render tools are static and get none of these
      reads: ['/lib', '/lib64', '/usr/lib', '/usr/lib64', '/etc/ld.so.cache', '/usr/bin', '/bin'],
      timeoutMs: 10_000,
      maxOutputBytes: 1 << 20,
      hidePaths: [],
      ...extra,
    });

  it('inherits no environment: no credential of the controller reaches the tool', async () => {
    process.env.PACKAGESYNC_TEST_SECRET_TOKEN = 'must-not-leak';
    try {
      const out = await run('/usr/bin/env', []);
      if (!out.ok) throw new Error(out.stderr);
      const names = out.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('=')[0]);
      expect(names.sort()).toEqual(
        [
          'PATH',
          'HOME',
          'XDG_CONFIG_HOME',
          'XDG_CACHE_HOME',
          'XDG_DATA_HOME',
          'HELM_CONFIG_HOME',
          'HELM_CACHE_HOME',
          'HELM_DATA_HOME',
          'HELM_PLUGINS',
          'HELM_REGISTRY_CONFIG',
          'HELM_REPOSITORY_CONFIG',
          'KUBECONFIG',
          'LANG',
          // set by the render sandbox under its address-space bound (docs/adr/0033)
          'GOMEMLIMIT',
        ].sort(),
      );
      expect(out.stdout).not.toContain('must-not-leak');
      expect(out.stdout).not.toContain(process.env.HOME ?? '/root');
    } finally {
      delete process.env.PACKAGESYNC_TEST_SECRET_TOKEN;
    }
  });

  it('an endless output is killed at the byte limit', async () => {
    const out = await run('/usr/bin/yes', [], { maxOutputBytes: 1 << 20 });
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.kind).toBe('too-large');
  });

  it('a run past the time limit is killed, with what it started', async () => {
    const out = await run('/bin/sh', ['-c', 'sleep 30 & sleep 30'], { timeoutMs: 300 });
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.kind).toBe('timeout');
  });
});
