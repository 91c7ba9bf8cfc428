import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object.ts';
import { kindRank, kindsFirst, otherKindsRank } from './kind-order.ts';
import { planWaves } from './waves.ts';

const o = (apiVersion: string, kind: string, name = 'x'): KubeObject => ({ apiVersion, kind, metadata: { name } });
const crd = (group: string, kind: string): KubeObject => ({
  ...o('apiextensions.k8s.io/v1', 'CustomResourceDefinition', `${kind.toLowerCase()}s.${group}`),
  spec: { group, names: { kind, plural: `${kind.toLowerCase()}s` }, scope: 'Namespaced' },
});
const label = (obj: KubeObject) => `${obj.kind}/${obj.metadata.name}`;

describe('kindRank', () => {
  it.each([
    ['Namespace', 0],
    ['ResourceQuota', 1],
    ['CustomResourceDefinition', 3],
    ['PodDisruptionBudget', kindsFirst.length - 1],
    ['Ingress', otherKindsRank],
    ['Widget', otherKindsRank],
    ['ValidatingWebhookConfiguration', otherKindsRank + 1],
  ])('%s → %i', (kind, rank) => {
    expect(kindRank(kind)).toBe(rank);
  });

  it('orders the listed kinds as listed', () => {
    const ranks = kindsFirst.map(kindRank);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    expect(new Set(ranks).size).toBe(kindsFirst.length);
  });
});

describe('planWaves', () => {
  it.each<[string, KubeObject[], string[][]]>([
    ['empty', [], []],
    [
      'one wave per rank present, in rank order',
      [
        o('apps/v1', 'Deployment', 'web'),
        o('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'vw'),
        o('v1', 'Service', 'web'),
        o('v1', 'Namespace', 'team-a'),
        o('v1', 'ConfigMap', 'cfg'),
      ],
      [
        ['Namespace/team-a'],
        ['ConfigMap/cfg'],
        ['Service/web'],
        ['Deployment/web'],
        ['ValidatingWebhookConfiguration/vw'],
      ],
    ],
    [
      'unknown kinds share one wave, in input order',
      [
        o('networking.k8s.io/v1', 'Ingress', 'i'),
        o('example.com/v1', 'Widget', 'w'),
        o('batch/v1', 'Job', 'j'),
        o('apps/v1', 'Deployment', 'd'),
      ],
      [['Deployment/d'], ['Ingress/i', 'Widget/w', 'Job/j']],
    ],
    [
      'stable inside a wave',
      [o('v1', 'ConfigMap', 'c'), o('v1', 'ConfigMap', 'a'), o('v1', 'ConfigMap', 'b')],
      [['ConfigMap/c', 'ConfigMap/a', 'ConfigMap/b']],
    ],
    [
      'RBAC before workloads',
      [
        o('apps/v1', 'Deployment', 'd'),
        o('rbac.authorization.k8s.io/v1', 'RoleBinding', 'rb'),
        o('rbac.authorization.k8s.io/v1', 'Role', 'r'),
        o('v1', 'ServiceAccount', 'sa'),
      ],
      [['ServiceAccount/sa'], ['Role/r'], ['RoleBinding/rb'], ['Deployment/d']],
    ],
  ])('%s', (_name, objects, expected) => {
    expect(planWaves(objects).map((wave) => wave.map(label))).toEqual(expected);
  });

  it('puts custom resources after the CRD that defines them', () => {
    const waves = planWaves([o('example.com/v1', 'Widget', 'w'), crd('example.com', 'Widget')]);
    const waveOf = (kind: string) => waves.findIndex((wave) => wave.some((obj) => obj.kind === kind));
    expect(waveOf('CustomResourceDefinition')).toBeLessThan(waveOf('Widget'));
  });

  it('puts a custom resource named like an early built-in kind after its CRD', () => {
    const waves = planWaves([
      o('example.com/v1', 'Namespace', 'custom'),
      o('v1', 'Namespace', 'real'),
      crd('example.com', 'Namespace'),
    ]);
    expect(waves.map((wave) => wave.map(label))).toEqual([
      ['Namespace/real'],
      ['CustomResourceDefinition/namespaces.example.com'],
      ['Namespace/custom'],
    ]);
  });

  it('does not lose or duplicate objects', () => {
    const objects = Array.from({ length: 1000 }, (_, i) =>
      o('v1', ['ConfigMap', 'Secret', 'Widget', 'Namespace'][i % 4] ?? 'x', `n${i}`),
    );
    const waves = planWaves(objects);
    expect(waves.flat()).toHaveLength(1000);
    expect(new Set(waves.flat())).toEqual(new Set(objects));
  });
});
