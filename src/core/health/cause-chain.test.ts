import { describe, expect, it } from 'vitest';
import { refOf, type KubeObject } from '../object.ts';
import { causeChain, healthCause } from './cause-chain.ts';
import { computeHealth } from './compute.ts';
import { fixtureDocs } from './testdata/fixtures.ts';

describe('causeChain', () => {
  it('goes from the PackageSync through the Deployment and ReplicaSet to the failing Pod', () => {
    const [workload, ...children] = fixtureDocs('explain-deployment-image-pull.yaml') as KubeObject[];
    const lines = causeChain({
      packageSync: { name: 'team-a/web', ready: { status: 'False', reason: 'HealthCheckFailed' } },
      dependencies: [],
      workloads: [{ workload: workload!, children }],
    });
    expect(lines[0]).toBe('PackageSync team-a/web  Ready=False HealthCheckFailed');
    expect(lines[1]).toMatch(/^└ Deployment\/[^/ ]+\/web {2}/);
    expect(lines.some((l) => /^ {2}└ ReplicaSet\/[^ ]+$/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/^ {4}└ Pod\/[^ ]+ {2}ImagePullBackOff.*nope:1/);
  });

  it.each([
    [
      'a dependency not Ready',
      { name: 'team-a/infra', ready: { status: 'False', reason: 'ReconcileFailed' } },
      '└ dependsOn team-a/infra  Ready=False ReconcileFailed',
    ],
    ['a missing dependency', { name: 'team-a/gone' }, '└ dependsOn team-a/gone  not found'],
  ])('names %s', (_name, dep, line) => {
    const lines = causeChain({ packageSync: { name: 'team-a/web' }, dependencies: [dep], workloads: [] });
    expect(lines).toEqual(['PackageSync team-a/web  Ready=Unknown', line]);
  });

  it('skips Ready dependencies', () => {
    const lines = causeChain({
      packageSync: { name: 'a/b', ready: { status: 'True' } },
      dependencies: [{ name: 'a/c', ready: { status: 'True' } }],
      workloads: [],
    });
    expect(lines).toEqual(['PackageSync a/b  Ready=True']);
  });
});

describe('healthCause', () => {
  it('goes from the workload through its ReplicaSet to the Pod the wait named, as data', () => {
    const [workload, ...children] = fixtureDocs('explain-deployment-image-pull.yaml') as KubeObject[];
    const ns = workload!.metadata.namespace!;
    const first = { object: refOf(workload!), health: computeHealth(workload!) };
    const links = healthCause(first, workload, children);
    expect(links).toHaveLength(3);
    expect(links[0]).toMatchObject({ kind: 'Deployment', namespace: ns, name: 'web' });
    expect(links[1]).toEqual({ kind: 'ReplicaSet', namespace: ns, name: expect.stringMatching(/^web-/) });
    expect(links[2]).toMatchObject({ kind: 'Pod', namespace: ns, reason: 'ImagePullBackOff' });
    expect(links[2]!.message).toMatch(/^ImagePullBackOff.*nope:1/);
  });

  it.each([
    [
      'a custom resource: the object and its own message',
      { group: 'example.com', kind: 'Widget', namespace: 'a', name: 'w' },
      { status: 'Failed' as const, reason: 'BackendDown', message: 'Widget.example.com/a/w: backend refused' },
      [{ kind: 'Widget.example.com', namespace: 'a', name: 'w', reason: 'BackendDown', message: 'backend refused' }],
    ],
    [
      'an object not found: its status is the reason',
      { group: '', kind: 'ConfigMap', namespace: 'a', name: 'c' },
      { status: 'NotFound' as const, message: 'object not found' },
      [{ kind: 'ConfigMap', namespace: 'a', name: 'c', reason: 'NotFound', message: 'object not found' }],
    ],
  ])('%s', (_name, object, health, links) => {
    expect(healthCause({ object, health }, undefined, [])).toEqual(links);
  });

  it('does not take a ReplicaSet owned by a recreated Deployment of the same name (uid differs)', () => {
    const [workload, ...children] = fixtureDocs('explain-deployment-image-pull.yaml') as KubeObject[];
    const recreated = { ...workload!, metadata: { ...workload!.metadata, uid: 'another-uid' } };
    const first = { object: refOf(recreated), health: computeHealth(recreated) };
    expect(healthCause(first, recreated, children)).toHaveLength(1);
  });
});
