import { describe, expect, it } from 'vitest';
import { refOf, type KubeObject } from '../object.ts';
import { WakeInterest } from './wakeups.ts';

const obj = (apiVersion: string, kind: string, namespace: string, name: string, owners: string[] = []): KubeObject => ({
  apiVersion,
  kind,
  metadata: {
    namespace,
    name,
    ...(owners.length
      ? { ownerReferences: owners.map((o) => ({ apiVersion: 'apps/v1', kind: 'X', name: o, uid: o })) }
      : {}),
  },
});

const web = obj('apps/v1', 'Deployment', 'team-a', 'web');
const db = obj('apps/v1', 'StatefulSet', 'team-a', 'db');
const config = obj('v1', 'ConfigMap', 'team-a', 'config');
const webRs = obj('apps/v1', 'ReplicaSet', 'team-a', 'web-5d8f', ['web']);

/** A wait on web, db and config, explaining web and db, whose read found web's ReplicaSet. */
function waiting(): WakeInterest {
  const interest = new WakeInterest();
  interest.watch([web, db, config].map(refOf));
  interest.explain([web, db], [webRs]);
  return interest;
}

describe('WakeInterest', () => {
  it.each([
    ['its own Deployment', web, true],
    ['its own ConfigMap', config, true],
    ['a ConfigMap of the same namespace it does not hold', obj('v1', 'ConfigMap', 'team-a', 'other'), false],
    ['its ConfigMap name in another namespace', obj('v1', 'ConfigMap', 'team-b', 'config'), false],
    ['its Deployment name under another group', obj('example.com/v1', 'Deployment', 'team-a', 'web'), false],
    ['a neighbour Deployment', obj('apps/v1', 'Deployment', 'team-a', 'web-2'), false],
    [
      'a ReplicaSet of its Deployment, even one it has not read yet',
      obj('apps/v1', 'ReplicaSet', 'team-a', 'web-new', ['web']),
      true,
    ],
    [
      'a ReplicaSet owned by its StatefulSet (read as the owner index finds it)',
      obj('apps/v1', 'ReplicaSet', 'team-a', 'x', ['db']),
      true,
    ],
    ['a ReplicaSet of a neighbour', obj('apps/v1', 'ReplicaSet', 'team-a', 'web-2-1', ['web-2']), false],
    ['a Pod of its ReplicaSet', obj('v1', 'Pod', 'team-a', 'web-5d8f-x', ['web-5d8f']), true],
    ['a Pod of its StatefulSet', obj('v1', 'Pod', 'team-a', 'db-0', ['db']), true],
    ['a Pod of a neighbour ReplicaSet', obj('v1', 'Pod', 'team-a', 'web-2-1-x', ['web-2-1']), false],
    ['a Pod of its ReplicaSet name in another namespace', obj('v1', 'Pod', 'team-b', 'p', ['web-5d8f']), false],
    ['a Pod with no owner', obj('v1', 'Pod', 'team-a', 'lonely'), false],
    [
      'a ConfigMap owned by its Deployment (not a child it reads)',
      obj('v1', 'ConfigMap', 'team-a', 'c', ['web']),
      false,
    ],
  ])('%s: %s', (_what, event, wanted) => {
    expect(waiting().wants(event)).toBe(wanted);
  });

  it('wakes for an update that takes a Pod away from its owners (the copy before was one of its children)', () => {
    const before = obj('v1', 'Pod', 'team-a', 'web-5d8f-x', ['web-5d8f']);
    const after = obj('v1', 'Pod', 'team-a', 'web-5d8f-x');
    expect(waiting().wants(after, before)).toBe(true);
    expect(waiting().wants(after)).toBe(false);
  });

  it('reads ReplicaSets only in a namespace with a Deployment to explain', () => {
    const interest = new WakeInterest();
    interest.explain([db], []);
    expect(interest.wants(obj('apps/v1', 'ReplicaSet', 'team-a', 'x', ['db']))).toBe(false);
    expect(interest.wants(obj('v1', 'Pod', 'team-a', 'db-0', ['db']))).toBe(true);
  });

  it('forgets children once nothing is left to explain, and objects it no longer holds', () => {
    const interest = waiting();
    interest.explain([], []);
    interest.watch([refOf(config)]);
    expect(interest.wants(obj('v1', 'Pod', 'team-a', 'db-0', ['db']))).toBe(false);
    expect(interest.wants(webRs)).toBe(false);
    expect(interest.wants(web)).toBe(false);
    expect(interest.wants(config)).toBe(true);
  });
});
