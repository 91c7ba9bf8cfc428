import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../core/object.ts';
import { maskSecrets, objectDiff, withoutNoise } from './object-diff.ts';

const live: KubeObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'settings',
    namespace: 'team-a',
    uid: '1b2c',
    resourceVersion: '812',
    generation: 1,
    creationTimestamp: '2026-01-01T00:00:00Z',
    managedFields: [{ manager: 'packagesync', operation: 'Apply' }],
    labels: { 'packagesync.io/name': 'web' },
    annotations: { 'packagesync.io/digest': 'aaa' },
  },
  data: { color: 'blue', size: 'L' },
};

describe('objectDiff', () => {
  it('shows only the changed field, without server-written metadata or the digest annotation', () => {
    const merged = {
      ...live,
      metadata: { ...live.metadata, resourceVersion: '813', annotations: { 'packagesync.io/digest': 'bbb' } },
      data: { color: 'green', size: 'L' },
    };
    expect(objectDiff(live, merged)).toBe(
      [
        '--- live/v1/ConfigMap/team-a/settings',
        '+++ merged/v1/ConfigMap/team-a/settings',
        '@@ -1,6 +1,6 @@',
        ' apiVersion: v1',
        ' data:',
        '-  color: blue',
        '+  color: green',
        '   size: L',
        ' kind: ConfigMap',
        ' metadata:',
        '',
      ].join('\n'),
    );
  });

  it('is empty when only noise differs', () => {
    const merged = {
      ...live,
      metadata: { ...live.metadata, resourceVersion: '900', managedFields: [] },
      status: { phase: 'x' },
    };
    expect(objectDiff(live, merged)).toBe('');
  });

  it('diffs a creation from /dev/null and a prune to /dev/null', () => {
    const created = objectDiff(undefined, live);
    expect(created.split('\n').slice(0, 2)).toEqual(['--- /dev/null', '+++ merged/v1/ConfigMap/team-a/settings']);
    expect(created).toContain('+  color: blue');
    expect(created).not.toContain('resourceVersion');
    const pruned = objectDiff(live, undefined);
    expect(pruned.split('\n').slice(0, 2)).toEqual(['--- live/v1/ConfigMap/team-a/settings', '+++ /dev/null']);
    expect(pruned).toContain('-kind: ConfigMap');
  });

  it('sorts keys, so the order fields come back in is not a change', () => {
    const reordered = {
      data: { size: 'L', color: 'blue' },
      metadata: live.metadata,
      kind: 'ConfigMap',
      apiVersion: 'v1',
    };
    expect(objectDiff(live, reordered as KubeObject)).toBe('');
  });

  it('names groups in the header path', () => {
    const d = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'a' }, spec: {} };
    expect(objectDiff(undefined, d)).toContain('+++ merged/apps/v1/Deployment/a/web');
  });
});

describe('values kubectl would read otherwise', () => {
  it('are quoted as go-yaml quotes them: a string "no" or "0755" is not shown as a boolean or a number', () => {
    const cm = (data: Record<string, string>): KubeObject => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: 'a' },
      data,
    });
    const text = objectDiff(cm({ a: 'x' }), cm({ a: 'no', mode: '0755', at: '1:30', yes: 'plain' }));
    expect(text).toContain('+  a: "no"\n');
    expect(text).toContain('+  mode: "0755"\n');
    expect(text).toContain('+  at: "1:30"\n');
    expect(text).toContain('+  "yes": plain\n');
  });
});

describe('Secrets in a diff', () => {
  const secret = (data: Record<string, string>): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'git-auth', namespace: 'a' },
    data,
  });

  it('never shows a value; a changed value shows as before/after', () => {
    const text = objectDiff(
      secret({ password: 'b2xk', username: 'Z2l0' }),
      secret({ password: 'bmV3', username: 'Z2l0', token: 'dG9r' }),
    );
    for (const value of ['b2xk', 'bmV3', 'Z2l0', 'dG9r']) expect(text).not.toContain(value);
    expect(text).toContain("-  password: '*** (before)'");
    expect(text).toContain("+  password: '*** (after)'");
    expect(text).toContain("+  token: '***'");
    expect(text).toContain("   username: '***'");
  });

  it('shows no diff for a Secret whose values did not change', () => {
    expect(objectDiff(secret({ a: 'eA==' }), secret({ a: 'eA==' }))).toBe('');
  });

  it('masks stringData too, and leaves other kinds alone', () => {
    const [, after] = maskSecrets(undefined, { ...secret({}), stringData: { key: 'plain' } });
    expect(after?.stringData).toEqual({ key: '***' });
    const cm = { ...live };
    expect(maskSecrets(cm, cm)).toEqual([cm, cm]);
  });
});

describe('withoutNoise', () => {
  it('keeps annotations other than the digest and drops an emptied annotations map', () => {
    const other = { ...live, metadata: { ...live.metadata, annotations: { a: '1', 'packagesync.io/digest': 'x' } } };
    expect(withoutNoise(other).metadata.annotations).toEqual({ a: '1' });
    expect(withoutNoise(live).metadata.annotations).toBeUndefined();
    expect(withoutNoise(live).metadata).toEqual({
      name: 'settings',
      namespace: 'team-a',
      labels: live.metadata.labels,
    });
  });
});
