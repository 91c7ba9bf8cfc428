import { describe, expect, it } from 'vitest';
import { SetSpecSchema } from '../../api/packagesyncset.ts';
import { childObject, observationOf, ownedBy, revisionOf } from './child.ts';
import { generateTargets } from './targets.ts';

const spec = SetSpecSchema.parse({
  template: {
    metadata: { labels: { team: 'a' } },
    spec: {
      source: { url: 'https://git.example/p.git', ref: { branch: 'main' }, path: 'apps' },
      targetNamespace: 'web',
    },
  },
  generators: { clusters: {}, directories: ['apps/eu'] },
  rollout: { waves: [{ name: 'all' }] },
});
const [target] = generateTargets(
  { name: 'web', namespace: 'team-a' },
  [{ name: 'prod-eu', namespace: 'team-a', labels: { 'packagesync.io/secret-type': 'cluster' } }],
  undefined,
  ['apps/eu'],
);
const sha = 'a'.repeat(40);

describe('childObject', () => {
  it('pins the exact commit, names its cluster’s Secret and its directory, and is owned by the set', () => {
    const set = { name: 'web', namespace: 'team-a', uid: 'u1', labels: { shard: 's1' } };
    const child = childObject(set, spec.template, target!, `main@sha1:${sha}`);
    expect(child.spec.source).toMatchObject({
      url: 'https://git.example/p.git',
      ref: { commit: sha },
      path: 'apps/eu',
    });
    expect(child.spec.kubeConfig).toEqual({ secretRef: { name: 'prod-eu' } });
    expect(child.spec.targetNamespace).toBe('web');
    expect(child.metadata).toMatchObject({
      name: target!.child,
      namespace: 'team-a',
      labels: { shard: 's1', team: 'a', 'packagesync.io/set': 'web' },
      annotations: { 'packagesync.io/target': 'prod-eu/apps/eu' },
    });
    expect(ownedBy(child as never, 'u1')).toBe(true);
    expect(ownedBy(child as never, 'u2')).toBe(false);
    expect(spec.template.spec.source.ref).toEqual({ branch: 'main' }); // the template is not changed
    expect(() => childObject(set, spec.template, target!, 'main')).toThrow(/not an exact revision/);
  });

  it('reads a child’s status as the rollout needs it, and names revisions as Flux does', () => {
    const obs = observationOf({
      apiVersion: 'packagesync.io/v1alpha1',
      kind: 'PackageSync',
      metadata: { name: 'x', namespace: 'n', generation: 2 },
      spec: { source: { url: 'u', ref: { commit: sha } } } as never,
      status: {
        observedGeneration: 2,
        lastAppliedRevision: `sha1:${sha}`,
        conditions: [
          { type: 'Ready', status: 'False', reason: 'HealthCheckFailed', message: 'm', lastTransitionTime: 't' },
          { type: 'Stalled', status: 'True', reason: 'HealthCheckFailed', message: 'm', lastTransitionTime: 't' },
        ],
      },
    });
    expect(obs).toMatchObject({
      pinnedCommit: sha,
      generation: 2,
      observedGeneration: 2,
      ready: 'False',
      stalled: true,
    });
    expect(revisionOf({ branch: 'main' }, sha)).toBe(`main@sha1:${sha}`);
    expect(revisionOf(undefined, sha)).toBe(`sha1:${sha}`);
  });
});

describe('childObject of an OCI source', () => {
  const ociSpec = SetSpecSchema.parse({
    template: {
      spec: { source: { oci: { url: 'oci://registry.example/apps/web', ref: { semver: '^1' } } } },
    },
    generators: { clusters: {} },
    rollout: { waves: [{ name: 'all' }] },
  });
  const [t] = generateTargets(
    { name: 'web', namespace: 'team-a' },
    [{ name: 'prod', namespace: 'team-a', labels: { 'packagesync.io/secret-type': 'cluster' } }],
    undefined,
    undefined,
  );
  const digest = `sha256:${'b'.repeat(64)}`;

  it('pins the digest alone (no tag or range that could move or refuse a revert), and reads the pin back', () => {
    const child = childObject(
      { name: 'web', namespace: 'team-a', uid: 'u1' },
      ociSpec.template,
      t!,
      `v1.2.0@${digest}`,
    );
    expect(child.spec.source.oci).toEqual({ url: 'oci://registry.example/apps/web', ref: { digest } });
    expect(child.spec.source.ref).toBeUndefined();
    expect(observationOf(child).pinnedCommit).toBe(digest);
  });
});
