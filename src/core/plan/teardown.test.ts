import { describe, expect, it } from 'vitest';
import { describeRef, refKey, refOf, type KubeObject } from '../object.ts';
import { DependsOnAnnotation } from './depends-on.ts';
import { planTeardown } from './teardown.ts';

const o = (apiVersion: string, kind: string, name: string, namespace?: string, dependsOn?: string): KubeObject => ({
  apiVersion,
  kind,
  metadata: {
    name,
    ...(namespace ? { namespace } : {}),
    ...(dependsOn ? { annotations: { [DependsOnAnnotation]: dependsOn } } : {}),
  },
});
const crd: KubeObject = {
  ...o('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'widgets.example.com'),
  spec: { group: 'example.com', names: { kind: 'Widget', plural: 'widgets' } },
};
const ns = o('v1', 'Namespace', 'a');
const widget = o('example.com/v1', 'Widget', 'w', 'a');
const operator = o('apps/v1', 'Deployment', 'operator', 'a');
const cm = o('v1', 'ConfigMap', 'c', 'a');

function teardown(objects: KubeObject[], live = objects) {
  const t = planTeardown(objects.map(refOf), new Map(live.map((x) => [refKey(refOf(x)), x])));
  const name = (i: number) => describeRef(t.refs[i]!);
  return {
    order: t.order.map(name),
    waitFor: (n: string) => t.waitFor[t.refs.findIndex((r) => describeRef(r) === n)]!.map(name),
  };
}

describe('planTeardown', () => {
  it.each<[string, KubeObject[], string[]]>([
    ['nothing', [], []],
    [
      'custom resources before their CRD, objects before their Namespace',
      [ns, crd, widget, cm],
      ['Widget.example.com/a/w', 'ConfigMap/a/c', 'CustomResourceDefinition/widgets.example.com', 'Namespace/a'],
    ],
    [
      'a depends-on dependent before its dependency (the operator outlives its resources)',
      [
        o('apps/v1', 'Deployment', 'operator', 'x'),
        o('example.com/v1', 'Widget', 'w', 'x', 'apps/namespaces/x/Deployment/operator'),
      ],
      ['Widget.example.com/x/w', 'Deployment/x/operator'],
    ],
    [
      'a cycle is broken, not a deadlock',
      [
        o('v1', 'ConfigMap', 'p', 'x', '/namespaces/x/ConfigMap/q'),
        o('v1', 'ConfigMap', 'q', 'x', '/namespaces/x/ConfigMap/p'),
      ],
      ['ConfigMap/x/p', 'ConfigMap/x/q'],
    ],
    [
      'a malformed annotation or a name outside the set is ignored',
      [o('v1', 'ConfigMap', 'p', 'x', 'nonsense'), o('v1', 'ConfigMap', 'q', 'x', '/namespaces/x/ConfigMap/elsewhere')],
      ['ConfigMap/x/p', 'ConfigMap/x/q'],
    ],
  ])('%s', (_name, objects, expected) => {
    expect(teardown(objects).order).toEqual(expected);
  });

  it('says what each object waits for', () => {
    const t = teardown([ns, crd, widget, cm, operator]);
    expect(t.waitFor('CustomResourceDefinition/widgets.example.com')).toEqual(['Widget.example.com/a/w']);
    expect(t.waitFor('Namespace/a').sort()).toEqual([
      'ConfigMap/a/c',
      'Deployment/a/operator',
      'Widget.example.com/a/w',
    ]);
    expect(t.waitFor('Widget.example.com/a/w')).toEqual([]);
  });

  it('an object already gone (no live copy) still orders by its ref', () => {
    expect(teardown([ns, cm], [ns]).order).toEqual(['ConfigMap/a/c', 'Namespace/a']);
  });

  it('objects caught in a cycle still go before their Namespace', () => {
    const objects = [
      ns,
      o('v1', 'ConfigMap', 'p', 'a', '/namespaces/a/ConfigMap/q'),
      o('v1', 'ConfigMap', 'q', 'a', '/namespaces/a/ConfigMap/p'),
    ];
    const t = teardown(objects);
    expect(t.order.at(-1)).toBe('Namespace/a');
    expect(t.waitFor('ConfigMap/a/p')).toEqual([]);
  });

  it('10,000 objects in one Namespace', () => {
    const objects = [ns, ...Array.from({ length: 10_000 }, (_, i) => o('v1', 'ConfigMap', `c${i}`, 'a'))];
    const t = teardown(objects);
    expect(t.order).toHaveLength(10_001);
    expect(t.order.at(-1)).toBe('Namespace/a');
  });
});
