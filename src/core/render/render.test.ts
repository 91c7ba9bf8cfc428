import { describe, expect, it } from 'vitest';
import { cm, ids, ownerMarks, rendered } from '../../../test/support/render.ts';
import type { RenderOptions } from './types.ts';
import type { KubeObject } from '../object.ts';

describe('renderPackage: objects', () => {
  it('reads every document of every file, files in byte order', () => {
    const pkg = rendered({
      'b.yaml': cm('b1') + '---\n' + cm('b2'),
      'a/z.yaml': cm('az'),
      'B.yaml': cm('upper'),
      'a.json': JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'json' } }),
    });
    expect(pkg.objects.map((o) => o.metadata.name)).toEqual(['upper', 'json', 'az', 'b1', 'b2']);
  });

  it('gives the same objects and digest whatever the input order', () => {
    const files = { 'a.yaml': cm('a'), 'b.yaml': cm('b'), 'c/d.yaml': cm('d') };
    const forward = rendered(Object.entries(files).map(([path, content]) => ({ path, content })));
    const backward = rendered(
      Object.entries(files)
        .reverse()
        .map(([path, content]) => ({ path, content })),
    );
    expect(backward.objects).toEqual(forward.objects);
    expect(backward.digest).toBe(forward.digest);
  });

  it('stamps owner labels, keeping the manifest labels and overriding a forged mark', () => {
    const pkg = rendered({
      'cm.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    app: web\n    packagesync.io/name: other\n',
    });
    expect(pkg.objects[0]?.metadata.labels).toEqual({ app: 'web', ...ownerMarks });
  });

  it('maps each object to its file', () => {
    const pkg = rendered({ 'x/a.yaml': cm('a'), 'x/b.yaml': cm('b') });
    expect([...pkg.sources]).toEqual([
      ['/ConfigMap/team-a/a', 'x/a.yaml:1'],
      ['/ConfigMap/team-a/b', 'x/b.yaml:1'],
    ]);
  });

  it('maps each object to the line it starts on: documents, leading comments, List items', () => {
    const pkg = rendered({
      'a.yaml': `# the first\n${cm('a')}---\n\n${cm('b')}`,
      'l.yaml': `apiVersion: v1\nkind: List\nitems:\n- ${JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } })}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: d}\n`,
    });
    expect(Object.fromEntries(pkg.sources)).toEqual({
      '/ConfigMap/team-a/a': 'a.yaml:2',
      '/ConfigMap/team-a/b': 'a.yaml:10',
      '/ConfigMap/team-a/c': 'l.yaml:4',
      '/ConfigMap/team-a/d': 'l.yaml:5',
    });
  });

  it('expands kind: List and *List items, nested ones too', () => {
    const list = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one' } },
        {
          apiVersion: 'v1',
          kind: 'ConfigMapList',
          items: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'two' } }],
        },
      ],
    };
    const pkg = rendered({
      'list.json': JSON.stringify(list),
      'svc.yaml': 'apiVersion: v1\nkind: ServiceList\nmetadata: {}\nitems: []\n',
    });
    expect(ids(pkg)).toEqual(['ConfigMap/team-a/one', 'ConfigMap/team-a/two']);
  });

  it('skips the Kptfile and local-config objects, not objects marked local-config "false"', () => {
    const pkg = rendered({
      Kptfile: 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\n',
      'Kptfile.yaml': 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\n',
      'fn.yaml':
        'apiVersion: fn.kpt.dev/v1alpha1\nkind: SetLabels\nmetadata:\n  annotations:\n    config.kubernetes.io/local-config: "true"\n',
      'keep.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\n  annotations:\n    config.kubernetes.io/local-config: "false"\n',
    });
    expect(ids(pkg)).toEqual(['ConfigMap/team-a/keep']);
  });

  it('does not change the objects it was given and adds no keys beyond namespace and labels', () => {
    const pkg = rendered({
      'd.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n',
    });
    expect(pkg.objects[0]).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'team-a', labels: ownerMarks },
      spec: { replicas: 2 },
    });
  });

  it('keeps __proto__ keys as data and pollutes nothing', () => {
    const pkg = rendered({
      'cm.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  __proto__: {namespace: evil}\ndata:\n  __proto__: x\n',
    });
    const obj = pkg.objects[0] as KubeObject;
    expect(obj.metadata.namespace).toBe('team-a');
    expect(Object.hasOwn(obj.metadata, '__proto__')).toBe(true);
    expect(Object.hasOwn(obj['data'] as object, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(obj.metadata)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>)['namespace']).toBeUndefined();
  });
});

describe('renderPackage: digest', () => {
  const digest = (files: Record<string, string>, options: Partial<RenderOptions> = {}) =>
    rendered(files, options).digest;
  const base = digest({ 'a.yaml': cm('a') + '---\n' + cm('b') });

  it.each([
    [
      'keys in another order',
      { 'a.yaml': 'kind: ConfigMap\ndata: {k: v}\nmetadata: {name: a}\napiVersion: v1\n---\n' + cm('b') },
    ],
    ['objects in other files', { 'x.yaml': cm('b'), 'y.yaml': cm('a') }],
    [
      'JSON instead of YAML',
      {
        'a.json': JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } }),
        'b.yaml': cm('b'),
      },
    ],
    [
      'comments and quoting',
      { 'a.yaml': '# config\n' + cm('a').replace('k: v', '\'k\': "v" # value') + '---\n' + cm('b') },
    ],
  ])('is unchanged by %s', (_name, files) => {
    expect(digest(files)).toBe(base);
  });

  it.each<[string, Record<string, string>, Partial<RenderOptions>]>([
    ['a changed value', { 'a.yaml': cm('a').replace('k: v', 'k: w') + '---\n' + cm('b') }, {}],
    ['a removed object', { 'a.yaml': cm('a') }, {}],
    ['another owner', { 'a.yaml': cm('a') + '---\n' + cm('b') }, { owner: { name: 'other', namespace: 'team-a' } }],
    ['another namespace', { 'a.yaml': cm('a') + '---\n' + cm('b') }, { targetNamespace: 'x' }],
  ])('changes with %s', (_name, files, options) => {
    expect(digest(files, options)).not.toBe(base);
  });
});
