// The render cache: the same commit, path and inputs run no tool a second time; any input that could change
// the output (spec fields, valuesFrom contents, capabilities, the commit) runs it again; the cache is bounded.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheKey, createRenderer, type BuildRequest } from '../../src/adapters/render/build.ts';
import { defaultToolPaths } from '../../src/config/tool-paths.ts';

const testdata = join(import.meta.dirname, 'testdata');
const tools = defaultToolPaths();
const limits = { timeoutMs: 60_000, maxOutputBytes: 16 << 20, maxFiles: 10_000 };
const kustomize = (extra: Partial<BuildRequest> = {}): BuildRequest => ({
  checkoutRoot: join(testdata, 'kustomize-repo'),
  packagePath: 'overlays/prod',
  commit: 'a'.repeat(40),
  files: [],
  spec: {},
  releaseName: 'web',
  releaseNamespace: 'prod',
  ...extra,
});
const helm = (extra: Partial<BuildRequest> = {}): BuildRequest =>
  kustomize({
    checkoutRoot: join(testdata, 'helm-repo'),
    packagePath: 'charts/web',
    valuesFrom: ['database: {password: one}\n'],
    capabilities: { kubeVersion: 'v1.36.3', apiVersions: [] },
    ...extra,
  });

describe('render cache', () => {
  it('a no-op resync runs no tool; every input that shapes the output runs it again', async () => {
    const r = createRenderer({ kustomizePath: tools.kustomize, helmPath: tools.helm, limits });
    const first = await r.build(kustomize());
    const again = await r.build(kustomize());
    expect(r.stats()).toMatchObject({ toolRuns: 1, cacheHits: 1 });
    expect(r.stats().toolSeconds).toBeGreaterThan(0);
    expect(again).toEqual(first);

    await r.build(kustomize({ spec: { kustomize: { namePrefix: 'x-' } } }));
    await r.build(kustomize({ commit: 'b'.repeat(40) }));
    expect(r.stats()).toMatchObject({ toolRuns: 3, cacheHits: 1 });

    await r.build(helm());
    await r.build(helm());
    await r.build(helm({ valuesFrom: ['database: {password: two}\n'] }));
    await r.build(helm({ capabilities: { kubeVersion: 'v1.35.0', apiVersions: [] } }));
    expect(r.stats()).toMatchObject({ toolRuns: 6, cacheHits: 2 });
  });

  it('a local directory (no commit) is never cached; cacheEntries 0 caches nothing; the cache is bounded', async () => {
    const none = createRenderer({ kustomizePath: tools.kustomize, helmPath: tools.helm, limits, cacheEntries: 0 });
    await none.build(kustomize());
    await none.build(kustomize());
    expect(none.stats().toolRuns).toBe(2);

    const local = createRenderer({ kustomizePath: tools.kustomize, helmPath: tools.helm, limits });
    await local.build(kustomize({ commit: undefined }));
    await local.build(kustomize({ commit: undefined }));
    expect(local.stats().toolRuns).toBe(2);

    const one = createRenderer({ kustomizePath: tools.kustomize, helmPath: tools.helm, limits, cacheEntries: 1 });
    await one.build(kustomize());
    await one.build(kustomize({ commit: 'b'.repeat(40) }));
    await one.build(kustomize()); // evicted by the second
    expect(one.stats()).toMatchObject({ toolRuns: 3, cacheHits: 0 });
  });
});

describe('render cache key', () => {
  const config = { kustomizePath: '/usr/local/bin/kustomize', helmPath: '/usr/local/bin/helm', limits };
  it("names the tools' own versions: the same binary path at another version is another build", () => {
    const key = (versions: Record<string, string>) => cacheKey('kustomize', kustomize(), config, versions);
    expect(key({ kustomize: 'v5.8.2' })).toBe(key({ kustomize: 'v5.8.2' }));
    expect(key({ kustomize: 'v5.8.2' })).not.toBe(key({ kustomize: 'v5.8.3' }));
    expect(key({ kustomize: 'v5.8.2' })).not.toBe(key({ kustomize: 'v5.8.2', sops: '3.13.3' }));
    const helmKey = (v: string) => cacheKey('helm', helm(), config, { helm: v });
    expect(helmKey('v4.3.1+g1')).not.toBe(helmKey('v4.3.2+g2'));
  });
});

describe('render cache with the worker engine', () => {
  it("the key names the engine and the worker's own report of its libraries", () => {
    const config = {
      kustomizePath: '/usr/local/bin/kustomize',
      helmPath: '/usr/local/bin/helm',
      limits,
      worker: { bin: '/usr/local/bin/render-worker', size: 1, readRoots: [] },
    };
    const worker = (v: string) => cacheKey('kustomize', kustomize(), config, { worker: v }, 'worker');
    expect(worker('{"helm.sh/helm/v4":"v4.3.1"}')).toBe(worker('{"helm.sh/helm/v4":"v4.3.1"}'));
    expect(worker('{"helm.sh/helm/v4":"v4.3.1"}')).not.toBe(worker('{"helm.sh/helm/v4":"v4.3.2"}'));
    expect(cacheKey('kustomize', kustomize(), config, { worker: 'x' }, 'worker')).not.toBe(
      cacheKey('kustomize', kustomize(), config, { worker: 'x' }, 'subprocess'),
    );
  });

  it('a no-op resync runs no render on the worker either', async () => {
    const r = createRenderer({
      kustomizePath: tools.kustomize,
      helmPath: tools.helm,
      limits,
      engine: 'worker',
      worker: { bin: tools.worker, size: 1, readRoots: [testdata] },
    });
    try {
      const first = await r.build(kustomize());
      const again = await r.build(kustomize());
      await r.build(helm());
      await r.build(helm());
      expect(again).toEqual(first);
      expect(r.stats()).toMatchObject({ toolRuns: 2, cacheHits: 2, workersStarted: 1, workersReplaced: 0 });
    } finally {
      r.close();
    }
  });
});
