/**
 * spec.postBuild through the real controller on the real control plane: variables inline, from a ConfigMap
 * and from a Secret (Flux's precedence), an optional source that is absent, a missing required one, strict
 * mode failing without touching what was applied, Secret values kept out of status, events and logs, and a
 * changed ConfigMap applied at once (the PackageSyncs here re-check git only every hour).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageSyncCollectionPath } from '../src/adapters/kube/packagesyncs.ts';
import type { PackageSync, SpecInput } from '../src/api/packagesync.ts';
import { conditionOf } from '../src/core/status.ts';
import { eventually, kube } from './support/cluster.ts';
import { createPackageSync, packageSync, waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnv } from './support/git-env.ts';
import { cmPath, get } from './support/safety.ts';

// characters that base64 and URL-encoding change, and YAML syntax that would break a plain scalar
const SECRET_VALUE = `s3cr3t-${randomBytes(9).toString('hex')}`;
const BROKEN_SECRET_VALUE = `pw: ${randomBytes(6).toString('hex')} #x`;

let env: GitEnv;
let ns: string;

beforeAll(async () => {
  env = await startGitEnv({ args: ['--log-level', 'trace'] });
  ns = await env.namespace('postbuild');
});

afterAll(async () => {
  await env?.dispose();
});

const template = (name: string, data: Record<string, string>, extra = '') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${extra}data:\n${Object.entries(data)
    .map(([k, v]) => `  ${k}: ${v}`)
    .join('\n')}\n`;

async function create(name: string, url: string, spec: Partial<SpecInput>): Promise<void> {
  await createPackageSync(
    packageSync(ns, name, env.controller!.shard, {
      source: { url },
      targetNamespace: ns,
      interval: '1h',
      retryInterval: '2s',
      ...spec,
    }),
  );
}

async function upsert(kind: 'configmaps' | 'secrets', name: string, body: Record<string, unknown>): Promise<void> {
  const client = await kube();
  const path = `/api/v1/namespaces/${ns}/${kind}`;
  const existing = await get(`${path}/${name}`);
  if (existing) {
    await client.request('PATCH', `${path}/${name}`, { contentType: 'application/merge-patch+json', body });
  } else {
    await client.request('POST', path, { body: { metadata: { name }, ...body } });
  }
}

describe('postBuild substitution', () => {
  it('substitutes from a ConfigMap, then a Secret (later wins), then inline variables (win over both)', async () => {
    await upsert('configmaps', 'vars-a', { data: { APP: 'from-configmap', COLOR: 'blue', SIZE: 'small' } });
    await upsert('secrets', 'vars-b', { stringData: { SIZE: 'large', TOKEN: SECRET_VALUE } });
    const { url } = await env.repo('postbuild-basic', {
      'app.yaml': template('${APP}-settings', { color: '${COLOR}', size: '${SIZE}', env: '${ENV:=dev}' }),
      'secret.yaml': `apiVersion: v1\nkind: Secret\nmetadata:\n  name: \${APP}-token\nstringData:\n  token: \${TOKEN}\n`,
      'script.yaml': template(
        'script',
        { run: "'echo ${HOME} $${LITERAL}'" },
        '  annotations:\n    kustomize.toolkit.fluxcd.io/substitute: disabled\n',
      ),
    });
    await create('basic', url, {
      postBuild: {
        substitute: { APP: 'web' },
        substituteFrom: [
          { kind: 'ConfigMap', name: 'vars-a' },
          { kind: 'Secret', name: 'vars-b' },
        ],
      },
    });
    await waitReady(ns, 'basic');
    expect((await get(cmPath(ns, 'web-settings')))?.data).toEqual({ color: 'blue', size: 'large', env: 'dev' });
    const secret = await get(`/api/v1/namespaces/${ns}/secrets/web-token`);
    expect(Buffer.from(String(secret?.data?.token), 'base64').toString()).toBe(SECRET_VALUE);
    // the opted-out object keeps its text: no ${HOME} expansion, no $$ collapse
    expect((await get(cmPath(ns, 'script')))?.data).toEqual({ run: 'echo ${HOME} $${LITERAL}' });
  });

  it('an optional source that does not exist counts as empty; a required one stops the reconcile until created', async () => {
    const { url } = await env.repo('postbuild-optional', {
      'cm.yaml': template('optional-${WHERE:=nowhere}', { k: 'v' }),
    });
    await create('optional', url, {
      postBuild: {
        substituteStrategy: 'Always',
        substituteFrom: [{ kind: 'ConfigMap', name: 'absent', optional: true }],
      },
    });
    await create('required', url, {
      postBuild: { substituteFrom: [{ kind: 'ConfigMap', name: 'required-vars' }] },
    });
    await waitReady(ns, 'optional');
    expect(await get(cmPath(ns, 'optional-nowhere'))).toBeDefined();

    const failed = await waitCondition(ns, 'required', 'Ready', 'False', 'SubstitutionSourceNotFound');
    expect(conditionOf(failed.status, 'Ready')?.message).toContain(
      `ConfigMap ${ns}/required-vars named in spec.postBuild.substituteFrom[0] does not exist`,
    );
    expect(conditionOf(failed.status, 'Stalled')).toBeUndefined(); // retried: creating it fixes it
    await upsert('configmaps', 'required-vars', { data: { WHERE: 'here' } });
    await waitReady(ns, 'required');
    expect(await get(cmPath(ns, 'optional-here'))).toBeDefined();
  });

  it('strict mode: an undefined variable fails the render; the previous inventory and objects stand', async () => {
    const { repo, url } = await env.repo('postbuild-strict', {
      'a.yaml': template('strict-a', { v: '${V}' }),
      'b.yaml': template('strict-b', { v: 'one' }),
    });
    await create('strict', url, { postBuild: { substitute: { V: 'first' } } });
    const ready = await waitReady(ns, 'strict');
    const inventory = ready.status?.inventory;
    expect(inventory?.entries).toHaveLength(2);

    await env.commit(repo, {
      'a.yaml': template('strict-a', { v: '${V}-${NOT_DEFINED}' }),
      'b.yaml': null,
      'c.yaml': template('strict-c', { v: 'new' }),
    });
    await (
      await kube()
    ).request('PATCH', `${packageSyncCollectionPath(ns)}/strict`, {
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { 'packagesync.io/reconcile-requested-at': String(Date.now()) } } },
    });
    const failed = await waitCondition(ns, 'strict', 'Ready', 'False', 'SubstitutionFailed');
    const message = conditionOf(failed.status, 'Ready')?.message ?? '';
    expect(message).toContain('ConfigMap strict-a in a.yaml:1 uses the variable NOT_DEFINED (at data.v)');
    expect(conditionOf(failed.status, 'Stalled')?.status).toBe('True');
    expect(failed.status?.inventory).toEqual(inventory);
    expect(failed.status?.lastAppliedRevision).toBe(ready.status?.lastAppliedRevision);
    expect((await get(cmPath(ns, 'strict-a')))?.data).toEqual({ v: 'first' });
    expect(await get(cmPath(ns, 'strict-b'))).toBeDefined(); // not pruned
    expect(await get(cmPath(ns, 'strict-c'))).toBeUndefined(); // not applied
  });

  it('a changed ConfigMap is applied at once, not at the next interval (1h here)', async () => {
    await upsert('configmaps', 'live-vars', { data: { COLOR: 'blue' } });
    const { url } = await env.repo('postbuild-live', { 'cm.yaml': template('live', { color: '${COLOR}' }) });
    await create('live', url, { postBuild: { substituteFrom: [{ kind: 'ConfigMap', name: 'live-vars' }] } });
    await waitReady(ns, 'live');
    expect((await get(cmPath(ns, 'live')))?.data).toEqual({ color: 'blue' });

    await upsert('configmaps', 'live-vars', { data: { COLOR: 'green' } });
    await eventually('the new value applied', async () => (await get(cmPath(ns, 'live')))?.data?.color === 'green', {
      timeoutMs: 60_000,
    });
    // and a value that breaks the YAML, from a Secret: a failure that names the object, not the value
    await upsert('secrets', 'live-secret', { stringData: { COLOR: BROKEN_SECRET_VALUE } });
    const client = await kube();
    await client.request('PATCH', `${packageSyncCollectionPath(ns)}/live`, {
      contentType: 'application/merge-patch+json',
      body: { spec: { postBuild: { substituteFrom: [{ kind: 'Secret', name: 'live-secret' }] } } },
    });
    const failed = await waitCondition(ns, 'live', 'Ready', 'False', 'SubstitutionFailed');
    expect(conditionOf(failed.status, 'Ready')?.message).toContain('ConfigMap live in cm.yaml:1 is not valid YAML');
    expect((await get(cmPath(ns, 'live')))?.data).toEqual({ color: 'green' });

    // fixing the Secret is seen by the watch too
    await upsert('secrets', 'live-secret', { stringData: { COLOR: 'red' } });
    await waitReady(ns, 'live');
    await eventually('the fixed value applied', async () => (await get(cmPath(ns, 'live')))?.data?.color === 'red');
    const triggers = env.controller!.logs.filter(
      (l) => l.includes('a referenced object changed') && l.includes(`"packageSync":"${ns}/live"`),
    );
    expect(triggers.some((l) => l.includes('"kind":"ConfigMap"') && l.includes('"name":"live-vars"'))).toBe(true);
    expect(triggers.some((l) => l.includes('"kind":"Secret"') && l.includes('"name":"live-secret"'))).toBe(true);
  });

  it('never writes a value from a Secret to status, events or the logs', async () => {
    const client = await kube();
    const list = await client.request<{ items: PackageSync[] }>('GET', packageSyncCollectionPath(ns));
    const statuses = JSON.stringify(list.items.map((ps) => ps.status));
    const events = JSON.stringify(
      (await client.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${ns}/events`)).items,
    );
    const logs = env.controller!.logs.join('\n');
    expect(logs).toContain('"level":"debug"'); // the chattiest lines are there to be searched
    for (const value of [SECRET_VALUE, BROKEN_SECRET_VALUE, BROKEN_SECRET_VALUE.split(' ')[1]!]) {
      for (const form of [value, Buffer.from(value).toString('base64'), encodeURIComponent(value)]) {
        expect(statuses.includes(form), 'status').toBe(false);
        expect(events.includes(form), 'events').toBe(false);
        expect(logs.includes(form), 'logs').toBe(false);
      }
    }
  });
});
