import { describe, expect, it } from 'vitest';
import { isTestHook, objectsOfHelmOutput, objectsOfKustomizeOutput, repoJoin, withCommonMetadata } from './built.ts';

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
