import { describe, expect, it } from 'vitest';
import type { PackageSync } from '../api/packagesync.ts';
import { ConfigReferences, referencesOf } from './config-references.ts';

const ps = (spec: Record<string, unknown>, namespace = 'team-a') =>
  ({ metadata: { name: 'web', namespace }, spec }) as unknown as PackageSync;

describe('referencesOf', () => {
  it.each([
    [{ source: { url: 'x' } }, []],
    [{ source: { url: 'x', secretRef: { name: 'git-auth' } } }, ['Secret/team-a/git-auth']],
    [
      {
        source: { url: 'x', secretRef: { name: 'vars' } },
        postBuild: {
          substituteFrom: [
            { kind: 'ConfigMap', name: 'vars' },
            { kind: 'Secret', name: 'vars' },
            { kind: 'Secret', name: 'tls', optional: true },
          ],
        },
      },
      ['Secret/team-a/vars', 'ConfigMap/team-a/vars', 'Secret/team-a/tls'],
    ],
    // spec.kubeConfig.secretRef: an edited kubeconfig reconciles at once
    [
      { source: { url: 'x', secretRef: { name: 'git-auth' } }, kubeConfig: { secretRef: { name: 'prod-kc' } } },
      ['Secret/team-a/git-auth', 'Secret/team-a/prod-kc'],
    ],
    [
      { source: { url: 'x' }, kubeConfig: { secretRef: { name: 'prod-kc', key: 'kubeconfig' } } },
      ['Secret/team-a/prod-kc'],
    ],
    [{ kubeConfig: { secretRef: {} } }, []],
    // spec.source.dependencyRepositories: a fixed password for a dependency's repository reconciles at once
    [
      {
        source: {
          url: 'x',
          dependencyRepositories: [{ url: 'https://c', secretRef: { name: 'dep-auth' } }, { url: 'y' }, null],
        },
      },
      ['Secret/team-a/dep-auth'],
    ],
    // every other Secret or ConfigMap the spec names (issue 26): a fixed key or value reconciles at once too
    [
      {
        source: {
          oci: { url: 'oci://r/app', secretRef: { name: 'pull' }, certSecretRef: { name: 'ca' } },
          verify: { provider: 'git', secretRef: { name: 'keys' } },
        },
        helm: {
          valuesFrom: [
            { kind: 'ConfigMap', name: 'values' },
            { kind: 'Secret', name: 'values' },
          ],
        },
        decryption: { provider: 'sops', secretRef: { name: 'age' } },
      },
      [
        'Secret/team-a/pull',
        'Secret/team-a/ca',
        'Secret/team-a/keys',
        'ConfigMap/team-a/values',
        'Secret/team-a/values',
        'Secret/team-a/age',
      ],
    ],
    // issue 33: a fixed chart repository password reconciles at once (e2e/chart-source: wrong password)
    [
      {
        source: {
          chart: { repository: 'https://c', name: 'app', secretRef: { name: 'login' }, certSecretRef: { name: 'ca' } },
        },
      },
      ['Secret/team-a/login', 'Secret/team-a/ca'],
    ],
    // the git credentials of values beside a chart ($values) too
    [
      {
        source: {
          chart: { repository: 'https://c', name: 'app', values: { url: 'https://g', secretRef: { name: 'git' } } },
        },
      },
      ['Secret/team-a/git'],
    ],
    [{ helm: { valuesFrom: [{ kind: 'Job', name: 'x' }] }, decryption: { secretRef: { name: '' } } }, []],
    // malformed entries are the reconcile's to report, not the watch's
    [{ postBuild: { substituteFrom: [{ kind: 'Deployment', name: 'x' }, { kind: 'Secret' }, null] } }, []],
    [{ postBuild: { substituteFrom: 'nope' }, source: { secretRef: { name: 7 } } }, []],
  ])('%j reads %j', (spec, keys) => {
    expect(referencesOf(ps(spec))).toEqual(keys);
  });

  it('always in the PackageSync namespace', () => {
    expect(referencesOf(ps({ postBuild: { substituteFrom: [{ kind: 'ConfigMap', name: 'v' }] } }, 'other'))).toEqual([
      'ConfigMap/other/v',
    ]);
  });
});

describe('ConfigReferences', () => {
  it('finds the readers of a ConfigMap or Secret, and forgets what a PackageSync no longer reads', () => {
    const refs = new ConfigReferences();
    refs.set('team-a/web', ['ConfigMap/team-a/vars', 'Secret/team-a/git']);
    refs.set('team-a/api', ['ConfigMap/team-a/vars']);
    expect(refs.readersOf('ConfigMap/team-a/vars').sort()).toEqual(['team-a/api', 'team-a/web']);
    refs.set('team-a/web', ['Secret/team-a/git']);
    expect(refs.readersOf('ConfigMap/team-a/vars')).toEqual(['team-a/api']);
    refs.remove('team-a/api');
    expect(refs.readersOf('ConfigMap/team-a/vars')).toEqual([]);
    expect(refs.size).toBe(1);
    refs.set('team-a/web', []);
    expect(refs.size).toBe(0);
  });
});
