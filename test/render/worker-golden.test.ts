// Golden equality (issue 27): every kustomize and Helm package of the render tests renders byte-identical
// through the render worker (kustomize's api and Helm's SDK in-process, hack/render-worker) and through the
// pinned binaries (kustomize build / helm template, the subprocess path): the same text, not only the same
// objects. Both paths get the same checks and the same inputs (spec.kustomize edits, values layers,
// capabilities); both run under the kernel sandbox.
import { readdirSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HelmSpec, KustomizeSpec } from '../../src/api/packagesync.ts';
import { helmTemplate, type HelmCapabilities } from '../../src/adapters/render/helm.ts';
import { kustomizeBuild } from '../../src/adapters/render/kustomize.ts';
import { RenderWorkerPool } from '../../src/adapters/render/worker-pool.ts';
import { helmInWorker, kustomizeInWorker } from '../../src/adapters/render/worker-render.ts';
import { defaultToolPaths } from '../../src/config/tool-paths.ts';
import {
  objectsOfHelmObjects,
  objectsOfHelmOutput,
  objectsOfKustomizeObjects,
  objectsOfKustomizeOutput,
} from '../../src/core/render/built.ts';
import { bareHelm, bareKustomize, runBare } from '../support/bare-render.ts';

const testdata = join(import.meta.dirname, 'testdata');
const tools = defaultToolPaths();
const limits = { timeoutMs: 60_000, maxOutputBytes: 16 << 20, maxFiles: 10_000 };
let scratch: string;
let pool: RenderWorkerPool;
/** kustomize renders run on the worker built without Helm (render-worker-kustomize), as the controller runs them */
let kustomizePool: RenderWorkerPool;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'worker-golden-'));
  await cp(testdata, join(scratch, 'testdata'), { recursive: true });
  await writeTree(join(scratch, 'extra'), extraPackages);
  pool = new RenderWorkerPool({ bin: tools.worker, size: 2, readRoots: [scratch] });
  kustomizePool = new RenderWorkerPool({ bin: tools.workerKustomize, size: 2, readRoots: [scratch] });
});
afterAll(async () => {
  pool?.close();
  kustomizePool?.close();
  await rm(scratch, { recursive: true, force: true });
});

async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
}

