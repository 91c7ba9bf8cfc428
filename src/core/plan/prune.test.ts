import { describe, expect, it } from 'vitest';
import type { InventoryEntry } from '../inventory.ts';
import { entryOf } from '../inventory.ts';
import type { KubeObject } from '../object.ts';
import { describeRef } from '../object.ts';
import { planPrune } from './prune.ts';

const o = (apiVersion: string, kind: string, name: string, namespace?: string): KubeObject => ({
  apiVersion,
  kind,
  metadata: namespace ? { name, namespace } : { name },
});
const ns = o('v1', 'Namespace', 'team-a');
const crd = o('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'widgets.example.com');
const deploy = o('apps/v1', 'Deployment', 'web', 'team-a');
const svc = o('v1', 'Service', 'web', 'team-a');
const cm = o('v1', 'ConfigMap', 'cfg', 'team-a');
const widget = o('example.com/v1', 'Widget', 'w', 'team-a');
const hook = o('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'hook');
const inventory = (...objects: KubeObject[]): InventoryEntry[] => objects.map(entryOf);

describe('planPrune', () => {
  it.each<[string, InventoryEntry[], KubeObject[], string[]]>([
    ['nothing before', [], [deploy], []],
    ['nothing removed', inventory(deploy, svc), [svc, deploy], []],
    ['a removed object', inventory(deploy, svc), [deploy], ['Service/team-a/web']],
    [
      'everything removed: reverse apply order, Namespaces and CRDs last',
      inventory(ns, crd, cm, svc, deploy, widget, hook),
      [],
      [
        'ValidatingWebhookConfiguration/hook',
        'Widget.example.com/team-a/w',
        'Deployment/team-a/web',
        'Service/team-a/web',
        'ConfigMap/team-a/cfg',
        'CustomResourceDefinition/widgets.example.com',
        'Namespace/team-a',
      ],
    ],
    ['identity ignores the version', [{ id: 'team-a_w_example.com_Widget', v: 'v1beta1' }], [widget], []],
    [
      'same name in another namespace is stale',
      inventory(o('v1', 'ConfigMap', 'cfg', 'old')),
      [cm],
      ['ConfigMap/old/cfg'],
    ],
    ['malformed entries are left out', [{ id: 'garbage', v: 'v1' }, ...inventory(svc)], [], ['Service/team-a/web']],
    ['duplicate entries give one delete', [...inventory(svc), ...inventory(svc)], [], ['Service/team-a/web']],
    [
      'ties broken by identity',
      inventory(o('v1', 'ConfigMap', 'b', 'x'), o('v1', 'ConfigMap', 'a', 'x')),
      [],
      ['ConfigMap/x/a', 'ConfigMap/x/b'],
    ],
  ])('%s', (_name, old, desired, expected) => {
    expect(planPrune(old, desired).map(describeRef)).toEqual(expected);
  });

  it('scales linearly: 10,000 entries', () => {
    const objects = Array.from({ length: 10_000 }, (_, i) => o('v1', 'ConfigMap', `c${i}`, 'ns'));
    const started = performance.now();
    expect(planPrune(inventory(...objects), objects.slice(5000))).toHaveLength(5000);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
