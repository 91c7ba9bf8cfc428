/**
 * Kustomize packages through the real controller on the real control plane: an overlay with a base
 * elsewhere in the repository is applied as `kustomize build` renders it; a configMapGenerator change applies
 * the new ConfigMap, moves its users, and prunes the old one; a no-op resync runs no kustomize; a refused
 * kustomization applies and prunes nothing; spec.kustomize shapes the build as Flux's fields do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/cluster.ts';
import { createPackageSync, httpBase, packageSync, waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnv } from './support/git-env.ts';
import { cmPath, get, inventoryIds, trigger } from './support/safety.ts';
import type { SpecInput } from '../src/api/packagesync.ts';

let env: GitEnv;

/** Ready at this commit. */
const at = (sha: string) => (ps: { status?: { lastAppliedRevision?: string } }) =>
  ps.status?.lastAppliedRevision === `main@sha1:${sha}`;

beforeAll(async () => {
  env = await startGitEnv({ args: ['--metrics-bind-address', '127.0.0.1:0'] });
});

afterAll(async () => {
  await env?.dispose();
});

const base = (level: string): Record<string, string> => ({
  'base/kustomization.yaml': [
    'resources: [deployment.yaml]',
    'configMapGenerator:',
    '  - name: web-config',
    '    literals:',
    `      - LOG_LEVEL=${level}`,
    '',
  ].join('\n'),
  'base/deployment.yaml': [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata: {name: web}',
    'spec:',
    '  replicas: 1',
    '  selector: {matchLabels: {app: web}}',
    '  template:',
    '    metadata: {labels: {app: web}}',
    '    spec:',
    '      containers:',
    '        - name: web',
    '          image: nginx:1.27',
    '          envFrom: [{configMapRef: {name: web-config}}]',
    '',
  ].join('\n'),
  'overlays/dev/kustomization.yaml': 'resources: [../../base]\nnamePrefix: dev-\n',
});

const deploymentPath = (ns: string, name: string) => `/apis/apps/v1/namespaces/${ns}/deployments/${name}`;
const configMapOf = async (ns: string) => {
  const d = (await get(deploymentPath(ns, 'dev-web'))) as unknown as {
    spec: { template: { spec: { containers: { envFrom: { configMapRef: { name: string } }[] }[] } } };
  };
  return d.spec.template.spec.containers[0]!.envFrom[0]!.configMapRef.name;
};

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${await httpBase(env.controller!)}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1] ?? NaN);
}

/** The spec every case here starts from: the dev overlay, no health wait, quick retries, no interval runs. */
const devOverlay = (url: string, extra: Partial<SpecInput> = {}): SpecInput => ({
  source: { url, path: 'overlays/dev' },
  interval: '1h',
  retryInterval: '1s',
  wait: false,
  ...extra,
});

