import { describe, expect, it } from 'vitest';
import { refKey, refOf, type KubeObject, type ObjectRef } from '../object.ts';
import { DependsOnAnnotation, formatDependsOn, readDependsOn } from './depends-on.ts';
import { buildGraph, type DependencyGraph } from './graph.ts';
import { rendered } from '../../../test/support/render.ts';

const o = (apiVersion: string, kind: string, name: string, namespace?: string, dependsOn?: string): KubeObject => ({
  apiVersion,
  kind,
  metadata: {
    name,
    ...(namespace ? { namespace } : {}),
    ...(dependsOn !== undefined ? { annotations: { [DependsOnAnnotation]: dependsOn } } : {}),
  },
});
const crd = (group: string, kind: string): KubeObject => ({
  ...o('apiextensions.k8s.io/v1', 'CustomResourceDefinition', `${kind.toLowerCase()}s.${group}`),
  spec: { group, names: { kind, plural: `${kind.toLowerCase()}s` }, scope: 'Namespaced' },
});
const ns = (name: string, dependsOn?: string) => o('v1', 'Namespace', name, undefined, dependsOn);
const cm = (name: string, namespace = 'a', dependsOn?: string) => o('v1', 'ConfigMap', name, namespace, dependsOn);
const deploy = (name: string, namespace = 'a', dependsOn?: string) =>
  o('apps/v1', 'Deployment', name, namespace, dependsOn);
const label = (obj: KubeObject) => `${obj.kind}/${obj.metadata.name}`;

function graphOf(objects: KubeObject[], exists: ObjectRef[] = []): DependencyGraph {
  const live = new Set(exists.map(refKey));
  const g = buildGraph(objects, { exists: (r) => live.has(refKey(r)) });
  if (!g.ok) throw new Error(g.failure.message);
  return g.value;
}
const orderOf = (objects: KubeObject[]) => graphOf(objects).order.map((i) => label(objects[i]!));
const needs = (g: DependencyGraph, i: number) => ({
  applied: g.nodes[i]!.needsApplied.map((j) => label(g.nodes[j]!.object)),
  healthy: g.nodes[i]!.needsHealthy.map((j) => label(g.nodes[j]!.object)),
});

describe('readDependsOn (cli-utils syntax)', () => {
  const ref = (group: string, kind: string, name: string, namespace = '') => ({ group, kind, namespace, name });
  it.each<[string, string, ObjectRef[] | string]>([
    [
      'cluster-scoped',
      'rbac.authorization.k8s.io/ClusterRole/admin',
      [ref('rbac.authorization.k8s.io', 'ClusterRole', 'admin')],
    ],
    ['namespaced, core group empty', '/namespaces/a/ConfigMap/cfg', [ref('', 'ConfigMap', 'cfg', 'a')]],
    ['namespaced with a group', 'apps/namespaces/a/Deployment/db', [ref('apps', 'Deployment', 'db', 'a')]],
    [
      'several, space around each trimmed',
      ' /Namespace/a ,\n apps/namespaces/a/Deployment/db\n',
      [ref('', 'Namespace', 'a'), ref('apps', 'Deployment', 'db', 'a')],
    ],
    ['empty value', '', 'found 1 field(s)'],
    ['four fields', 'apps/a/Deployment/db', 'found 4 field(s)'],
    ['five fields without "namespaces"', 'apps/ns/a/Deployment/db', 'must be "namespaces"'],
    ['empty kind', 'apps//db', 'the kind is empty'],
    ['empty name', 'apps/namespaces/a/Deployment/', 'the name is empty'],
    ['trailing comma', '/Namespace/a,', 'reference 2'],
    ['named twice', '/Namespace/a,/Namespace/a', '/Namespace/a is named twice'],
  ])('%s', (_name, value, expected) => {
    const r = readDependsOn(cm('x', 'a', value));
    if (typeof expected === 'string') {
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.failure.message).toContain(expected);
    } else {
      expect(r).toEqual({ ok: true, value: expected });
    }
  });

  it('formats references back in the same syntax', () => {
    expect(formatDependsOn(ref('', 'ConfigMap', 'cfg', 'a'))).toBe('/namespaces/a/ConfigMap/cfg');
    expect(formatDependsOn(ref('rbac.authorization.k8s.io', 'ClusterRole', 'x'))).toBe(
      'rbac.authorization.k8s.io/ClusterRole/x',
    );
  });
});