const cm = (name: string, data: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n${data}`;

/** Packages beyond the fixtures: the kustomize and Helm features a worker could get subtly wrong. */
const extraPackages: Record<string, string> = {
  // generators, replacements, labels, a JSON 6902 patch file, a strategic merge patch, sortOptions
  'k/gen/kustomization.yaml': [
    'resources: [cm.yaml, deploy.yaml]',
    'namespace: team-a',
    'labels: [{pairs: {app.kubernetes.io/part-of: shop}, includeSelectors: false}]',
    'configMapGenerator:',
    '  - {name: env, envs: [vars.env], literals: [MODE=prod]}',
    'secretGenerator:',
    '  - {name: creds, literals: [token=abc], type: Opaque}',
    'replacements:',
    '  - source: {kind: ConfigMap, name: base, fieldPath: data.replicas}',
    '    targets: [{select: {kind: Deployment}, fieldPaths: [metadata.annotations.replicas], options: {create: true}}]',
    'patches:',
    '  - path: json-patch.yaml',
    '    target: {kind: Deployment, name: web}',
    '  - patch: |-',
    '      apiVersion: apps/v1',
    '      kind: Deployment',
    '      metadata: {name: web}',
    '      spec: {template: {spec: {containers: [{name: web, env: [{name: X, value: "1"}]}]}}}',
    'sortOptions: {order: fifo}',
    '',
  ].join('\n'),
  'k/gen/cm.yaml': cm('base', '  replicas: "3"\n  unicode: "grüße ✓"\n  folded: >\n    two\n    lines\n'),
  'k/gen/vars.env': 'A=1\nB=two words\n',
  'k/gen/json-patch.yaml': '- {op: add, path: /spec/minReadySeconds, value: 7}\n',
  'k/gen/deploy.yaml': [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata: {name: web, annotations: {a: b}}',
    'spec:',
    '  selector: {matchLabels: {app: web}}',
    '  template:',
    '    metadata: {labels: {app: web}}',
    '    spec: {containers: [{name: web, image: "nginx:1.27", envFrom: [{configMapRef: {name: env}}]}]}',
    '',
  ].join('\n'),
  // a value go-yaml v2 reads as octal (8): the edit once re-wrote it as 10 (session 17)
  'k/octal/kustomization.yaml': 'resources: [d.yaml]\nreplicas:\n  - name: web\n    count: 010\n',
  'k/octal/d.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 1}\n',
  // legacy fields still read by kustomize v5 (commonLabels, patchesStrategicMerge, vars) and a symlinked base
  'k/legacy/kustomization.yaml':
    'resources: [../gen]\ncommonLabels: {tier: web}\nnamePrefix: old-\npatchesStrategicMerge: [sm.yaml]\n',
  'k/legacy/sm.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 2}\n',
  // a chart with hooks (one a test hook), NOTES, helpers, tpl, .Files, lookup, capabilities, required values
  'h/hooks/Chart.yaml': 'apiVersion: v2\nname: hooks\nversion: 1.2.3\nappVersion: "9.9"\nkubeVersion: ">=1.20.0-0"\n',
  'h/hooks/values.yaml': 'greeting: hello\nlist: [a, b]\nnested: {x: 1}\n',
  'h/hooks/files/banner.txt': 'banner from .Files\n',
  'h/hooks/templates/NOTES.txt': 'notes are not manifests\n',
  'h/hooks/templates/_h.tpl': '{{- define "hooks.name" -}}{{ .Release.Name }}-{{ .Chart.Name }}{{- end -}}\n',
  'h/hooks/templates/cm.yaml':
    cm(
      '{{ include "hooks.name" . }}',
      [
        '  greeting: {{ tpl "{{ .Values.greeting }} from tpl" . | quote }}',
        '  banner: {{ .Files.Get "files/banner.txt" | quote }}',
        '  outside: {{ .Files.Get "../outside.txt" | quote }}',
        '  lookup: {{ lookup "v1" "Secret" "kube-system" "" | toJson | quote }}',
        '  kube: {{ .Capabilities.KubeVersion.Version | quote }}',
        '  helm: {{ .Capabilities.HelmVersion.Version | quote }}',
        '  hasIngress: {{ .Capabilities.APIVersions.Has "networking.k8s.io/v1/Ingress" | quote }}',
        '  list: {{ .Values.list | toYaml | nindent 4 | quote }}',
        '  ns: {{ .Release.Namespace }}',
        '  install: {{ .Release.IsInstall | quote }}',
        '',
      ].join('\n'),
    ) + '\n',
  'h/hooks/templates/pre-install.yaml':
    'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ include "hooks.name" . }}-pre\n  annotations:\n    "helm.sh/hook": pre-install,pre-upgrade\n    "helm.sh/hook-weight": "-5"\nspec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}\n',
  'h/hooks/templates/tests/t.yaml':
    'apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ include "hooks.name" . }}-test\n  annotations: {"helm.sh/hook": test}\nspec: {containers: [{name: c, image: busybox}]}\n',
  'h/hooks/templates/empty.yaml': '{{- if false }}\nkind: Nothing\n{{- end }}\n',
};

interface KCase {
  root: string;
  path: string;
  spec?: KustomizeSpec;
}
interface HCase {
  root: string;
  path: string;
  spec?: HelmSpec;
  valuesFrom?: string[];
  capabilities?: HelmCapabilities;
  releaseName?: string;
  namespace?: string;
  /** How the worker sends its output when asked for objects: as YAML where it repeats a key (the controller warns). */
  sentAs?: 'yaml';
}

const kustomizeCases: [string, () => KCase][] = [
  ['kustomize-repo overlays/prod', () => ({ root: join(scratch, 'testdata/kustomize-repo'), path: 'overlays/prod' })],
  ['kustomize-repo base', () => ({ root: join(scratch, 'testdata/kustomize-repo'), path: 'base' })],
  [
    'kustomize-repo overlays/prod with spec.kustomize (prefix, suffix, images, patches, components)',
    () => ({
      root: join(scratch, 'testdata/kustomize-repo'),
      path: 'overlays/prod',
      spec: {
        namePrefix: 'canary-',
        nameSuffix: '-v2',
        images: [{ name: 'nginx', newTag: '1.28.0' }],
        patches: [{ patch: '- op: add\n  path: /spec/minReadySeconds\n  value: 5\n', target: { kind: 'Deployment' } }],
      },
    }),
  ],
  ['generators, replacements, labels, patches', () => ({ root: join(scratch, 'extra'), path: 'k/gen' })],
  ['legacy fields over a base', () => ({ root: join(scratch, 'extra'), path: 'k/legacy' })],
  ['the repository root as the package', () => ({ root: join(scratch, 'extra/k/gen'), path: '.' })],
  ['a value go-yaml v2 reads as octal', () => ({ root: join(scratch, 'extra'), path: 'k/octal' })],
];

const caps: HelmCapabilities = {
  kubeVersion: 'v1.36.3',
  apiVersions: ['networking.k8s.io/v1', 'networking.k8s.io/v1/Ingress'],
};
const helmCases: [string, () => HCase][] = [
  [
    'helm-repo charts/web: values files, valuesFrom, inline values, CRDs, a vendored dependency, capabilities',
    () => ({
      root: join(scratch, 'testdata/helm-repo'),
      path: 'charts/web',
      spec: { valuesFiles: ['env/prod-values.yaml'], values: { tag: '1.27.3' }, includeCRDs: true },
      valuesFrom: ['database:\n  password: s3cr3t-from-secret\n'],
      capabilities: caps,
    }),
  ],
  [
    'helm-repo charts/web without CRDs and without the Ingress API',
    () => ({
      root: join(scratch, 'testdata/helm-repo'),
      path: 'charts/web',
      spec: { valuesFiles: ['env/prod-values.yaml'], includeCRDs: false },
      valuesFrom: ['database:\n  password: x\n'],
      capabilities: { kubeVersion: 'v1.36.3', apiVersions: [] },
    }),
  ],
  [
    "helm-repo charts/web with helm's default capabilities",
    () => ({
      root: join(scratch, 'testdata/helm-repo'),
      path: 'charts/web',
      spec: { valuesFiles: ['env/prod-values.yaml'] },
      valuesFrom: ['database:\n  password: x\n'],
    }),
  ],
  ['a vendored subchart alone', () => ({ root: join(scratch, 'testdata/helm-repo'), path: 'charts/web/charts/redis' })],
  ['yaml11-chart', () => ({ root: join(scratch, 'testdata/yaml11-chart'), path: '.', sentAs: 'yaml' })],
  [
    'hooks, a test hook, NOTES, tpl, .Files, lookup, capabilities, another release name and namespace',
    () => ({
      root: join(scratch, 'extra'),
      path: 'h/hooks',
      spec: { values: { greeting: 'no', list: ['0755', 'on'] } },
      capabilities: caps,
      releaseName: 'shop',
      namespace: 'store',
    }),
  ],
];

/**
 * The controller asks the worker for kustomize's output as JSON objects (hack/render-worker/objects.go): they must
 * be the objects the controller reads from the binary's YAML (core/render/parse.ts), origins and all.
 */
async function expectSameObjects(
  common: { checkoutRoot: string; packagePath: string; spec: KustomizeSpec | undefined; limits: typeof limits },
  binaryYaml: string,
  format: 'objects' | 'yaml' = 'objects',
): Promise<void> {
  const worker = await kustomizeInWorker({ ...common, pool: kustomizePool, objects: true });
  if (!worker.ok) throw new Error(worker.failure.message);
  expect(worker.value.format ?? 'yaml').toBe(format);
  const read =
    worker.value.format === 'objects'
      ? objectsOfKustomizeObjects(worker.value.stdout, common.packagePath)
      : objectsOfKustomizeOutput(worker.value.stdout, common.packagePath);
  expect(read).toEqual(objectsOfKustomizeOutput(binaryYaml, common.packagePath));
  if (common.spec !== undefined || !read.ok) return;
  // and, origins aside, what bare `kustomize build` prints for the package as committed: what the controller does
  // to the kustomization before the build (buildMetadata added) changes nothing else
  const home = join(scratch, 'home');
  await mkdir(home, { recursive: true });
  const bare = await runBare(bareKustomize(join(common.checkoutRoot, common.packagePath)), home);
  const asBuilt = objectsOfKustomizeOutput(bare.stdout, common.packagePath);
  if (!asBuilt.ok) throw new Error(asBuilt.failure.message);
  expect(read.value.map((o) => o.object)).toEqual(asBuilt.value.map((o) => o.object));
}

/** The same for Helm: the worker's `{source, object}` documents read to the objects of the binary's YAML. */
async function expectSameHelmObjects(
  input: Parameters<typeof helmInWorker>[0],
  binaryYaml: string,
  format: 'objects' | 'yaml' = 'objects',
): Promise<void> {
  const worker = await helmInWorker({ ...input, objects: true });
  if (!worker.ok) throw new Error(worker.failure.message);
  expect(worker.value.format ?? 'yaml').toBe(format);
  const read =
    worker.value.format === 'objects'
      ? objectsOfHelmObjects(worker.value.stdout, input.packagePath)
      : objectsOfHelmOutput(worker.value.stdout, input.packagePath);
  expect(read).toEqual(objectsOfHelmOutput(binaryYaml, input.packagePath));
}

describe('the render worker renders byte-identical to the pinned binaries', () => {
  it.each(kustomizeCases)('kustomize: %s', async (_, make) => {
    const c = make();
    const common = { checkoutRoot: c.root, packagePath: c.path, spec: c.spec, limits };
    const binary = await kustomizeBuild({ ...common, bin: tools.kustomize, scratchDir: scratch });
    const worker = await kustomizeInWorker({ ...common, pool: kustomizePool });
    if (!binary.ok) throw new Error(binary.failure.message);
    if (!worker.ok) throw new Error(worker.failure.message);
    expect(binary.value.stdout.length).toBeGreaterThan(0);
    expect(worker.value.stdout).toBe(binary.value.stdout);
    await expectSameObjects(common, binary.value.stdout);
  });

  it.each(helmCases)('helm: %s', async (_, make) => {
    const c = make();
    const common = {
      checkoutRoot: c.root,
      packagePath: c.path,
      spec: c.spec,
      releaseName: c.releaseName ?? 'web',
      namespace: c.namespace ?? 'prod',
      valuesFrom: c.valuesFrom ?? [],
      capabilities: c.capabilities,
      limits,
    };
    const binary = await helmTemplate({ ...common, bin: tools.helm, scratchDir: scratch });
    const worker = await helmInWorker({ ...common, pool });
    if (!binary.ok) throw new Error(binary.failure.message);
    if (!worker.ok) throw new Error(worker.failure.message);
    expect(binary.value.length).toBeGreaterThan(0);
    expect(worker.value.stdout).toBe(binary.value);
    await expectSameHelmObjects({ ...common, pool }, binary.value, c.sentAs ?? 'objects');
  });

  // The worker decodes with sigs.k8s.io/yaml, the controller's reader follows go-yaml v2 (parse.ts): on values the
  // two YAML versions read apart they agree, and what only the controller's reader judges comes as YAML.
  it.each([
    ['YAML 1.1 values (yes, on, 0755, 0x1F, 1_000, ~, 2001-12-14, 1e3, 1.0, -0)', 'objects', undefined],
    ['an explicit tag', 'yaml', undefined],
    ['an anchor and its alias (kustomize expands it)', 'objects', undefined],
    ['an integer past 2^53', 'yaml', 'is an integer too large to keep exactly'],
  ] as const)('kustomize output with %s: the same objects, or the same failure', async (name, format, failure) => {
    const spec: Record<string, string> = {
      'YAML 1.1 values (yes, on, 0755, 0x1F, 1_000, ~, 2001-12-14, 1e3, 1.0, -0)':
        '{a: yes, b: on, c: 0755, d: 0x1F, e: 1_000, f: ~, g: 2001-12-14, h: 1e3, i: 1.0, j: -0, k: "yes", l: 9007199254740991, m: "<&>"}',
      'an explicit tag': '{bin: !!binary aGVsbG8=, s: !!str 12}',
      'an anchor and its alias (kustomize expands it)': '{a: &shared {x: 1}, b: *shared}',
      'an integer past 2^53': '{n: 12345678901234567890}',
    };
    const root = join(scratch, 'extra');
    const dir = `k/values-${Object.keys(spec).indexOf(name)}`;
    await writeTree(root, {
      [`${dir}/kustomization.yaml`]: 'resources: [thing.yaml]\n',
      [`${dir}/thing.yaml`]: `apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec: ${spec[name]}\n`,
    });
    const common = { checkoutRoot: root, packagePath: dir, spec: undefined, limits };
    const binary = await kustomizeBuild({ ...common, bin: tools.kustomize, scratchDir: scratch });
    if (!binary.ok) throw new Error(binary.failure.message);
    const worker = await kustomizeInWorker({ ...common, pool: kustomizePool, objects: true });
    if (!worker.ok) throw new Error(worker.failure.message);
    expect(worker.value.format ?? 'yaml').toBe(format);
    if (failure) {
      const read = objectsOfKustomizeOutput(worker.value.stdout, dir);
      expect(read.ok ? '' : read.failure.message).toContain(failure);
      expect(read).toEqual(objectsOfKustomizeOutput(binary.value.stdout, dir));
      return;
    }
    await expectSameObjects(common, binary.value.stdout, format);
  });

  it('a chart whose output repeats a key comes as YAML: the controller reads it and warns, as before', async () => {
    const root = join(scratch, 'extra');
    await writeTree(root, {
      'h/dup/Chart.yaml': 'apiVersion: v2\nname: dup\nversion: 1.0.0\n',
      'h/dup/templates/cm.yaml': cm('dup', '  a: "1"\n  a: "2"\n') + '\n',
      'h/dup/templates/tests/t.yaml':
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\n  annotations: {"helm.sh/hook": test}\nspec: {containers: [{name: c, image: busybox}]}\n',
    });
    const common = {
      checkoutRoot: root,
      packagePath: 'h/dup',
      spec: undefined,
      releaseName: 'web',
      namespace: 'prod',
      valuesFrom: [],
      capabilities: undefined,
      limits,
    };
    const binary = await helmTemplate({ ...common, bin: tools.helm, scratchDir: scratch });
    if (!binary.ok) throw new Error(binary.failure.message);
    await expectSameHelmObjects({ ...common, pool }, binary.value, 'yaml');
    const read = objectsOfHelmOutput(binary.value, 'h/dup');
    expect(read.ok && read.value.map((o) => o.duplicateKeys)).toEqual([['data.a']]);
  });

  it('a build kustomize refuses fails with the same message on both paths', async () => {
    const root = join(scratch, 'extra');
    await writeTree(root, {
      'k/bad/kustomization.yaml':
        'resources: [../gen]\nreplacements:\n  - source: {kind: ConfigMap, name: base, fieldPath: data.replicas}\n    targets: [{select: {kind: Deployment}, fieldPaths: [spec.nothing.here]}]\n',
    });
    const common = { checkoutRoot: root, packagePath: 'k/bad', spec: undefined, limits };
    const binary = await kustomizeBuild({ ...common, bin: tools.kustomize, scratchDir: scratch });
    const worker = await kustomizeInWorker({ ...common, pool: kustomizePool });
    if (binary.ok || worker.ok) throw new Error('expected both to fail');
    expect(worker.failure).toEqual(binary.failure);
    expect(worker.failure.message).toContain('unable to find field "spec.nothing.here" in replacement target');
  });

  it('the hooks chart keeps its hook and drops its test hook, and lookup answers nothing, on both paths', async () => {
    const worker = await helmInWorker({
      checkoutRoot: join(scratch, 'extra'),
      packagePath: 'h/hooks',
      spec: undefined,
      releaseName: 'shop',
      namespace: 'store',
      valuesFrom: [],
      capabilities: caps,
      limits,
      pool,
    });
    if (!worker.ok) throw new Error(worker.failure.message);
    expect(worker.value.stdout).toContain('# Source: hooks/templates/pre-install.yaml');
    expect(worker.value.stdout).not.toContain('shop-hooks-test');
    expect(worker.value.stdout).toContain('lookup: "{}"');
    expect(worker.value.stdout).toContain('outside: ""');
    expect(worker.value.stdout).toContain('banner: "banner from .Files\\n"');
  });
});

/**
 * Public packages as their repositories hold them (testdata/public/SOURCES.md: podinfo, Flux's
 * kustomize-helm example, kustomize's own examples): every kustomization and chart found there renders
 * through the worker byte-identical to the pinned binary run bare on the package as committed (the upstream
 * tool's own output), and to the subprocess path on what the controller builds (origin annotations added).
 */
const publicDir = join(testdata, 'public');
const publicPackages = readdirSync(publicDir, { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile() && (e.name === 'kustomization.yaml' || e.name === 'Chart.yaml'))
  .map((e) => {
    const [repo = '', ...rest] = relative(publicDir, e.parentPath).split('/');
    return [
      `${repo}: ${rest.join('/')}`,
      repo,
      rest.join('/'),
      e.name === 'Chart.yaml' ? 'helm' : 'kustomize',
    ] as const;
  })
  .sort(([a], [b]) => a.localeCompare(b));

describe('public packages render byte-identical through the worker and through the pinned binaries', () => {
  it('finds every vendored kustomization and chart', () => {
    expect(publicPackages.filter(([, , , tool]) => tool === 'kustomize').length).toBeGreaterThanOrEqual(20);
    expect(publicPackages.map(([name]) => name)).toContain('stefanprodan-podinfo: charts/podinfo');
  });

  it.each(publicPackages)('%s', async (_, repo, path, tool) => {
    const root = join(scratch, 'testdata/public', repo);
    const common = { checkoutRoot: root, packagePath: path, spec: undefined, limits };
    const home = join(scratch, 'home');
    await mkdir(home, { recursive: true });
    if (tool === 'kustomize') {
      const bare = await runBare(bareKustomize(join(root, path)), home);
      // the package as committed, straight to the worker: exactly what `kustomize build` was given
      const asCommitted = await kustomizePool.render(
        { op: 'kustomize', kustomize: { root, dir: join(root, path), replace: {} } },
        { timeoutMs: limits.timeoutMs, maxOutputBytes: limits.maxOutputBytes },
      );
      expect(bare.ok).toBe(true);
      expect(bare.stdout.length).toBeGreaterThan(0);
      expect(asCommitted).toEqual({ ok: true, yaml: bare.stdout });
      const binary = await kustomizeBuild({ ...common, bin: tools.kustomize, scratchDir: scratch });
      const worker = await kustomizeInWorker({ ...common, pool: kustomizePool });
      if (!binary.ok) throw new Error(binary.failure.message);
      if (!worker.ok) throw new Error(worker.failure.message);
      expect(worker.value.stdout).toBe(binary.value.stdout);
      await expectSameObjects(common, binary.value.stdout);
      return;
    }
    const release = { releaseName: 'web', namespace: 'prod', valuesFrom: [], capabilities: undefined };
    const bare = await runBare(bareHelm({ chartDir: join(root, path) }), home);
    const binary = await helmTemplate({ ...common, ...release, bin: tools.helm, scratchDir: scratch });
    const worker = await helmInWorker({ ...common, ...release, pool });
    if (!binary.ok) throw new Error(binary.failure.message);
    if (!worker.ok) throw new Error(worker.failure.message);
    expect(bare.ok).toBe(true);
    expect(worker.value.stdout).toBe(bare.stdout);
    expect(worker.value.stdout).toBe(binary.value);
    await expectSameHelmObjects({ ...common, ...release, pool }, binary.value);
  });

  it("podinfo with its production values and a cluster's capabilities, on all three", async () => {
    const root = join(scratch, 'testdata/public/stefanprodan-podinfo');
    const chartDir = join(root, 'charts/podinfo');
    const common = {
      checkoutRoot: root,
      packagePath: 'charts/podinfo',
      spec: { valuesFiles: ['charts/podinfo/values-prod.yaml'], includeCRDs: true },
      releaseName: 'frontend',
      namespace: 'apps',
      valuesFrom: [],
      capabilities: caps,
      limits,
    };
    const bare = await runBare(
      bareHelm({
        chartDir,
        releaseName: 'frontend',
        namespace: 'apps',
        capabilities: caps,
        valuesFiles: [join(chartDir, 'values-prod.yaml')],
      }),
      scratch,
    );
    const binary = await helmTemplate({ ...common, bin: tools.helm, scratchDir: scratch });
    const worker = await helmInWorker({ ...common, pool });
    if (!binary.ok) throw new Error(binary.failure.message);
    if (!worker.ok) throw new Error(worker.failure.message);
    expect(worker.value.stdout).toContain('name: frontend-podinfo');
    expect(worker.value.stdout).toBe(bare.stdout);
    expect(worker.value.stdout).toBe(binary.value);
  });
});
