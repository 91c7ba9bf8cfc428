import { describe, expect, it } from 'vitest';
import type { PackageSync } from '../api/packagesync.ts';
import { age, formatDetail, formatTable, shortRevision, summarize } from './status-summary.ts';

const now = new Date('2026-03-01T12:00:00Z');
const sha = '3f2a9c01b7de44556677889900aabbccddeeff00';

function ps(overrides: Partial<PackageSync['status']> = {}, spec: Record<string, unknown> = {}): PackageSync {
  return {
    apiVersion: 'packagesync.io/v1alpha1',
    kind: 'PackageSync',
    metadata: {
      name: 'web',
      namespace: 'team-a',
      generation: 4,
      creationTimestamp: '2026-03-01T09:00:00Z',
    } as PackageSync['metadata'],
    spec: {
      source: { url: 'https://git.example.com/p.git', ref: { branch: 'main' }, path: 'apps/web' },
      ...spec,
    } as never,
    status: {
      observedGeneration: 4,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'ReconciliationSucceeded',
          message: `Applied revision main@sha1:${sha}: 3 created`,
          lastTransitionTime: '2026-03-01T11:59:00Z',
          observedGeneration: 4,
        },
      ],
      lastAppliedRevision: `main@sha1:${sha}`,
      lastAttemptedRevision: `main@sha1:${sha}`,
      inventory: { entries: [{ id: 'team-a_web_apps_Deployment', v: 'v1' }] },
      objects: { total: 3, current: 2, inProgress: 1, failed: 0, terminating: 0, unknown: 0 },
      history: [
        {
          revision: `main@sha1:${sha}`,
          result: 'Succeeded',
          startedAt: '2026-03-01T11:58:30Z',
          durationSeconds: 1.25,
          created: 3,
          configured: 0,
          pruned: 0,
          digest: 'sha256:x',
        },
      ],
      ...overrides,
    },
  };
}

describe('summarize', () => {
  it('reads Ready, revisions, counts and history', () => {
    const s = summarize(ps());
    expect(s).toMatchObject({
      namespace: 'team-a',
      name: 'web',
      ready: 'True',
      reason: 'ReconciliationSucceeded',
      upToDate: true,
      suspended: false,
      inventoryCount: 1,
      source: { url: 'https://git.example.com/p.git', ref: { branch: 'main' }, path: 'apps/web' },
    });
    expect(s.history).toHaveLength(1);
  });

  it('counts an inventory kept in shards from status.inventory.count (a listed PackageSync is not expanded)', () => {
    const spilled = ps({
      inventory: { entries: [], count: 50_000, shards: [{ name: 'web.inventory.0', digest: 'd', count: 50_000 }] },
    });
    expect(summarize(spilled).inventoryCount).toBe(50_000);
  });

  it('is not up to date when Ready is for an older generation', () => {
    expect(summarize(ps({ observedGeneration: 3 })).upToDate).toBe(false);
  });

  it('says NotObserved before the controller wrote any status', () => {
    const fresh = { ...ps(), status: undefined };
    expect(summarize(fresh)).toMatchObject({ ready: 'Unknown', reason: 'NotObserved', upToDate: false });
  });
});

describe('formatting', () => {
  it('shortens SHAs in revisions, and formats ages as kubectl does', () => {
    expect(shortRevision(`v1.2.0@sha1:${sha}`)).toBe('v1.2.0@sha1:3f2a9c01b7de');
    expect(shortRevision(undefined)).toBe('-');
    expect(age('2026-03-01T11:59:15Z', now)).toBe('45s');
    expect(age('2026-03-01T11:30:00Z', now)).toBe('30m');
    expect(age('2026-02-27T12:00:00Z', now)).toBe('2d');
  });

  it('lays out a table, with a NAMESPACE column for all namespaces', () => {
    const rows = [summarize(ps()), summarize(ps({}, { suspend: true }))];
    const table = formatTable(rows, now, true).split('\n');
    expect(table[0]).toMatch(/^NAMESPACE\s+NAME\s+READY\s+REASON\s+REVISION\s+OBJECTS\s+AGE\s+MESSAGE$/);
    expect(table[1]).toMatch(
      /^team-a\s+web\s+True\s+ReconciliationSucceeded\s+main@sha1:3f2a9c01b7de\s+2\/3\s+3h\s+Applied/,
    );
    expect(table[2]).toContain('True (suspended)');
    expect(formatTable(rows, now, false).split('\n')[0]).toMatch(/^NAME\s/);
  });

  it('writes one block for one PackageSync', () => {
    const text = formatDetail(summarize(ps({ lastAttemptedRevision: 'main@sha1:ffff' })), now);
    expect(text).toContain('PackageSync team-a/web');
    expect(text).toContain('Ready:        True (ReconciliationSucceeded)');
    expect(text).toContain('Source:       https://git.example.com/p.git (branch main, path apps/web)');
    expect(text).toContain('Attempted:    main@sha1:ffff');
    expect(text).toContain('Objects:      3 total: 2 current, 1 in progress, 0 failed, 0 terminating, 0 unknown');
    expect(text).toMatch(
      /History:\n\s+90s ago {2}main@sha1:3f2a9c01b7de {2}Succeeded {2}1.25s {2}3 created, 0 configured, 0 pruned/,
    );
  });

  it('names an OCI or chart source (it printed an empty URL and "remote HEAD")', () => {
    const oci = { source: { oci: { url: 'oci://reg.example/app', ref: { tag: 'v1' } }, path: '.' } };
    expect(formatDetail(summarize(ps({}, oci)), now)).toContain('Source:       oci://reg.example/app (tag v1, path .)');
    const chart = {
      source: { chart: { repository: 'https://charts.example', name: 'web', version: '^1' }, path: '.' },
    };
    expect(formatDetail(summarize(ps({}, chart)), now)).toContain(
      'Source:       https://charts.example chart web (version ^1, path .)',
    );
  });

  it('lists the failures of the last failed reconcile', () => {
    const failures = [
      { object: 'Deployment/team-a/db', reason: 'ApplyFailed', message: 'Deployment/team-a/db: invalid' },
      { object: 'ConfigMap/team-a/c', reason: 'DependencyFailed', message: 'ConfigMap/team-a/c (c.yaml) skipped' },
    ];
    const text = formatDetail(summarize(ps({ failures })), now);
    expect(text).toContain(
      'Failures:\n    ApplyFailed: Deployment/team-a/db: invalid\n    DependencyFailed: ConfigMap/team-a/c (c.yaml) skipped\n',
    );
    expect(formatDetail(summarize(ps()), now)).not.toContain('Failures:');
  });
});
