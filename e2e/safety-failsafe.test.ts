/**
 * Invariant 1 through the real controller: whatever fails — the source, the render, one object of the
 * apply — nothing further is applied, nothing is pruned, the inventory and lastAppliedRevision of the
 * last success stand, and the PackageSync retries by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles } from '../test/support/git/index.ts';
import { patchPackageSync, waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { cmPath, configMap, deployment, get, inventoryIds, ready, trigger } from './support/safety.ts';

let fx: GitEnvWithController;

beforeAll(async () => {
  fx = await startGitEnv();
});

afterAll(async () => {
  await fx?.dispose();
});

/** A PackageSync Ready on a package {a: v1, b}; returns what it looked like then. */
async function readyOnFirstRevision(prefix: string, path = 'app', more: Record<string, unknown> = {}) {
  const ns = await fx.namespace(prefix);
  const { repo, url, sha } = await fx.repo(prefix, {
    [`${path}/a.yaml`]: configMap('a', { v: '1' }),
    [`${path}/b.yaml`]: configMap('b', { v: '1' }),
  });
  const ps = await fx.syncReady(ns, 'ps', {
    source: { url, path },
    interval: '1h',
    retryInterval: '1s',
    timeout: '1m',
    ...more,
  });
  expect(inventoryIds(ps)).toEqual([`${ns}_a__ConfigMap`, `${ns}_b__ConfigMap`]);
  return { ns, repo, sha, ps };
}

/** The fail-safe contract after a failure with `reason`: nothing changed since the first revision. */
async function expectNothingMoved(ns: string, sha: string, reason: string, inventory?: string[]) {
  const failed = await waitCondition(ns, 'ps', 'Ready', 'False', reason);
  expect(failed.status?.lastAppliedRevision).toBe(`main@sha1:${sha}`);
  expect(inventoryIds(failed)).toEqual(inventory ?? [`${ns}_a__ConfigMap`, `${ns}_b__ConfigMap`]);
  expect((await get(cmPath(ns, 'a')))?.data?.v).toBe('1');
  expect(await get(cmPath(ns, 'b'))).toBeDefined();
  expect(await get(cmPath(ns, 'c'))).toBeUndefined();
  // and it keeps retrying on its own (retryInterval 1s, backing off): more failures get logged, no trigger
  await eventuallyRetried(ns, reason);
  return failed;
}

async function eventuallyRetried(ns: string, reason: string) {
  const failures = () => fx.controller.logs.filter((l) => l.includes(ns) && l.includes(`"reason":"${reason}"`)).length;
  for (let i = 0; i < 80 && failures() < 3; i++) await new Promise((r) => setTimeout(r, 250));
  expect(failures()).toBeGreaterThanOrEqual(3);
}

describe('fail safe', () => {
  it('a path gone at the new revision (source) → PathNotFound, nothing applied or pruned', async () => {
    const { ns, repo, sha } = await readyOnFirstRevision('fs-source');
    await commitFiles(
      repo,
      'main',
      { 'app/a.yaml': null, 'app/b.yaml': null, 'elsewhere/c.yaml': configMap('c', { v: '1' }) },
      'moved',
    );
    await trigger(ns, 'ps');
    const failed = await expectNothingMoved(ns, sha, 'PathNotFound');
    expect(ready(failed)?.message).toContain('path "app" does not exist');
  });

  it('a broken document (render) → RenderFailed naming file and document, nothing applied or pruned', async () => {
    const { ns, repo, sha } = await readyOnFirstRevision('fs-render');
    await commitFiles(
      repo,
      'main',
      {
        'app/a.yaml': configMap('a', { v: '2' }),
        'app/b.yaml': null,
        'app/multi.yaml': `${configMap('c', { v: '1' })}---\nkind: ConfigMap\nmetadata: {name: d}\ndata: {k: [unclosed\n`,
      },
      'broken',
    );
    await trigger(ns, 'ps');
    const failed = await expectNothingMoved(ns, sha, 'RenderFailed');
    expect(ready(failed)?.message).toMatch(/multi\.yaml:\d+:\d+ \(document 2\): /);
  });

  it('an object without a kind → InvalidManifest naming file and line', async () => {
    const { ns, repo, sha } = await readyOnFirstRevision('fs-manifest');
    await commitFiles(
      repo,
      'main',
      { 'app/c.yaml': `${configMap('c', { v: '1' })}---\napiVersion: v1\nmetadata: {name: nokind}\n` },
      'no kind',
    );
    await trigger(ns, 'ps');
    const failed = await expectNothingMoved(ns, sha, 'InvalidManifest');
    expect(ready(failed)?.message).toContain('c.yaml:8: no kind');
  });

  it('one object the API server rejects (apply) → a partial apply that prunes nothing', async () => {
    const { ns, repo, sha } = await readyOnFirstRevision('fs-apply');
    // nothing depends on the Deployment: a is changed and c created although it fails (best effort)
    const bad = deployment('web').replace('name: app', 'name: Not_A_Valid_Name');
    await commitFiles(
      repo,
      'main',
      {
        'app/a.yaml': configMap('a', { v: '2' }),
        'app/b.yaml': null,
        'app/c.yaml': configMap('c', { v: '1' }),
        'app/web.yaml': bad,
      },
      'partly bad',
    );
    await trigger(ns, 'ps');
    const failed = await waitCondition(ns, 'ps', 'Ready', 'False', 'ApplyFailed');
    expect(ready(failed)?.message).toContain(`Deployment/${ns}/web`);
    expect(failed.status?.lastAppliedRevision).toBe(`main@sha1:${sha}`);
    // old ∪ new: everything that may exist is known, b (left the package) is still there and still listed
    expect(inventoryIds(failed)).toEqual([
      `${ns}_a__ConfigMap`,
      `${ns}_b__ConfigMap`,
      `${ns}_c__ConfigMap`,
      `${ns}_web_apps_Deployment`,
    ]);
    expect(await get(cmPath(ns, 'b'))).toBeDefined();

    const fixed = await commitFiles(repo, 'main', { 'app/web.yaml': deployment('web') }, 'fixed');
    await trigger(ns, 'ps');
    const done = await waitReady(ns, 'ps', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${fixed}`);
    expect(inventoryIds(done)).toEqual([`${ns}_a__ConfigMap`, `${ns}_c__ConfigMap`, `${ns}_web_apps_Deployment`]);
    expect(await get(cmPath(ns, 'b'))).toBeUndefined();
  });
});

describe('empty renders', () => {
  it('a package that renders nothing → EmptyRender, nothing pruned; allowEmpty prunes everything', async () => {
    const { ns, repo, sha } = await readyOnFirstRevision('fs-empty');
    const empty = await commitFiles(
      repo,
      'main',
      { 'app/a.yaml': null, 'app/b.yaml': null, 'app/README.yaml': '# nothing here\n' },
      'emptied',
    );
    await trigger(ns, 'ps');
    const failed = await expectNothingMoved(ns, sha, 'EmptyRender');
    expect(ready(failed)?.message).toContain('spec.allowEmpty: true');

    await patchPackageSync(ns, 'ps', { spec: { allowEmpty: true } });
    const done = await waitReady(ns, 'ps', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${empty}`);
    expect(inventoryIds(done)).toEqual([]);
    expect(await get(cmPath(ns, 'a'))).toBeUndefined();
    expect(await get(cmPath(ns, 'b'))).toBeUndefined();
  });
});
