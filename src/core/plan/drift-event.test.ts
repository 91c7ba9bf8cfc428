import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object.ts';
import { appliedShape, changedOutsideStatus, differsFromApplied, ownerKeyOf } from './drift-event.ts';

const base: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'a',
    resourceVersion: '1',
    generation: 1,
    labels: { 'packagesync.io/name': 'web', 'packagesync.io/namespace': 'team-a' },
  },
  spec: { replicas: 2 },
  status: { readyReplicas: 1 },
};
const edit = (f: (o: KubeObject & Record<string, unknown>) => void) => {
  const o = structuredClone(base) as KubeObject & Record<string, unknown>;
  f(o);
  return o;
};

describe('changedOutsideStatus', () => {
  it.each([
    [
      'status and resourceVersion only',
      edit((o) => ((o.status = { readyReplicas: 2 }), (o.metadata.resourceVersion = '2'))),
      false,
    ],
    ['generation only', edit((o) => (o.metadata.generation = 2)), false],
    ['a spec field', edit((o) => (o.spec = { replicas: 5 })), true],
    // added by someone else (kube-controller-manager's revision on a Deployment): not a field the package set
    ['an annotation added', edit((o) => (o.metadata.annotations = { x: 'y' })), false],
    ['a label added', edit((o) => (o.metadata.labels = { ...o.metadata.labels, team: 'b' })), false],
    [
      'an owner label changed',
      edit((o) => (o.metadata.labels = { ...o.metadata.labels, 'packagesync.io/name': 'x' })),
      true,
    ],
    ['an owner label removed', edit((o) => delete o.metadata.labels!['packagesync.io/namespace']), true],
  ])('%s → %s', (_case, after, expected) => expect(changedOutsideStatus(base, after)).toBe(expected));
  it('without the copy before, it may have changed', () => expect(changedOutsideStatus(undefined, base)).toBe(true));
  it('an annotation changed or removed is a change', () => {
    const annotated = edit((o) => (o.metadata.annotations = { x: 'y' }));
    expect(
      changedOutsideStatus(
        annotated,
        edit((o) => (o.metadata.annotations = { x: 'z' })),
      ),
    ).toBe(true);
    expect(changedOutsideStatus(annotated, base)).toBe(true);
  });
});

// Session 17: a watch's first list delivers each object as an add, with no copy before; an edit made between our
// apply and that list went unseen until the interval (e2e/drift-tenants failed once in CI).
describe('differsFromApplied: a copy with no event before it, judged against the one we applied', () => {
  const cases: [string, KubeObject, boolean][] = [
    ['the copy we applied', base, false],
    [
      'status and resourceVersion only',
      edit((o) => ((o.status = { readyReplicas: 2 }), (o.metadata.resourceVersion = '2'))),
      false,
    ],
    ['an annotation someone added', edit((o) => (o.metadata.annotations = { x: 'y' })), false],
    ['a spec field', edit((o) => (o.spec = { replicas: 5 })), true],
    ['an owner label removed', edit((o) => delete o.metadata.labels!['packagesync.io/namespace']), true],
  ];
  it.each(cases)('%s → %s', (_case, seen, expected) =>
    expect(differsFromApplied(appliedShape(base), seen)).toBe(expected),
  );
  it('agrees with changedOutsideStatus on every case above', () => {
    for (const [, seen] of cases)
      expect(differsFromApplied(appliedShape(base), seen)).toBe(changedOutsideStatus(base, seen));
  });
});

describe('ownerKeyOf', () => {
  it('names the PackageSync of both owner labels, or none', () => {
    expect(ownerKeyOf(base)).toBe('team-a/web');
    expect(ownerKeyOf(edit((o) => (o.metadata.labels = { 'packagesync.io/name': 'web' })))).toBeUndefined();
  });
});
