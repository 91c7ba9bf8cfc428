import { describe, expect, it } from 'vitest';
import type { KubeObject, ObjectRef } from './object.ts';
import type { InventoryEntry } from './inventory.ts';
import {
  apiVersionOfEntry,
  entryOf,
  inventoryDiff,
  inventoryId,
  mergeInventories,
  refOfEntry,
  sortEntries,
} from './inventory.ts';

const obj = (apiVersion: string, kind: string, name: string, namespace?: string): KubeObject => ({
  apiVersion,
  kind,
  metadata: namespace === undefined ? { name } : { name, namespace },
});

describe('entryOf', () => {
  it.each([
    ['core namespaced', obj('v1', 'ConfigMap', 'web', 'team-a'), { id: 'team-a_web__ConfigMap', v: 'v1' }],
    ['core cluster-scoped', obj('v1', 'Namespace', 'team-a'), { id: '_team-a__Namespace', v: 'v1' }],
    [
      'grouped namespaced',
      obj('apps/v1', 'Deployment', 'web', 'team-a'),
      { id: 'team-a_web_apps_Deployment', v: 'v1' },
    ],
    [
      'grouped cluster-scoped',
      obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'widgets.example.com'),
      { id: '_widgets.example.com_apiextensions.k8s.io_CustomResourceDefinition', v: 'v1' },
    ],
    [
      'RBAC name with colons is transcoded like cli-utils',
      obj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'system:controller:web'),
      { id: '_system__controller__web_rbac.authorization.k8s.io_ClusterRole', v: 'v1' },
    ],
    ['beta version', obj('example.com/v1beta2', 'Widget', 'w', 'ns'), { id: 'ns_w_example.com_Widget', v: 'v1beta2' }],
  ])('%s', (_name, input, expected) => {
    expect(entryOf(input)).toEqual(expected);
  });
});

describe('refOfEntry', () => {
  it.each<[string, string, ObjectRef]>([
    ['core namespaced', 'team-a_web__ConfigMap', { namespace: 'team-a', name: 'web', group: '', kind: 'ConfigMap' }],
    ['cluster-scoped', '_team-a__Namespace', { namespace: '', name: 'team-a', group: '', kind: 'Namespace' }],
    ['grouped', 'team-a_web_apps_Deployment', { namespace: 'team-a', name: 'web', group: 'apps', kind: 'Deployment' }],
    [
      'RBAC colons',
      '_system__controller__web_rbac.authorization.k8s.io_ClusterRole',
      { namespace: '', name: 'system:controller:web', group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' },
    ],
    [
      'dotted name',
      'ns_web.v2_example.com_Widget',
      { namespace: 'ns', name: 'web.v2', group: 'example.com', kind: 'Widget' },
    ],
  ])('parses %s', (_name, id, expected) => {
    expect(refOfEntry({ id, v: 'v1' })).toEqual({ ok: true, value: expected });
  });

  it.each([
    ['empty', ''],
    ['no separators', 'web'],
    ['three fields', 'ns_web_Deployment'],
    ['two fields', 'ns_web'],
    ['empty name', 'ns___Deployment'],
    ['empty kind', 'ns_web_apps_'],
    ['five fields', 'ns_a_b_apps_Deployment'],
  ])('rejects %s', (_name, id) => {
    const result = refOfEntry({ id, v: 'v1' });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.failure.reason).toBe('InternalError');
      expect(result.failure.message).toContain('<namespace>_<name>_<group>_<kind>');
    }
  });

  it.each([
    obj('v1', 'ConfigMap', 'web', 'team-a'),
    obj('v1', 'Namespace', 'team-a'),
    obj('apps/v1', 'Deployment', 'web', 'team-a'),
    obj('rbac.authorization.k8s.io/v1', 'RoleBinding', 'a:b', 'ns'),
    obj('example.com/v1', 'Widget', 'a.b-c', 'ns'),
  ])('round-trips $kind $metadata.name', (o) => {
    const ref = refOfEntry(entryOf(o));
    expect(ref.ok && inventoryId(ref.value)).toBe(entryOf(o).id);
  });
});

const e = (id: string, v = 'v1'): InventoryEntry => ({ id, v });

describe('sortEntries', () => {
  it('sorts by id without changing the input', () => {
    const input = [e('b_x__ConfigMap'), e('_a__Namespace'), e('a_x_apps_Deployment')];
    expect(sortEntries(input).map((x) => x.id)).toEqual(['_a__Namespace', 'a_x_apps_Deployment', 'b_x__ConfigMap']);
    expect(input[0]?.id).toBe('b_x__ConfigMap');
  });
});

describe('mergeInventories', () => {
  it.each([
    ['both empty', [], [], []],
    ['old only', [e('a_x__ConfigMap')], [], [e('a_x__ConfigMap')]],
    ['new only', [], [e('a_x__ConfigMap')], [e('a_x__ConfigMap')]],
    [
      'union in id order',
      [e('b_x__ConfigMap'), e('a_x__ConfigMap')],
      [e('c_x__ConfigMap')],
      [e('a_x__ConfigMap'), e('b_x__ConfigMap'), e('c_x__ConfigMap')],
    ],
    [
      "deduped, new's version wins",
      [e('ns_w_example.com_Widget', 'v1beta1')],
      [e('ns_w_example.com_Widget', 'v1')],
      [e('ns_w_example.com_Widget', 'v1')],
    ],
    ['duplicates inside one side collapse', [e('a_x__ConfigMap'), e('a_x__ConfigMap')], [], [e('a_x__ConfigMap')]],
  ])('%s', (_name, old, next, expected) => {
    expect(mergeInventories(old, next)).toEqual(expected);
  });

  it('does not depend on input order', () => {
    const a = [e('z_1__ConfigMap'), e('a_1__ConfigMap')];
    const b = [e('m_1__ConfigMap')];
    expect(mergeInventories(a, b)).toEqual(mergeInventories([...a].reverse(), [...b].reverse()));
  });
});

describe('inventoryDiff', () => {
  it.each([
    ['no change', [e('a_x__ConfigMap')], [e('a_x__ConfigMap')], [], []],
    ['added', [], [e('a_x__ConfigMap')], [e('a_x__ConfigMap')], []],
    ['removed', [e('a_x__ConfigMap')], [], [], [e('a_x__ConfigMap')]],
    ['version change is neither', [e('a_x_example.com_W', 'v1beta1')], [e('a_x_example.com_W', 'v1')], [], []],
    [
      'mixed, sorted',
      [e('c_x__ConfigMap'), e('a_x__ConfigMap'), e('b_x__ConfigMap')],
      [e('b_x__ConfigMap'), e('e_x__ConfigMap'), e('d_x__ConfigMap')],
      [e('d_x__ConfigMap'), e('e_x__ConfigMap')],
      [e('a_x__ConfigMap'), e('c_x__ConfigMap')],
    ],
  ])('%s', (_name, old, next, added, removed) => {
    expect(inventoryDiff(old, next)).toEqual({ added, removed });
  });
});

describe('apiVersionOfEntry', () => {
  it.each([
    ['team-a_web_apps_Deployment', 'v1', 'apps/v1'],
    ['team-a_web__ConfigMap', 'v1', 'v1'],
    ['ns_w_example.com_Widget', 'v1beta2', 'example.com/v1beta2'],
  ])('%s at %s → %s', (id, v, expected) => {
    const ref = refOfEntry({ id, v });
    expect(ref.ok && apiVersionOfEntry(ref.value, { id, v })).toBe(expected);
  });
});
