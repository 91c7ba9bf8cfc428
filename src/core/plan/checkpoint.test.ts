import { describe, expect, it } from 'vitest';
import { entryOf } from '../inventory.ts';
import { refKey, refOf, type KubeObject } from '../object.ts';
import { checkpointOf, type CheckpointInput } from './checkpoint.ts';

const cm = (name: string, uid: string, resourceVersion: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'apps', uid, resourceVersion },
});
const crd = (uid: string, resourceVersion: string): KubeObject => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com', uid, resourceVersion },
});

function input(objects: KubeObject[], more: Partial<CheckpointInput> = {}): CheckpointInput {
  return {
    inputs: 'inputs-digest-1',
    inventory: objects.map(entryOf),
    live: new Map(objects.map((o) => [refKey(refOf(o)), o])),
    ...more,
  };
}

describe('checkpointOf', () => {
  const objects = [cm('a', 'u1', '10'), crd('u2', '11')];
  const base = checkpointOf(input(objects))!;

  it('is the same for the same inputs, whatever the live map order or other fields of the copies', () => {
    expect(base).toMatch(/^[\w-]{43}$/);
    const reordered = new Map([...input(objects).live].reverse());
    const annotated = objects.map((o) => ({ ...o, data: { other: 'field' } }));
    expect(checkpointOf(input(objects, { live: reordered }))).toBe(base);
    expect(checkpointOf(input(annotated))).toBe(base);
  });

  it.each<[string, Partial<CheckpointInput> | KubeObject[]]>([
    ['other inputs (core/inputs.ts)', { inputs: 'inputs-digest-2' }],
    ['an object changed (resourceVersion)', [cm('a', 'u1', '12'), crd('u2', '11')]],
    ['an object re-created (uid)', [cm('a', 'u9', '10'), crd('u2', '11')]],
    ['an object more in the inventory', [...objects, cm('b', 'u3', '13')]],
  ])('changes with %s', (_what, change) => {
    const changed = Array.isArray(change) ? input(change) : input(objects, change);
    expect(checkpointOf(changed)).not.toBe(base);
  });

  it('is undefined when an inventoried object has no live copy, or no uid or resourceVersion', () => {
    const live = new Map(input(objects).live);
    live.delete(refKey(refOf(objects[1]!)));
    expect(checkpointOf(input(objects, { live }))).toBeUndefined();
    const bare = { ...objects[0]!, metadata: { name: 'a', namespace: 'apps' } };
    expect(checkpointOf(input([bare]))).toBeUndefined();
  });

  it('is undefined for an inventory entry that names no object', () => {
    expect(checkpointOf(input(objects, { inventory: [{ id: 'not-an-entry', v: 'v1' }] }))).toBeUndefined();
  });
});
