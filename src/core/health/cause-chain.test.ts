import { describe, expect, it } from 'vitest';
import { refOf, type KubeObject } from '../object.ts';
import { healthCause } from './cause-chain.ts';
import { computeHealth } from './compute.ts';
import { fixtureDocs } from './testdata/fixtures.ts';

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
