/**
 * dependsOn between PackageSyncs: a dependent proceeds as soon as its dependency is Ready (woken by the
 * dependency's Ready, not by its retry timer); a cycle is reported on every member as DependencyCycle (Stalled)
 * instead of waiting forever, and clears once an edge of it is removed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPackageSync, packageSync, patchPackageSync, waitCondition, waitReady } from './support/controller.ts';
import { configMap, startGitEnv, type GitEnv } from './support/git-env.ts';
import { ready } from './support/safety.ts';

let env: GitEnv;
beforeAll(async () => {
  env = await startGitEnv();
});
afterAll(async () => {
  await env?.dispose();
});

describe('dependsOn', () => {
  it('a cycle is DependencyCycle on every member; removing an edge lets both become Ready', async () => {
    const ns = await env.namespace('e2e-depends-cycle');
    const { url } = await env.repo('cycle', {
      'first/cm.yaml': configMap('from-first', { v: '1' }),
      'second/cm.yaml': configMap('from-second', { v: '1' }),
    });
    const shard = env.controller!.shard;
    // retryInterval 1h: only the dependency's Ready can wake the dependent in time
    const spec = (dependsOn: string, path: string) => ({
      source: { url, path },
      dependsOn: [{ name: dependsOn }],
      retryInterval: '1h',
    });
    await createPackageSync(packageSync(ns, 'first', shard, spec('second', 'first')));
    await createPackageSync(packageSync(ns, 'second', shard, spec('first', 'second')));
    for (const [name, cycle] of [
      ['first', `${ns}/first → ${ns}/second → ${ns}/first`],
      ['second', `${ns}/second → ${ns}/first → ${ns}/second`],
    ] as const) {
      const stalled = await waitCondition(ns, name, 'Stalled', 'True', 'DependencyCycle');
      expect(ready(stalled)?.message).toContain(`spec.dependsOn forms a cycle: ${cycle}`);
    }
    await patchPackageSync(ns, 'second', { spec: { dependsOn: null } });
    await waitReady(ns, 'second');
    await waitReady(ns, 'first', undefined, 30_000);
  });
});