describe('buildGraph: edges', () => {
  it('a custom resource needs its CRD applied; a namespaced object its Namespace', () => {
    const objects = [o('example.com/v1', 'Widget', 'w', 'a'), crd('example.com', 'Widget'), ns('a'), cm('c')];
    const g = graphOf(objects);
    expect(needs(g, 0)).toEqual({
      applied: ['CustomResourceDefinition/widgets.example.com', 'Namespace/a'],
      healthy: [],
    });
    expect(needs(g, 3)).toEqual({ applied: ['Namespace/a'], healthy: [] });
    expect(needs(g, 2)).toEqual({ applied: [], healthy: [] });
    expect(g.dependents[2]!.map((i) => label(objects[i]!)).sort()).toEqual(['ConfigMap/c', 'Widget/w']);
  });

  it('a kind named like a CRD kind in another group, or a Namespace of another group, is not linked', () => {
    const objects = [
      o('other.io/v1', 'Widget', 'w', 'a'),
      crd('example.com', 'Widget'),
      o('example.com/v1', 'Namespace', 'a'),
    ];
    expect(needs(graphOf(objects), 0)).toEqual({ applied: [], healthy: [] });
  });

  it('depends-on makes an edge to be Current; it replaces an implicit edge to the same object', () => {
    const objects = [ns('a'), cm('c', 'a', '/Namespace/a,apps/namespaces/a/Deployment/db'), deploy('db')];
    expect(needs(graphOf(objects), 1)).toEqual({ applied: [], healthy: ['Namespace/a', 'Deployment/db'] });
  });

  it('a dependency that left the package (about to be pruned) is refused, even though it still exists', () => {
    const gone = { group: 'apps', kind: 'Deployment', namespace: 'a', name: 'db' };
    const g = buildGraph([cm('c', 'a', 'apps/namespaces/a/Deployment/db')], {
      exists: () => true,
      leaving: (r) => refKey(r) === refKey(gone),
    });
    expect(g.ok).toBe(false);
    if (!g.ok) expect(g.failure.message).toContain('which left the package and would be pruned');
  });

  it('a dependency outside the package that exists in the cluster is waited on, not applied', () => {
    const external = { group: 'apps', kind: 'Deployment', namespace: 'infra', name: 'db' };
    const g = graphOf([cm('c', 'a', 'apps/namespaces/infra/Deployment/db')], [external]);
    expect(g.nodes[0]!.external).toEqual([external]);
    expect(needs(g, 0)).toEqual({ applied: [], healthy: [] });
  });
});

