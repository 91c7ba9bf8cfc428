import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object.ts';
import { causeChain } from './cause-chain.ts';
import { fixtureDocs } from './testdata/fixtures.ts';

describe('causeChain', () => {
  it('goes from the PackageSync through the Deployment and ReplicaSet to the failing Pod', () => {
    const [workload, ...children] = fixtureDocs('explain-deployment-image-pull.yaml') as KubeObject[];
    const lines = causeChain({
      packageSync: { name: 'team-a/web', ready: { status: 'False', reason: 'HealthCheckFailed' } },
      dependencies: [],
      workloads: [{ workload: workload!, children }],
    });
    expect(lines[0]).toBe('PackageSync team-a/web  Ready=False HealthCheckFailed');
    expect(lines[1]).toMatch(/^└ Deployment\/[^/ ]+\/web {2}/);
    expect(lines.some((l) => /^ {2}└ ReplicaSet\/[^ ]+$/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/^ {4}└ Pod\/[^ ]+ {2}ImagePullBackOff.*nope:1/);
  });

  it.each([
    [
      'a dependency not Ready',
      { name: 'team-a/infra', ready: { status: 'False', reason: 'ReconcileFailed' } },
      '└ dependsOn team-a/infra  Ready=False ReconcileFailed',
    ],
    ['a missing dependency', { name: 'team-a/gone' }, '└ dependsOn team-a/gone  not found'],
  ])('names %s', (_name, dep, line) => {
    const lines = causeChain({ packageSync: { name: 'team-a/web' }, dependencies: [dep], workloads: [] });
    expect(lines).toEqual(['PackageSync team-a/web  Ready=Unknown', line]);
  });

  it('skips Ready dependencies', () => {
    const lines = causeChain({
      packageSync: { name: 'a/b', ready: { status: 'True' } },
      dependencies: [{ name: 'a/c', ready: { status: 'True' } }],
      workloads: [],
    });
    expect(lines).toEqual(['PackageSync a/b  Ready=True']);
  });
});
