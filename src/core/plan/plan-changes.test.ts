import { describe, expect, it } from 'vitest';
import { entryOf } from '../inventory.ts';
import type { KubeObject } from '../object.ts';
import { planChanges } from './plan-changes.ts';

const owner = { name: 'web', namespace: 'team-a' };
const cm = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'team-a' },
});
const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'extra' } };
const crd: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
};
const pvc: KubeObject = {
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'data', namespace: 'team-a' },
};

describe('planChanges: protected kinds that left the package', () => {
  const inventory = [cm('a'), cm('gone'), ns, crd, pvc].map(entryOf);
  const names = (refs: { kind: string; name: string }[]) => refs.map((r) => `${r.kind}/${r.name}`).sort();

  it('are released, not pruned, by default: left in the cluster, dropped from the inventory', () => {
    const r = planChanges([cm('a')], inventory, new Map(), owner);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(names(r.value.prune)).toEqual(['ConfigMap/gone']);
    expect(names(r.value.released)).toEqual([
      'CustomResourceDefinition/widgets.example.com',
      'Namespace/extra',
      'PersistentVolumeClaim/data',
    ]);
    expect(r.value.inventoryAfter.map((e) => e.id)).toEqual(['team-a_a__ConfigMap']);
    // still listed while applying: a crash before the prune finished forgets nothing
    expect(r.value.inventoryDuringApply).toHaveLength(5);
  });

  it('are pruned with spec.pruneProtectedKinds', () => {
    const r = planChanges([cm('a')], inventory, new Map(), owner, { pruneProtectedKinds: true });
    expect(r.ok && names(r.value.prune)).toHaveLength(4);
    expect(r.ok && r.value.released).toEqual([]);
  });
});
