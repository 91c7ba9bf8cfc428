import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object.ts';
import { DigestAnnotation } from './drift.ts';
import { fieldChanges, rollsPods, type FieldChange } from './field-changes.ts';

const cm = (data: Record<string, unknown>, metadata: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'a', namespace: 'n', ...metadata },
  data,
});

describe('fieldChanges', () => {
  it.each<[string, KubeObject, KubeObject, FieldChange[]]>([
    ['nothing', cm({ k: '1' }), cm({ k: '1' }), []],
    ['a changed value', cm({ k: '1' }), cm({ k: '2' }), [{ path: '.data.k', old: '"1"', new: '"2"' }]],
    ['an added key', cm({}), cm({ k: '2' }), [{ path: '.data.k', new: '"2"' }]],
    ['a removed key', cm({ k: '1' }), cm({}), [{ path: '.data.k', old: '"1"' }]],
    [
      'a key that is not an identifier, quoted',
      cm({}, { labels: {} }),
      cm({}, { labels: { 'app.kubernetes.io/name': 'web' } }),
      [{ path: '.metadata.labels["app.kubernetes.io/name"]', new: '"web"' }],
    ],
    [
      'server-written metadata, status and the digest annotation are not changes',
      cm({ k: '1' }, { resourceVersion: '1', generation: 1, managedFields: [{}], uid: 'u' }),
      {
        ...cm({ k: '1' }, { resourceVersion: '2', generation: 2, annotations: { [DigestAnnotation]: 'sha256:x' } }),
        status: { ready: true },
      },
      [],
    ],
    [
      'list items by index; a list of another length as a whole',
      { ...cm({}), spec: { a: [1, 2], b: [1] } },
      { ...cm({}), spec: { a: [1, 3], b: [1, 2] } },
      [
        { path: '.spec.a[1]', old: '2', new: '3' },
        { path: '.spec.b', old: '[1]', new: '[1,2]' },
      ],
    ],
  ])('%s', (_what, before, after, want) => {
    expect(fieldChanges(before, after)).toEqual(want);
  });

  it('cuts long values', () => {
    const [c] = fieldChanges(cm({ k: '' }), cm({ k: 'x'.repeat(500) }));
    expect(c!.new!.length).toBeLessThan(210);
    expect(c!.new!.endsWith('…')).toBe(true);
  });

  it("never shows a Secret's values, only which keys change", () => {
    const secret = (data: Record<string, string>): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'n', labels: { v: Object.values(data).join('') } },
      data,
    });
    const changes = fieldChanges(secret({ a: 'c2VjcmV0', b: 'eA==' }), secret({ a: 'bmV3', c: 'eQ==' }));
    expect(changes).toEqual([
      { path: '.data.a', old: '"*** (changed)"', new: '"*** (changed)"' },
      { path: '.data.b', old: '"***"' },
      { path: '.data.c', new: '"***"' },
      { path: '.metadata.labels.v', old: '"c2VjcmV0eA=="', new: '"bmV3eQ=="' },
    ]);
  });
});

describe('rollsPods', () => {
  const image: FieldChange = { path: '.spec.template.spec.containers[0].image', old: '"a"', new: '"b"' };
  const replicas: FieldChange = { path: '.spec.replicas', old: '1', new: '2' };
  const label: FieldChange = { path: '.spec.template.metadata.labels["x.io/y"]', new: '"z"' };
  it.each<[string, string, FieldChange[], boolean]>([
    ['apps/v1', 'Deployment', [image], true],
    ['apps/v1', 'StatefulSet', [label], true],
    ['apps/v1', 'DaemonSet', [image], true],
    ['apps/v1', 'ReplicaSet', [image], true],
    ['batch/v1', 'Job', [image], true],
    ['apps/v1', 'Deployment', [replicas], false],
    ['batch/v1', 'CronJob', [image], false],
    ['example.com/v1', 'Deployment', [image], false],
    ['apps/v1', 'Deployment', [{ path: '.spec.templateRef', new: '"x"' }], false],
  ])('%s %s', (apiVersion, kind, changes, want) => {
    expect(rollsPods({ apiVersion, kind }, changes)).toBe(want);
  });
});
