import { describe, expect, it } from 'vitest';
import { cm, ids, rendered } from '../../../test/support/render.ts';
import type { RenderOptions } from './types.ts';

describe('renderPackage: namespaces', () => {
  const crd = (scope: string) =>
    `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  scope: ${scope}\n`;
  const widget = 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: elsewhere\n';

  it.each<[string, string, Partial<RenderOptions>, string]>([
    ['no namespace → the owner namespace', cm('a'), {}, 'ConfigMap/team-a/a'],
    ['no namespace → defaultNamespace', cm('a'), { defaultNamespace: 'dflt' }, 'ConfigMap/dflt/a'],
    ['named namespace is kept', cm('a', 'other'), { defaultNamespace: 'dflt' }, 'ConfigMap/other/a'],
    ['targetNamespace fills in', cm('a'), { targetNamespace: 'tgt', defaultNamespace: 'dflt' }, 'ConfigMap/tgt/a'],
    [
      'targetNamespace leaves a named namespace alone',
      cm('a', 'other'),
      { targetNamespace: 'tgt' },
      'ConfigMap/other/a',
    ],
    ['empty targetNamespace is unset', cm('a', 'other'), { targetNamespace: '' }, 'ConfigMap/other/a'],
    [
      'cluster-scoped namespace is stripped',
      'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: nn\n  namespace: x\n',
      { targetNamespace: 'tgt' },
      'Namespace/-/nn',
    ],
    [
      'ClusterRole is cluster-scoped',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n',
      {},
      'ClusterRole/-/r',
    ],
    [
      'PriorityClass is cluster-scoped',
      'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: p}\n',
      {},
      'PriorityClass/-/p',
    ],
    [
      'a built-in kind name in another group is namespaced',
      'apiVersion: example.com/v1\nkind: Namespace\nmetadata: {name: nn}\n',
      {},
      'Namespace/team-a/nn',
    ],
    [
      'unknown kinds are namespaced',
      'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n',
      {},
      'Gadget/team-a/g',
    ],
    [
      'discovery wins over the built-in table',
      'apiVersion: v1\nkind: Namespace\nmetadata: {name: nn}\n',
      { isNamespaced: () => true },
      'Namespace/team-a/nn',
    ],
    [
      'discovery says cluster-scoped',
      'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g, namespace: x}\n',
      { isNamespaced: (g, k) => (g === 'example.com' && k === 'Gadget' ? false : undefined) },
      'Gadget/-/g',
    ],
  ])('%s', (_name, manifest, options, expected) => {
    expect(ids(rendered({ 'm.yaml': manifest }, options))).toEqual([expected]);
  });

  it.each([
    ['Cluster', 'Widget/-/w'],
    ['Namespaced', 'Widget/elsewhere/w'],
  ])('a CRD in the package decides its kind scope (%s)', (scope, expected) => {
    const pkg = rendered({ 'crd.yaml': crd(scope), 'w.yaml': widget });
    expect(ids(pkg)).toEqual(['CustomResourceDefinition/-/widgets.example.com', expected]);
  });

  it('discovery wins over a CRD in the package', () => {
    const pkg = rendered(
      { 'crd.yaml': crd('Cluster'), 'w.yaml': widget },
      { isNamespaced: (_g, k) => (k === 'Widget' ? true : undefined) },
    );
    expect(ids(pkg)).toContain('Widget/elsewhere/w');
  });
});
