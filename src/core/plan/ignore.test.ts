import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object.ts';
import { driftedPaths, needsApply, withDigest } from './drift.ts';
import { formatPointer, parsePointer, withoutAt, withValueAt } from './json-pointer.ts';
import { IgnoreFieldsAnnotation, ignoredPointers, respectIgnored, withoutIgnored, type IgnoreRule } from './ignore.ts';
import { matchesLabelSelector } from './label-selector.ts';

const deploy = (replicas: number, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'team-a', labels: { app: 'web', tier: 'front' }, ...extra },
  spec: { replicas, template: { spec: { containers: [{ name: 'web', image: 'nginx:1' }] } } },
});

describe('JSON pointers', () => {
  it.each([
    ['/spec/replicas', ['spec', 'replicas']],
    ['/metadata/annotations/a~1b', ['metadata', 'annotations', 'a/b']],
    ['/x~0y', ['x~y']],
    ['', []],
    ['spec/replicas', undefined],
  ])('%s parses to %j', (p, tokens) => {
    expect(parsePointer(p)).toEqual(tokens);
    if (tokens) expect(formatPointer(tokens)).toBe(p);
  });

  it('removes and sets without touching the input', () => {
    const doc = { a: { b: 1, c: [1, 2, 3] } };
    expect(withoutAt(doc, ['a', 'b'])).toEqual({ a: { c: [1, 2, 3] } });
    expect(withoutAt(doc, ['a', 'c', '1'])).toEqual({ a: { b: 1, c: [1, 3] } });
    expect(withoutAt(doc, ['nope', 'x'])).toBe(doc);
    expect(withValueAt(doc, ['a', 'd', 'e'], 5)).toEqual({ a: { b: 1, c: [1, 2, 3], d: { e: 5 } } });
    expect(withValueAt(doc, ['a', 'c', '9'], 5)).toEqual(doc);
    expect(doc).toEqual({ a: { b: 1, c: [1, 2, 3] } });
  });
});

describe('label selectors', () => {
  const labels = { app: 'web', tier: 'front' };
  it.each([
    ['app=web', true],
    ['app==web,tier=front', true],
    ['app!=web', false],
    ['app in (web, api)', true],
    ['tier notin (front)', false],
    ['app', true],
    ['!legacy', true],
    ['!app', false],
    ['app=web,missing=x', false],
    ['app in web', false],
  ])('%s → %s', (selector, expected) => expect(matchesLabelSelector(selector, labels)).toBe(expected));
});

describe('ignoredPointers', () => {
  const rules: IgnoreRule[] = [
    { paths: ['/spec/replicas'], target: { kind: 'Deployment', labelSelector: 'tier=front' } },
    { paths: ['/metadata/annotations/x'] },
    { paths: ['/spec/other'], target: { kind: 'StatefulSet' } },
    { paths: ['/spec/ns'], target: { group: 'apps', version: 'v1', namespace: 'other' } },
  ];
  it('takes the rules whose target matches, and both copies annotations', () => {
    const live = deploy(3, { annotations: { [IgnoreFieldsAnnotation]: '/spec/template/spec/containers/0/image' } });
    const desired = deploy(2, { annotations: { [IgnoreFieldsAnnotation]: ' /spec/paused , not-a-pointer' } });
    expect(ignoredPointers(desired, live, rules).sort()).toEqual([
      '/metadata/annotations/x',
      '/spec/paused',
      '/spec/replicas',
      '/spec/template/spec/containers/0/image',
    ]);
  });
  it('never ignores what names the object', () => {
    expect(ignoredPointers(deploy(1), undefined, [{ paths: ['/metadata/name', '/metadata', '/kind', ''] }])).toEqual(
      [],
    );
  });
});

describe('respecting ignored fields', () => {
  it('sends the live value of an ignored field, and the package value on create', () => {
    expect(respectIgnored(deploy(2), deploy(7), ['/spec/replicas']).spec).toMatchObject({ replicas: 7 });
    expect(respectIgnored(deploy(2), undefined, ['/spec/replicas']).spec).toMatchObject({ replicas: 2 });
    const noReplicas = withoutAt(deploy(2), ['spec', 'replicas']);
    expect(respectIgnored(deploy(2), noReplicas, ['/spec/replicas']).spec).not.toHaveProperty('replicas');
  });

  it('an ignored field is no drift and no reason to apply; others still are', () => {
    const live = withDigest(deploy(2));
    const scaled = { ...live, spec: { ...(live.spec as object), replicas: 9 } };
    expect(needsApply(deploy(2), scaled)).toBe(true);
    expect(driftedPaths(deploy(2), scaled)).toEqual(['/spec/replicas']);
    expect(needsApply(deploy(2), scaled, ['/spec/replicas'])).toBe(false);
    expect(driftedPaths(deploy(2), scaled, ['/spec/replicas'])).toEqual([]);
    const image = withValueAt(scaled, ['spec', 'template', 'spec', 'containers', '0', 'image'], 'evil:1');
    expect(driftedPaths(deploy(2), image, ['/spec/replicas'])).toEqual(['/spec/template/spec/containers/0/image']);
    expect(withoutIgnored(image, ['/spec/replicas']).spec).not.toHaveProperty('replicas');
  });

  it("reports a Secret's changed data as /data, never its keys or values", () => {
    const secret: KubeObject = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'a' },
      data: { password: 'c2VjcmV0', token: 'dA==' },
    };
    const live = { ...secret, data: { password: 'b3RoZXI=', token: 'eA==' } };
    expect(driftedPaths(secret, live)).toEqual(['/data']);
  });

  it('bounds the paths', () => {
    const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, String(i)]));
    const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: many };
    const live = { ...cm, data: {} };
    expect(driftedPaths(cm, live, [], 10)).toHaveLength(10);
  });
});