describe('buildGraph: validation', () => {
  const sources = (objects: KubeObject[]) =>
    new Map(objects.map((obj) => [refKey(refOf(obj)), `files/${obj.metadata.name}.yaml`]));
  it.each<[string, KubeObject[], string[], boolean]>([
    [
      'a self-dependency',
      [cm('c', 'a', '/namespaces/a/ConfigMap/c')],
      ['ConfigMap/a/c (files/c.yaml) depends on itself'],
      true,
    ],
    [
      'a two-object cycle names both objects and files',
      [cm('x', 'a', '/namespaces/a/ConfigMap/y'), cm('y', 'a', '/namespaces/a/ConfigMap/x')],
      ['dependency cycle: ConfigMap/a/x (files/x.yaml) → ConfigMap/a/y (files/y.yaml) → ConfigMap/a/x (files/x.yaml)'],
      true,
    ],
    [
      'a cycle through an implicit edge (a Namespace that depends on an object inside it)',
      [ns('a', '/namespaces/a/ConfigMap/c'), cm('c', 'a')],
      ['dependency cycle:', 'Namespace/a (files/a.yaml)', 'ConfigMap/a/c (files/c.yaml)'],
      true,
    ],
    [
      'a three-object cycle behind an innocent object',
      [
        cm('start', 'a', '/namespaces/a/ConfigMap/p'),
        cm('p', 'a', '/namespaces/a/ConfigMap/q'),
        cm('q', 'a', '/namespaces/a/ConfigMap/r'),
        cm('r', 'a', '/namespaces/a/ConfigMap/p'),
      ],
      ['ConfigMap/a/p (files/p.yaml) → ConfigMap/a/q (files/q.yaml) → ConfigMap/a/r (files/r.yaml) → ConfigMap/a/p'],
      true,
    ],
    [
      'a dependency neither in the package nor in the cluster (retried: it may appear)',
      [cm('c', 'a', 'apps/namespaces/a/Deployment/gone')],
      [
        'ConfigMap/a/c (files/c.yaml) depends on apps/namespaces/a/Deployment/gone, which is neither in the package nor in the cluster',
      ],
      false,
    ],
    [
      'the wrong namespace: the hint names the object the package has',
      [cm('c', 'a', 'apps/Deployment/db'), deploy('db', 'b')],
      ['which is neither in the package nor in the cluster (the package has apps/namespaces/b/Deployment/db)'],
      false,
    ],
    [
      'a malformed annotation',
      [cm('c', 'a', 'Deployment/db')],
      ['ConfigMap/a/c (files/c.yaml) has an invalid config.kubernetes.io/depends-on annotation'],
      true,
    ],
    [
      'every problem at once, at most five',
      Array.from({ length: 7 }, (_, i) => cm(`c${i}`, 'a', `/namespaces/a/ConfigMap/missing${i}`)),
      ['ConfigMap/a/c0 (files/c0.yaml)', 'ConfigMap/a/c4 (files/c4.yaml)', '; and 2 more'],
      false,
    ],
  ])('%s', (_name, objects, messages, terminal) => {
    const g = buildGraph(objects, { sources: sources(objects), exists: () => false });
    expect(g.ok).toBe(false);
    if (g.ok) return;
    expect(g.failure.reason).toBe('InvalidDependency');
    for (const m of messages) expect(g.failure.message).toContain(m);
    expect(g.failure.terminal).toBe(terminal);
    expect(g.failure.object).toBeDefined();
  });
});

