import { describe, expect, it } from 'vitest';
import { isTestHook, objectsOfHelmOutput, objectsOfKustomizeOutput, repoJoin, withCommonMetadata } from './built.ts';
import { duplicateKeysMessage, renderObjects, renderPackage } from './render.ts';

const origin = (text: string) => `    config.kubernetes.io/origin: |\n${text.replace(/^/gm, '      ')}\n`;

describe('objectsOfKustomizeOutput', () => {
  it('locates each object by its origin (repo-relative) and removes the annotation', () => {
    const out = [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  annotations:',
      origin('path: ../../base/cm.yaml').trimEnd(),
      '  name: a',
      '---',
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  annotations:',
      '    keep: "yes"',
      origin(
        'configuredIn: kustomization.yaml\nconfiguredBy:\n  apiVersion: builtin\n  kind: ConfigMapGenerator',
      ).trimEnd(),
      '  name: gen-abc',
      '---',
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: {name: no-origin}',
      '',
    ].join('\n');
    const r = objectsOfKustomizeOutput(out, 'overlays/prod');
    if (!r.ok) throw new Error(r.failure.message);
    expect(r.value.map((o) => [o.object.metadata.name, o.where.path])).toEqual([
      ['a', 'base/cm.yaml'],
      ['gen-abc', 'overlays/prod/kustomization.yaml'],
      ['no-origin', 'kustomize build overlays/prod'],
    ]);
    expect(r.value[0]!.object.metadata).toEqual({ name: 'a' });
    expect(r.value[1]!.object.metadata.annotations).toEqual({ keep: 'yes' });
  });

  it('a remote origin (repo set) names the build, not a local file', () => {
    const out = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n${origin('path: x.yaml\nrepo: https://example.com/r')}  name: r\n`;
    const r = objectsOfKustomizeOutput(out, '.');
    expect(r.ok && r.value[0]!.where.path).toBe('kustomize build .');
  });
});

describe('objectsOfHelmOutput', () => {
  const out = [
    '---',
    '# Source: app/templates/cm.yaml',
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata: {name: cm}',
    '---',
    '# Source: app/charts/redis/templates/svc.yaml',
    'apiVersion: v1',
    'kind: Service',
    'metadata: {name: redis}',
    '---',
    '# Source: app/templates/tests/t.yaml',
    'apiVersion: v1',
    'kind: Pod',
    'metadata: {name: t, annotations: {helm.sh/hook: "test-success"}}',
    '---',
    '# Source: app/templates/job.yaml',
    'apiVersion: batch/v1',
    'kind: Job',
    'metadata: {name: migrate, annotations: {helm.sh/hook: "pre-install,pre-upgrade"}}',
    '',
  ].join('\n');

  it('locates objects in the chart in the repository, drops test hooks, keeps other hooks', () => {
    const r = objectsOfHelmOutput(out, 'charts/app');
    if (!r.ok) throw new Error(r.failure.message);
    expect(r.value.map((o) => [o.object.kind, o.where.path])).toEqual([
      ['ConfigMap', 'charts/app/templates/cm.yaml'],
      ['Service', 'charts/app/charts/redis/templates/svc.yaml'],
      ['Job', 'charts/app/templates/job.yaml'],
    ]);
  });

  it('a template that renders broken YAML fails naming the template', () => {
    const r = objectsOfHelmOutput('---\n# Source: app/templates/bad.yaml\nkind: [\n', 'app');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.failure.message).toContain('app/templates/bad.yaml');
  });
});

describe('isTestHook', () => {
  it.each([
    ['test', true],
    ['test-success', true],
    ['pre-install, test', true],
    ['pre-install', false],
    [undefined, false],
  ])('%s → %s', (hook, expected) => {
    const obj = {
      kind: 'Pod',
      metadata: { name: 'x', annotations: hook === undefined ? {} : { 'helm.sh/hook': hook } },
    };
    expect(isTestHook(obj)).toBe(expected);
  });
});

describe('repoJoin', () => {
  it.each([
    ['overlays/prod', '../../base/a.yaml', 'base/a.yaml'],
    ['.', 'a.yaml', 'a.yaml'],
    ['app', './x/../y.yaml', 'app/y.yaml'],
    ['app', '..', '.'],
  ])('%s + %s → %s', (pkg, rel, expected) => expect(repoJoin(pkg, rel)).toBe(expected));
});

describe('withCommonMetadata', () => {
  it("sets labels and annotations on every object, replacing existing keys (Flux's commonMetadata)", () => {
    const objects = [
      {
        object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', labels: { team: 'x', keep: '1' } } },
        where: { path: 'a.yaml', document: 1, items: [] },
      },
    ];
    const out = withCommonMetadata(objects, { labels: { team: 'web' }, annotations: { owner: 'p' } });
    expect(out[0]!.object.metadata).toEqual({
      name: 'a',
      labels: { team: 'web', keep: '1' },
      annotations: { owner: 'p' },
    });
    expect(objects[0]!.object.metadata.labels).toEqual({ team: 'x', keep: '1' });
    expect(withCommonMetadata(objects, undefined)).toBe(objects);
  });
});

describe('keys a render tool wrote twice (docs/adr/0034)', () => {
  const chart = [
    '---',
    '# Source: prom/templates/operator.yaml',
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata: {name: op}',
    'spec:',
    '  template:',
    '    spec:',
    '      containers:',
    '        - name: op',
    '          args:',
    '            - --log-format=logfmt',
    '          env:',
    '            logFormat: logfmt',
    '            logLevel: info',
    '            logFormat: json',
    '            logLevel: debug',
    '',
  ].join('\n');

  it('helm output: the last value wins, as helm install and Flux read it, and each repeat is noted', () => {
    const objects = objectsOfHelmOutput(chart, 'charts/prom');
    if (!objects.ok) throw new Error(objects.failure.message);
    const [op] = objects.value;
    expect(
      (op?.object.spec as { template: { spec: { containers: { env: unknown }[] } } }).template.spec.containers[0]?.env,
    ).toEqual({ logFormat: 'json', logLevel: 'debug' });
    expect(op?.duplicateKeys).toEqual([
      'spec.template.spec.containers[0].env.logFormat',
      'spec.template.spec.containers[0].env.logLevel',
    ]);
  });

  it('renderObjects names the object as applied, the field and the file; the message says what is applied', () => {
    const objects = objectsOfHelmOutput(chart, 'charts/prom');
    if (!objects.ok) throw new Error(objects.failure.message);
    const rendered = renderObjects(objects.value, { owner: { name: 'p', namespace: 'mon' } }, 'the chart');
    if (!rendered.ok) throw new Error(rendered.failure.message);
    expect(rendered.value.duplicateKeys).toEqual([
      {
        ref: { group: 'apps', kind: 'Deployment', namespace: 'mon', name: 'op' },
        field: 'spec.template.spec.containers[0].env.logFormat',
        source: 'charts/prom/templates/operator.yaml',
      },
      expect.objectContaining({ field: 'spec.template.spec.containers[0].env.logLevel' }),
    ]);
    expect(duplicateKeysMessage(rendered.value.duplicateKeys!)).toContain(
      'Deployment/mon/op field spec.template.spec.containers[0].env.logFormat (charts/prom/templates/operator.yaml)',
    );
    expect(duplicateKeysMessage(rendered.value.duplicateKeys!)).toContain('The last value is applied');
  });

  it('kustomize output: a List item gets the repeats inside it, by index', () => {
    const list = [
      'apiVersion: v1',
      'kind: List',
      'items:',
      '  - {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: {k: "1"}}',
      '  - {apiVersion: v1, kind: ConfigMap, metadata: {name: b}, data: {k: "1", k: "2"}}',
      '',
    ].join('\n');
    const objects = objectsOfKustomizeOutput(list, 'app');
    if (!objects.ok) throw new Error(objects.failure.message);
    expect(objects.value.map((o) => o.duplicateKeys)).toEqual([undefined, ['data.k']]);
    expect(objects.value[1]?.object.data).toEqual({ k: '2' });
  });

  it('a file a person wrote still fails, with its line', () => {
    const f = renderPackage(
      [
        {
          path: 'app/cm.yaml',
          content: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  k: "1"\n  k: "2"\n',
        },
      ],
      {
        owner: { name: 'p', namespace: 'mon' },
      },
    );
    expect(f.ok ? '' : f.failure.message).toBe(
      'app/cm.yaml:6:3 (document 1): duplicate mapping key "k" (in data); remove one of them',
    );
  });
});
