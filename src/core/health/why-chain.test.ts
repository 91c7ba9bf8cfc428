import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object.ts';
import { fixtureDocs } from './testdata/fixtures.ts';
import { whyChain, whyText, type PackageFacts } from './why-chain.ts';

const facts = (all: Record<string, PackageFacts>) => (name: string) => all[name];
const lines = (root: string, all: Record<string, PackageFacts>) => whyText(whyChain(root, facts(all)));

const renderFailed = {
  status: 'False',
  reason: 'RenderFailed',
  message: 'bad.yaml:4:1 (document 1): bad indentation of a mapping entry',
};
const blocked = (dep: string) => ({
  status: 'False',
  reason: 'DependencyNotReady',
  message: `dependency ${dep} is not Ready`,
});

describe('whyChain', () => {
  it('goes from the PackageSync through the Deployment and ReplicaSet to the failing Pod', () => {
    const [workload, ...children] = fixtureDocs('explain-deployment-image-pull.yaml') as KubeObject[];
    const ready = { status: 'False', reason: 'HealthCheckFailed', message: 'timed out' };
    const out = lines('team-a/web', { 'team-a/web': { ready, workloads: [{ workload: workload!, children }] } });
    expect(out[0]).toBe('PackageSync team-a/web  Ready=False HealthCheckFailed: timed out');
    expect(out[1]).toMatch(/^└ Deployment\/[^/ ]+\/web {2}/);
    expect(out.some((l) => /^ {2}└ ReplicaSet\/[^ ]+$/.test(l))).toBe(true);
    expect(out.at(-1)).toMatch(/^ {4}└ Pod\/[^ ]+ {2}ImagePullBackOff.*nope:1/);
  });

  it("continues into a dependency's render failure, file:line and all", () => {
    const out = lines('a/b', {
      'a/b': { ready: blocked('a/a'), dependsOn: ['a/a'] },
      'a/a': { ready: renderFailed },
    });
    expect(out).toEqual([
      'PackageSync a/b  Ready=False DependencyNotReady: dependency a/a is not Ready',
      '└ dependsOn a/a  Ready=False RenderFailed: bad.yaml:4:1 (document 1): bad indentation of a mapping entry',
    ]);
  });

  it("continues into a dependency's workload, its ReplicaSet and the Pod that cannot pull", () => {
    const [workload, ...children] = fixtureDocs('explain-deployment-image-pull.yaml') as KubeObject[];
    const links = whyChain(
      'a/app',
      facts({
        'a/app': { ready: blocked('a/db'), dependsOn: ['a/db'] },
        'a/db': {
          ready: { status: 'False', reason: 'HealthCheckFailed', message: 'Deployment web not available' },
          workloads: [{ workload: workload!, children }],
        },
      }),
    );
    expect(links.map((l) => [l.depth, l.kind])).toEqual([
      [0, 'PackageSync'],
      [1, 'PackageSync'],
      [2, 'Deployment'],
      [3, 'ReplicaSet'],
      [4, 'Pod'],
    ]);
    expect(links[1]).toMatchObject({ relation: 'dependsOn', namespace: 'a', name: 'db', reason: 'HealthCheckFailed' });
    expect(links[4]).toMatchObject({ reason: 'ImagePullBackOff', message: expect.stringMatching(/nope:1/) });
    expect(whyText(links)[4]).toMatch(/^ {6}└ Pod\//);
  });

  it('ends a dependsOn cycle with a line naming it, and does not loop', () => {
    const cycle = { status: 'False', reason: 'DependencyCycle', message: 'spec.dependsOn forms a cycle' };
    const out = lines('a/x', {
      'a/x': { ready: cycle, dependsOn: ['a/y'] },
      'a/y': { ready: cycle, dependsOn: ['a/z'] },
      'a/z': { ready: cycle, dependsOn: ['a/x'] },
    });
    expect(out).toHaveLength(4);
    expect(out[3]).toBe(
      '    └ dependsOn a/x  spec.dependsOn forms a cycle: a/x → a/y → a/z → a/x; none of them can become Ready: ' +
        'remove one of these dependsOn entries',
    );
    const links = whyChain('a/x', facts({ 'a/x': { ready: cycle, dependsOn: ['a/x'] } }));
    expect(links.at(-1)).toMatchObject({ relation: 'cycle', reason: 'DependencyCycle', name: 'x' });
  });

  it('explains a dependency shared by two paths once', () => {
    const out = lines('a/top', {
      'a/top': { ready: blocked('a/l'), dependsOn: ['a/l', 'a/r'] },
      'a/l': { ready: blocked('a/base'), dependsOn: ['a/base'] },
      'a/r': { ready: blocked('a/base'), dependsOn: ['a/base'] },
      'a/base': { ready: renderFailed },
    });
    expect(out.filter((l) => l.includes('bad.yaml:4:1'))).toHaveLength(1);
    expect(out.at(-1)).toBe('  └ dependsOn a/base  (explained above)');
  });

  it('names a missing dependency and skips Ready ones', () => {
    const out = lines('a/b', {
      'a/b': { ready: blocked('a/gone'), dependsOn: ['a/ok', 'a/gone'] },
      'a/ok': { ready: { status: 'True', reason: 'ReconciliationSucceeded' } },
    });
    expect(out).toEqual([
      'PackageSync a/b  Ready=False DependencyNotReady: dependency a/gone is not Ready',
      '└ dependsOn a/gone  not found',
    ]);
  });

  it('lists each failed object with the API server words when several failed', () => {
    const failures = [
      { object: 'ConfigMap/a/one', reason: 'ApplyFailed', message: 'data.x: Invalid value: must be a string' },
      { object: 'Namespace/other', reason: 'Forbidden', message: 'namespaces "other" is forbidden: User cannot get' },
    ];
    const links = whyChain('a/b', facts({ 'a/b': { ready: { status: 'False', reason: 'ApplyFailed' }, failures } }));
    expect(whyText(links).slice(1)).toEqual([
      '└ ConfigMap/a/one  ApplyFailed: data.x: Invalid value: must be a string',
      '└ Namespace/other  Forbidden: namespaces "other" is forbidden: User cannot get',
    ]);
    expect(links[2]).toMatchObject({ kind: 'Namespace', name: 'other', relation: 'failure' });
  });

  it('a Ready PackageSync is one line with its message', () => {
    const ready = { status: 'True', reason: 'ReconciliationSucceeded', message: 'Applied revision main@sha1:abc' };
    expect(lines('a/b', { 'a/b': { ready, dependsOn: ['a/c'] } })).toEqual([
      'PackageSync a/b  Ready=True ReconciliationSucceeded: Applied revision main@sha1:abc',
    ]);
  });
});