describe('kustomize packages', () => {
  it('applies the overlay; a configMapGenerator change applies the new ConfigMap and prunes the old one', async () => {
    const ns = await env.namespace('kz-gen');
    const { repo, url, sha } = await env.repo('kz-gen', base('info'));
    await createPackageSync(packageSync(ns, 'web', env.controller!.shard, devOverlay(url)));
    const first = await waitReady(ns, 'web', at(sha));
    const oldName = await configMapOf(ns);
    expect(oldName).toMatch(/^dev-web-config-[a-z0-9]{10}$/);
    expect((await get(cmPath(ns, oldName)))?.data).toEqual({ LOG_LEVEL: 'info' });
    expect(inventoryIds(first)).toEqual([`${ns}_${oldName}__ConfigMap`, `${ns}_dev-web_apps_Deployment`].sort());
    // the origin annotations of the build never reach the cluster
    expect(JSON.stringify(await get(cmPath(ns, oldName)))).not.toContain('config.kubernetes.io/origin');

    const next = await env.commit(repo, base('debug'));
    await trigger(ns, 'web');
    const second = await waitReady(ns, 'web', at(next));
    const newName = await configMapOf(ns);
    expect(newName).not.toBe(oldName);
    expect((await get(cmPath(ns, newName)))?.data).toEqual({ LOG_LEVEL: 'debug' });
    expect(inventoryIds(second)).toEqual([`${ns}_${newName}__ConfigMap`, `${ns}_dev-web_apps_Deployment`].sort());
    await eventually('the old generated ConfigMap is pruned', async () =>
      (await get(cmPath(ns, oldName))) === undefined ? true : undefined,
    );

    // a no-op resync: the render cache answers, kustomize does not run
    const runs = await metric('packagesync_render_tool_runs_total');
    const hits = await metric('packagesync_render_cache_hits_total');
    await trigger(ns, 'web');
    await eventually('the requested reconcile ran', async () =>
      (await metric('packagesync_render_cache_hits_total')) > hits ? true : undefined,
    );
    expect(await metric('packagesync_render_tool_runs_total')).toBe(runs);
  });

  it('a refused kustomization (remote base) applies nothing and prunes nothing; the condition names file and entry', async () => {
    const ns = await env.namespace('kz-refused');
    const { repo, url, sha } = await env.repo('kz-refused', base('info'));
    await createPackageSync(packageSync(ns, 'web', env.controller!.shard, devOverlay(url)));
    const ready = await waitReady(ns, 'web', at(sha));
    const cm = await configMapOf(ns);
    await env.commit(repo, {
      'overlays/dev/kustomization.yaml':
        'resources:\n  - ../../base\n  - https://github.com/example/evil//deploy?ref=main\nnamePrefix: dev-\n',
      'base/extra.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n',
    });
    await trigger(ns, 'web');
    const failed = await waitCondition(ns, 'web', 'Ready', 'False', 'RenderRefused');
    const message = failed.status?.conditions?.find((c) => c.type === 'Ready')?.message ?? '';
    expect(message).toContain('overlays/dev/kustomization.yaml');
    expect(message).toContain('https://github.com/example/evil//deploy?ref=main');
    expect(failed.status?.conditions?.find((c) => c.type === 'Stalled')?.status).toBe('True');
    expect(failed.status?.lastAppliedRevision).toBe(ready.status?.lastAppliedRevision);
    expect(inventoryIds(failed)).toEqual(inventoryIds(ready));
    expect(await get(cmPath(ns, cm))).toBeDefined();
    expect(await get(deploymentPath(ns, 'dev-web'))).toBeDefined();
  });

  it('a failure at apply names the file the object came from, though its name is generated', async () => {
    const ns = await env.namespace('kz-apply');
    const files = base('info');
    files['base/deployment.yaml'] = files['base/deployment.yaml']!.replace('replicas: 1', 'replicas: -3');
    const { url } = await env.repo('kz-apply', files);
    await createPackageSync(packageSync(ns, 'web', env.controller!.shard, devOverlay(url)));
    const failed = await waitCondition(ns, 'web', 'Ready', 'False', 'ApplyFailed');
    const message = failed.status?.conditions?.find((c) => c.type === 'Ready')?.message ?? '';
    expect(message).toContain('dev-web');
    expect(message).toContain('(from base/deployment.yaml)');
  });

  it("spec.kustomize: namePrefix, images, patches, commonMetadata as Flux's Kustomization sets them", async () => {
    const ns = await env.namespace('kz-spec');
    const { url, sha } = await env.repo('kz-spec', base('info'));
    await createPackageSync(
      packageSync(
        ns,
        'web',
        env.controller!.shard,
        devOverlay(url, {
          kustomize: {
            namePrefix: 'canary-',
            images: [{ name: 'nginx', newTag: '1.28.0' }],
            patches: [{ patch: '- op: replace\n  path: /spec/replicas\n  value: 2\n', target: { kind: 'Deployment' } }],
            commonMetadata: { labels: { team: 'web' }, annotations: { owner: 'platform' } },
          },
        }),
      ),
    );
    await waitReady(ns, 'web', at(sha));
    const d = (await get(deploymentPath(ns, 'canary-web'))) as unknown as {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      spec: { replicas: number; template: { spec: { containers: { image: string }[] } } };
    };
    expect(d.spec.replicas).toBe(2);
    expect(d.spec.template.spec.containers[0]!.image).toBe('nginx:1.28.0');
    expect(d.metadata.labels.team).toBe('web');
    expect(d.metadata.annotations.owner).toBe('platform');
    expect(await get(deploymentPath(ns, 'dev-web'))).toBeUndefined();
  });
});
