import { describe, expect, it } from 'vitest';
import { isRemote, kustomizationRefs } from './kustomize-refs.ts';

describe('kustomizationRefs: the paths a kustomization reads', () => {
  it.each([
    [
      'resources, bases, components',
      'resources: [../../base, deploy.yaml]\nbases: [../old]\ncomponents: [../../components/x]\n',
      ['../../base', 'deploy.yaml', '../old', '../../components/x'],
    ],
    [
      'patches by path, inline patches left out',
      'patches:\n- path: ../patches/p.yaml\n- patch: |\n    kind: X\n    metadata: {name: y}\npatchesStrategicMerge: [sm.yaml]\npatchesJson6902: [{path: j.yaml, target: {kind: X}}]\n',
      ['sm.yaml', '../patches/p.yaml', 'j.yaml'],
    ],
    [
      'generators: files as key=path, envs, env',
      'configMapGenerator:\n- name: c\n  files: [a.txt, key=../shared/b.txt]\n  envs: [../env/.env]\nsecretGenerator:\n- name: s\n  env: s.env\n',
      ['a.txt', '../shared/b.txt', '../env/.env', 's.env'],
    ],
    [
      'crds, configurations, transformers, replacements, openapi',
      'crds: [crd.yaml]\nconfigurations: [conf.yaml]\ntransformers: [t.yaml]\nreplacements: [{path: r.yaml}]\nopenapi: {path: schema.json}\n',
      ['crd.yaml', 'conf.yaml', 't.yaml', 'r.yaml', 'schema.json'],
    ],
    [
      'remote bases left out',
      'resources:\n- https://github.com/org/repo//base?ref=v1\n- github.com/org/repo/base\n- git@github.com:org/repo.git\n- local\n',
      ['local'],
    ],
    ['an empty file', '', []],
    ['duplicates once', 'resources: [a, a]\ncomponents: [a]\n', ['a']],
  ])('%s', (_, text, refs) => {
    expect(kustomizationRefs(text)).toEqual({ refs });
  });

  it.each([
    ['not YAML', 'resources: [a\n'],
    ['a list, not a map', '- a\n- b\n'],
    ['a scalar', 'just text\n'],
  ])('%s is unreadable (the caller takes the whole tree)', (_, text) => {
    expect(kustomizationRefs(text)).toEqual({ unreadable: true });
  });

  it.each([
    ['https://example.com/x', true],
    ['ssh://git@host/x', true],
    ['github.com/org/repo', true],
    ['git@github.com:org/repo', true],
    ['../base', false],
    ['github.com.yaml', false],
  ])('isRemote(%s) = %s', (ref, want) => {
    expect(isRemote(ref)).toBe(want);
  });
});
