/**
 * A return to earlier content is a new revision (issue 26). After A and B applied, C broke the render and D
 * removed C's file, so D reads exactly as B: D changed the package relative to the last attempt (C), and status
 * must name D, as a CI pipeline waiting for lastAppliedRevision = the commit it pushed expects. The same for a
 * `git revert` of a good commit with no failure between. (The monorepo rule, a commit touching nothing the
 * package reads keeps the revision, is e2e/monorepo.test.ts; it compares with the previous attempt too.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revertCommit } from '../test/support/git/index.ts';
import { get } from './support/cluster.ts';
import { waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { cmPath, configMap, trigger } from './support/safety.ts';

let fx: GitEnvWithController;

beforeAll(async () => {
  fx = await startGitEnv();
});

afterAll(async () => {
  await fx?.dispose();
});

const four = {
  'app/one.yaml': configMap('one', { v: '1' }),
  'app/two.yaml': configMap('two', { v: '1' }),
  'app/three.yaml': configMap('three', { v: '1' }),
  'app/four.yaml': configMap('four', { v: '1' }),
};
// B: one object edited, one removed
const editAndRemove = { 'app/two.yaml': configMap('two', { v: '2' }), 'app/four.yaml': null };
const spec = (url: string) => ({ source: { url, path: 'app' }, interval: '10m', retryInterval: '2s' });
const rev = (sha: string) => `main@sha1:${sha}`;

describe('a return to earlier content is a new revision', () => {
  it('A → B → C (RenderFailed) → D (reads as B): status names D', async () => {
    const ns = await fx.namespace('revert');
    const { repo, url, sha: a } = await fx.repo('back-to-b', four);
    await fx.syncReady(ns, 'web', spec(url), (p) => p.status?.lastAppliedRevision === rev(a));

    const b = await fx.commit(repo, editAndRemove);
    await trigger(ns, 'web');
    await waitReady(ns, 'web', (p) => p.status?.lastAppliedRevision === rev(b));
    expect(await get(cmPath(ns, 'four'))).toBeUndefined();

    const c = await fx.commit(repo, { 'app/broken.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [\n' });
    await trigger(ns, 'web');
    const failed = await waitCondition(ns, 'web', 'Ready', 'False', 'RenderFailed');
    expect(failed.status?.lastAttemptedRevision).toBe(rev(c));

    const d = await fx.commit(repo, { 'app/broken.yaml': null });
    await trigger(ns, 'web');
    const back = await waitReady(ns, 'web', (p) => p.status?.lastAttemptedRevision !== rev(c));
    expect(back.status?.lastAppliedRevision).toBe(rev(d));
    expect(back.status?.lastAttemptedRevision).toBe(rev(d));
    expect(back.status?.history?.[0]?.revision).toBe(rev(d));
    expect(back.status?.history?.[0]?.result).toBe('Succeeded');
    // C's attempts (retried every retryInterval) come before it, none after
    expect(back.status?.history?.[1]?.revision).toBe(rev(c));
    expect((await get(cmPath(ns, 'two')))?.data).toEqual({ v: '2' });
  });

  it('a git revert of a good commit (no failure between) is applied and reported as the revert', async () => {
    const ns = await fx.namespace('revert');
    const { repo, url, sha: a } = await fx.repo('revert-b', four);
    await fx.syncReady(ns, 'web', spec(url), (p) => p.status?.lastAppliedRevision === rev(a));
    const b = await fx.commit(repo, editAndRemove);
    await trigger(ns, 'web');
    await waitReady(ns, 'web', (p) => p.status?.lastAppliedRevision === rev(b));

    const d = await revertCommit(repo, 'main', b);
    await trigger(ns, 'web');
    const reverted = await waitReady(ns, 'web', (p) => p.status?.lastAttemptedRevision !== rev(b));
    expect(reverted.status?.lastAppliedRevision).toBe(rev(d));
    expect(reverted.status?.lastAttemptedRevision).toBe(rev(d));
    expect(reverted.status?.history?.[0]?.revision).toBe(rev(d));
    // A's content is back: the edit undone, the removed object re-created
    expect((await get(cmPath(ns, 'two')))?.data).toEqual({ v: '1' });
    expect((await get(cmPath(ns, 'four')))?.data).toEqual({ v: '1' });
  });
});
