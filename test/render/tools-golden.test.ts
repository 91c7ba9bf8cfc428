// Kustomize and Helm packages render exactly as the upstream binaries render them: for each fixture, the
// objects our build step hands to normalisation (origin annotations read and removed, nothing of ours added
// yet) equal the documents of `kustomize build` / `helm template` run directly on the same directory, in
// the same order, serialised the same way. The binaries are the pinned ones (hack/build-cluster.sh).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createRenderer, type BuildRequest } from '../../src/adapters/render/build.ts';
import { defaultToolPaths } from '../../src/config/tool-paths.ts';
import { parseManifestFile } from '../../src/core/render/parse.ts';
import { bareHelm } from '../support/bare-render.ts';

const testdata = join(import.meta.dirname, 'testdata');
const tools = defaultToolPaths();
const renderer = createRenderer({
  kustomizePath: tools.kustomize,
  helmPath: tools.helm,
  limits: { timeoutMs: 60_000, maxOutputBytes: 16 << 20, maxFiles: 10_000 },
});
const scratch = mkdtempSync(join(tmpdir(), 'tools-golden-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Upstream's stdout, document by document, as data: read as kubectl reads it (go-yaml v2, docs/adr/0034). */
function documentsOf(stdout: string): unknown[] {
  const parsed = parseManifestFile({ path: 'stdout', content: stdout }, { duplicateKeys: 'lastWins' });
  if (!parsed.ok) throw new Error(parsed.failure.message);
  return parsed.value.map((d) => d.value);
}

const request = (root: string, packagePath: string, extra: Partial<BuildRequest> = {}): BuildRequest => ({
  checkoutRoot: root,
  packagePath,
  files: [],
  spec: {},
  releaseName: 'web',
  releaseNamespace: 'prod',
  ...extra,
});

describe('kustomize packages render as kustomize build renders them', () => {
  const root = join(testdata, 'kustomize-repo');

  it('an overlay with a base elsewhere in the repository, a component, generators, patches, images, replicas', async () => {
    const upstream = execFileSync(tools.kustomize, ['build', join(root, 'overlays/prod')], { encoding: 'utf8' });
    const built = await renderer.build(request(root, 'overlays/prod'));
    if (!built.ok) throw new Error(built.failure.message);
    expect(built.value.tool).toBe('kustomize');
    const ours = built.value.objects.map((o) => o.object);
    expect(ours.length).toBeGreaterThanOrEqual(5);
    expect(stringify(ours)).toBe(stringify(documentsOf(upstream)));
    // each object names the file that produced it, repo-relative
    const where = Object.fromEntries(
      built.value.objects.map((o) => [`${o.object.kind}/${o.object.metadata.name}`, o.where.path]),
    );
    expect(where).toMatchObject({
      'Service/prod-web': 'base/service.yaml',
      'ConfigMap/prod-monitoring': 'components/monitoring/servicemonitor-config.yaml',
      'Secret/prod-web-secret-879htmcftm': 'overlays/prod/kustomization.yaml',
    });
    expect(where['ConfigMap/prod-web-config-62g7hbc6kk']).toMatch(/^(base|overlays\/prod)\/kustomization\.yaml$/);
    // The component's JSON patch replaces the Deployment's whole annotations map, origin included: kustomize
    // then names the component as the object's origin. Still a file of the repository.
    expect(where['Deployment/prod-web']).toMatch(
      /^(base\/deployment\.yaml|components\/monitoring\/kustomization\.yaml)$/,
    );
    expect(JSON.stringify(ours)).not.toContain('config.kubernetes.io/origin');
  });

  it('the base alone', async () => {
    const upstream = execFileSync(tools.kustomize, ['build', join(root, 'base')], { encoding: 'utf8' });
    const built = await renderer.build(request(root, 'base'));
    if (!built.ok) throw new Error(built.failure.message);
    expect(stringify(built.value.objects.map((o) => o.object))).toBe(stringify(documentsOf(upstream)));
  });

  it("spec.kustomize edits the kustomization as Flux's generator does (here checked against kustomize on the edited file)", async () => {
    const spec = {
      namePrefix: 'canary-',
      images: [{ name: 'nginx', newTag: '1.28.0' }],
      patches: [{ patch: '- op: add\n  path: /spec/minReadySeconds\n  value: 5\n', target: { kind: 'Deployment' } }],
    };
    // the same edit, by hand, in a copy: what kustomize-controller would build
    const copy = join(scratch, 'flux');
    execFileSync('cp', ['-r', root, copy]);
    const edited = `${execFileSync('cat', [join(copy, 'overlays/prod/kustomization.yaml')], { encoding: 'utf8' })
      .replace('namePrefix: prod-', 'namePrefix: canary-')
      .replace('newTag: "1.27.3"', 'newTag: "1.28.0"')}
patches:
  - path: resources.yaml
  - patch: |
      - op: add
        path: /spec/minReadySeconds
        value: 5
    target: {kind: Deployment}
`.replace(/\npatches:\n {2}- path: resources.yaml\n/, '\n');
    writeFileSync(join(copy, 'overlays/prod/kustomization.yaml'), edited);
    const upstream = execFileSync(tools.kustomize, ['build', join(copy, 'overlays/prod')], { encoding: 'utf8' });
    const built = await renderer.build(request(root, 'overlays/prod', { spec: { kustomize: spec } }));
    if (!built.ok) throw new Error(built.failure.message);
    expect(stringify(built.value.objects.map((o) => o.object))).toBe(stringify(documentsOf(upstream)));
    const deploy = built.value.objects.find((o) => o.object.kind === 'Deployment')?.object as unknown as {
      metadata: { name: string };
      spec: { minReadySeconds: number; template: { spec: { containers: { image: string }[] } } };
    };
    expect(deploy.metadata.name).toBe('canary-web');
    expect(deploy.spec.minReadySeconds).toBe(5);
    expect(deploy.spec.template.spec.containers[0]?.image).toBe('nginx:1.28.0');
  });
});

describe('helm charts render as helm template renders them', () => {
  const root = join(testdata, 'helm-repo');
  const secretValues = 'database:\n  password: s3cr3t-from-secret\n';
  const capabilities = {
    kubeVersion: 'v1.36.3',
    apiVersions: ['networking.k8s.io/v1', 'networking.k8s.io/v1/Ingress'],
  };

  it('a chart with values files, values from a Secret, inline values, CRDs, a vendored dependency and capabilities', async () => {
    const valuesFile = join(scratch, 'secret-values.yaml');
    writeFileSync(valuesFile, secretValues);
    const inline = join(scratch, 'inline.yaml');
    writeFileSync(inline, 'tag: "1.27.3"\n');
    const bare = bareHelm({
      chartDir: join(root, 'charts/web'),
      capabilities,
      valuesFiles: [join(root, 'env/prod-values.yaml'), valuesFile, inline],
    });
    const upstream = execFileSync(bare.bin, bare.args, {
      encoding: 'utf8',
      cwd: bare.cwd,
      env: { PATH: '/usr/bin:/bin', HOME: scratch },
    });
    const built = await renderer.build(
      request(root, 'charts/web', {
        spec: { helm: { valuesFiles: ['env/prod-values.yaml'], values: { tag: '1.27.3' }, includeCRDs: true } },
        valuesFrom: [secretValues],
        capabilities,
      }),
    );
    if (!built.ok) throw new Error(built.failure.message);
    expect(built.value.tool).toBe('helm');
    const ours = built.value.objects.map((o) => o.object);
    // upstream minus the test hook (helm template --skip-tests keeps none here; the filter is ours too)
    expect(stringify(ours)).toBe(stringify(documentsOf(upstream)));
    const kinds = ours.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'CustomResourceDefinition/widgets.example.com',
        'Ingress/web-web',
        'Service/web-redis',
        'Job/web-web-migrate',
      ]),
    );
    expect(kinds.some((k) => k.endsWith('-test'))).toBe(false);
    const where = Object.fromEntries(
      built.value.objects.map((o) => [`${o.object.kind}/${o.object.metadata.name}`, o.where.path]),
    );
    expect(where).toMatchObject({
      'Deployment/web-web': 'charts/web/templates/deployment.yaml',
      'Service/web-redis': 'charts/web/charts/redis/templates/service.yaml',
      'CustomResourceDefinition/widgets.example.com': 'charts/web/crds/widgets.yaml',
    });
  });

  it('without the Ingress API the chart branches as it would on such a cluster', async () => {
    const built = await renderer.build(
      request(root, 'charts/web', {
        spec: { helm: { valuesFiles: ['env/prod-values.yaml'], includeCRDs: false } },
        valuesFrom: [secretValues],
        capabilities: { kubeVersion: 'v1.36.3', apiVersions: [] },
      }),
    );
    if (!built.ok) throw new Error(built.failure.message);
    const kinds = built.value.objects.map((o) => o.object.kind);
    expect(kinds).not.toContain('Ingress');
    expect(kinds).not.toContain('CustomResourceDefinition');
  });
});