describe('buildGraph: apply order', () => {
  it.each<[string, KubeObject[], string[]]>([
    ['empty', [], []],
    [
      'kind order breaks ties; input order inside a kind',
      [deploy('web'), cm('z'), o('v1', 'Service', 'web', 'a'), cm('b'), o('v1', 'ServiceAccount', 'sa', 'a')],
      ['ServiceAccount/sa', 'ConfigMap/z', 'ConfigMap/b', 'Service/web', 'Deployment/web'],
    ],
    [
      'a Namespace before what lives in it, a CRD before its resources',
      [o('example.com/v1', 'Widget', 'w', 'a'), cm('c'), crd('example.com', 'Widget'), ns('a')],
      ['Namespace/a', 'CustomResourceDefinition/widgets.example.com', 'ConfigMap/c', 'Widget/w'],
    ],
    [
      'depends-on overrides kind order',
      [cm('cfg', 'a', 'apps/namespaces/a/Deployment/db'), deploy('db'), deploy('web')],
      ['Deployment/db', 'ConfigMap/cfg', 'Deployment/web'],
    ],
    [
      'a custom resource named like an early built-in kind comes after its CRD',
      [o('example.com/v1', 'Namespace', 'custom'), ns('real'), crd('example.com', 'Namespace')],
      ['Namespace/real', 'CustomResourceDefinition/namespaces.example.com', 'Namespace/custom'],
    ],
    [
      'webhook configurations last, except before what depends on them',
      [
        o('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'vw'),
        cm('after-webhook', 'a', 'admissionregistration.k8s.io/ValidatingWebhookConfiguration/vw'),
        deploy('web'),
        o('example.com/v1', 'Widget', 'w', 'a'),
      ],
      ['Deployment/web', 'Widget/w', 'ValidatingWebhookConfiguration/vw', 'ConfigMap/after-webhook'],
    ],
  ])('%s', (_name, objects, expected) => {
    expect(orderOf(objects)).toEqual(expected);
  });

  it('a webhook configuration waits for every object that does not depend on it', () => {
    const objects = [
      o('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'vw'),
      deploy('web'),
      cm('c'),
    ];
    expect(graphOf(objects).nodes[0]!.after).toEqual([1, 2]);
  });
});

describe('buildGraph: size', () => {
  // A quadratic step would take minutes here; linear work takes well under the test timeout.
  it('1,000 objects in 100 namespaces with CRDs and a depends-on chain: every object once, every edge kept', () => {
    const objects: KubeObject[] = [];
    for (let n = 0; n < 100; n++) objects.push(ns(`ns${n}`));
    for (let k = 0; k < 10; k++) objects.push(crd('example.com', `Kind${k}`));
    let previous: string | undefined;
    for (let i = 0; objects.length < 1000; i++) {
      const namespace = `ns${i % 100}`;
      if (i % 3 === 0) {
        objects.push(o('example.com/v1', `Kind${i % 10}`, `w${i}`, namespace));
      } else {
        objects.push(cm(`c${i}`, namespace, previous));
        previous = `/namespaces/${namespace}/ConfigMap/c${i}`;
      }
    }
    const g = graphOf(objects);
    expect(g.order).toHaveLength(1000);
    expect(new Set(g.order).size).toBe(1000);
    const pos = new Map(g.order.map((i, p) => [i, p]));
    for (const [i, n] of g.nodes.entries())
      for (const j of [...n.needsApplied, ...n.needsHealthy]) expect(pos.get(j)!).toBeLessThan(pos.get(i)!);
  });

  it('20,000 objects in one namespace chained by depends-on (a worst case for a naive sort)', () => {
    const objects = [
      ns('a'),
      ...Array.from({ length: 20_000 }, (_, i) =>
        cm(`c${i}`, 'a', i > 0 ? `/namespaces/a/ConfigMap/c${i - 1}` : undefined),
      ),
    ];
    const g = graphOf(objects);
    expect(g.order[0]).toBe(0);
    expect(g.order[20_000]).toBe(20_000);
    expect(g.dependents[0]).toHaveLength(20_000);
  });
});

describe('buildGraph: validation of a rendered plain package', () => {
  const annotated = (name: string, dep: string) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "${name}"\n  annotations: {${DependsOnAnnotation}: "${dep}"}\n`;
  const failure = (files: Record<string, string>) => {
    const pkg = rendered(files);
    const g = buildGraph(pkg.objects, { sources: pkg.sources, exists: () => false });
    return g.ok ? '' : g.failure.message;
  };

  it('names the file and line each object of a cycle starts on', () => {
    const message = failure({
      'app/x.yaml': `# x and y need each other\n${annotated('x', '/namespaces/team-a/ConfigMap/y')}`,
      'app/y.yaml': `${annotated('w', '/namespaces/team-a/ConfigMap/x')}---\n${annotated('y', '/namespaces/team-a/ConfigMap/x')}`,
    });
    expect(message).toContain(
      'ConfigMap/team-a/x (app/x.yaml:2) → ConfigMap/team-a/y (app/y.yaml:7) → ConfigMap/team-a/x (app/x.yaml:2)',
    );
  });

  it('names the file and line of an object whose dependency is missing', () => {
    const message = failure({ 'app/z.yaml': `\n\n${annotated('z', '/namespaces/team-a/ConfigMap/gone')}` });
    expect(message).toContain('ConfigMap/team-a/z (app/z.yaml:3) depends on /namespaces/team-a/ConfigMap/gone');
  });
});
