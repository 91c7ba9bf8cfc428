/**
 * Monorepos on the real control plane: two PackageSyncs on different paths of one repository. A commit that
 * touches only path A re-applies A; B, asked to reconcile after it, writes none of its objects and keeps naming
 * the commit that last changed what it reads (as a Flux Kustomization fed by an ArtifactGenerator keeps the
 * artifact revision until the content changes). A change to a kustomize base B reaches moves B.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get } from './support/cluster.ts';
import { getPackageSync, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { cmPath, configMap, trigger } from './support/safety.ts';

let fx: GitEnvWithController;

beforeAll(async () => {
  fx = await startGitEnv();
});

afterAll(async () => {
  await fx?.dispose();
});

describe('two PackageSyncs on one monorepo', () => {
  it('a commit touching only path A does not re-apply B; a commit to a base B reaches does', async () => {
    const ns = await fx.namespace('mono');
    const {
      repo,
      url,
      sha: first,
    } = await fx.repo('mono', {
      'apps/a/a.yaml': configMap('a', { v: '1' }),
      'apps/b/kustomization.yaml': 'resources: [../../bases/b, b.yaml]\n',
      'apps/b/b.yaml': configMap('b', { v: '1' }),
      'bases/b/kustomization.yaml': 'resources: [base.yaml]\n',
      'bases/b/base.yaml': configMap('b-base', { v: '1' }),
      'docs/README.md': '# not a package\n',
    });
    const spec = (path: string) => ({ source: { url, path }, interval: '1h', retryInterval: '2s' });
    await fx.sync(ns, 'a', spec('apps/a'));
    await fx.sync(ns, 'b', spec('apps/b'));
    await waitReady(ns, 'a');
    const b1 = await waitReady(ns, 'b');
    expect(b1.status?.lastAppliedRevision).toBe(`main@sha1:${first}`);
    const bBefore = await get(cmPath(ns, 'b'));
    const baseBefore = await get(cmPath(ns, 'b-base'));

    // a commit touching apps/a and a file no package reads
    const second = await fx.commit(repo, { 'apps/a/a.yaml': configMap('a', { v: '2' }), 'docs/README.md': '# 2\n' });
    await trigger(ns, 'a');
    await trigger(ns, 'b');
    const a2 = await waitReady(ns, 'a', (p) => p.status?.lastAppliedRevision === `main@sha1:${second}`);
    expect((await get(cmPath(ns, 'a')))?.data).toEqual({ v: '2' });
    expect(a2.status?.history?.[0]?.configured).toBe(1);
    // B answered the request (lastHandledReconcileAt) at the new commit, found nothing it reads changed
    const b2 = await waitReady(
      ns,
      'b',
      (p) =>
        p.status?.lastHandledReconcileAt !== undefined &&
        p.status.lastHandledReconcileAt !== b1.status?.lastHandledReconcileAt,
    );
    expect(b2.status?.lastAppliedRevision).toBe(`main@sha1:${first}`);
    expect(b2.status?.lastAttemptedRevision).toBe(`main@sha1:${first}`);
    // not one write to B's objects
    expect((await get(cmPath(ns, 'b')))?.metadata.resourceVersion).toBe(bBefore?.metadata.resourceVersion);
    expect((await get(cmPath(ns, 'b-base')))?.metadata.resourceVersion).toBe(baseBefore?.metadata.resourceVersion);

    // a commit to the base B reaches (outside apps/b): B moves to it
    const third = await fx.commit(repo, { 'bases/b/base.yaml': configMap('b-base', { v: '2' }) });
    await trigger(ns, 'b');
    await waitReady(ns, 'b', (p) => p.status?.lastAppliedRevision === `main@sha1:${third}`);
    expect((await get(cmPath(ns, 'b-base')))?.data).toEqual({ v: '2' });
    expect((await getPackageSync(ns, 'a'))?.status?.lastAppliedRevision).toBe(`main@sha1:${second}`);
  });
});
