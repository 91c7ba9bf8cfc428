// postBuild substitution runs on what kustomize built, as Flux runs it on kustomize-controller's output: a
// `${NS}` namespace and a `${ENV}` value come out substituted, and the render cache keeps the tool's output
// only, so other variables on the next build give other objects without running kustomize again.
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRenderer, type BuildRequest } from '../../src/adapters/render/build.ts';
import { defaultToolPaths } from '../../src/config/tool-paths.ts';

const tools = defaultToolPaths();
const limits = { timeoutMs: 60_000, maxOutputBytes: 16 << 20, maxFiles: 10_000 };
let repo: string;

beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), 'psync-subst-built-'));
  await mkdir(join(repo, 'app'));
  await writeFile(
    join(repo, 'app', 'kustomization.yaml'),
    'resources: [cm.yaml]\nconfigMapGenerator:\n  - name: settings\n    literals:\n      - MODE=${ENV}\n',
  );
  await writeFile(
    join(repo, 'app', 'cm.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-${ENV}\n  namespace: ${NS}\ndata:\n  env: ${ENV}\n',
  );
});
afterAll(() => rm(repo, { recursive: true, force: true }));

const request = (variables: Record<string, string>): BuildRequest => ({
  checkoutRoot: repo,
  packagePath: 'app',
  commit: 'c'.repeat(40),
  files: [],
  spec: {},
  releaseName: 'web',
  releaseNamespace: 'team-a',
  substitution: { variables, strict: true },
});

describe('postBuild substitution on a kustomize build', () => {
  it('substitutes every built object, before its checks; never from the cache', async () => {
    const r = createRenderer({ kustomizePath: tools.kustomize, helmPath: tools.helm, limits });
    const prod = await r.build(request({ ENV: 'prod', NS: 'team-x' }));
    expect(prod.ok).toBe(true);
    if (!prod.ok) return;
    const cm = prod.value.objects.find((o) => o.object.metadata.name === 'app-prod')!;
    expect(cm.object).toMatchObject({ metadata: { namespace: 'team-x' }, data: { env: 'prod' } });
    expect(cm.where.path).toBe('app/cm.yaml');
    const generated = prod.value.objects.find((o) => o.object.metadata.name.startsWith('settings-'))!;
    expect(generated.object).toMatchObject({ data: { MODE: 'prod' } });

    const dev = await r.build(request({ ENV: 'dev', NS: 'team-y' }));
    expect(r.stats()).toMatchObject({ toolRuns: 1, cacheHits: 1 });
    expect(dev.ok && dev.value.objects.map((o) => o.object.metadata.name)).toContain('app-dev');

    // strict: a variable nobody defined fails, naming the object, its file and the variable
    const missing = await r.build(request({ ENV: 'prod' }));
    expect(missing.ok).toBe(false);
    if (missing.ok) return;
    expect(missing.failure.reason).toBe('SubstitutionFailed');
    expect(missing.failure.message).toContain('app/cm.yaml');
    expect(missing.failure.message).toContain('NS');
  });
});
