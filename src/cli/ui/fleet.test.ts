import { describe, expect, it } from 'vitest';
import type { PackageSync } from '../../api/packagesync.ts';
import { FleetQuerySchema } from './api-types.ts';
import { fleetPage, fleetState } from './fleet.ts';

const cond = (type: string, status: 'True' | 'False' | 'Unknown', reason = 'R', message = '') => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: '2026-01-01T00:00:00Z',
});

function ps(
  namespace: string,
  name: string,
  opts: {
    suspend?: boolean;
    conditions?: ReturnType<typeof cond>[];
    generation?: number;
    observed?: number;
    labels?: Record<string, string>;
  } = {},
): PackageSync {
  return {
    apiVersion: 'packagesync.io/v1alpha1',
    kind: 'PackageSync',
    metadata: { namespace, name, generation: opts.generation ?? 1, labels: opts.labels },
    spec: { source: { url: `https://git.example.com/${name}.git`, path: '.' }, suspend: opts.suspend ?? false },
    status: { observedGeneration: opts.observed ?? 1, conditions: opts.conditions ?? [] },
  } as unknown as PackageSync;
}

const ready = ps('a', 'ready', {
  conditions: [cond('Ready', 'True', 'ReconciliationSucceeded', 'Applied main@sha1:1')],
});
const stalled = ps('a', 'stalled', {
  labels: { team: 'payments', env: 'prod' },
  conditions: [cond('Ready', 'False', 'BuildFailed', 'kustomization.yaml: bad'), cond('Stalled', 'True')],
});
const failing = ps('b', 'failing', {
  labels: { team: 'payments', env: 'dev' },
  conditions: [cond('Ready', 'False', 'GitOperationFailed', 'no route')],
});
const working = ps('b', 'working', { conditions: [cond('Ready', 'Unknown'), cond('Reconciling', 'True')] });
const suspended = ps('c', 'off', { suspend: true, conditions: [cond('Ready', 'True')] });
const unseen = ps('c', 'new', {});
const fleet = [ready, stalled, failing, working, suspended, unseen];
const query = (q: Record<string, string> = {}) => FleetQuerySchema.parse(q);

describe('fleetState', () => {
  it('gives each PackageSync one state, suspension first', () => {
    expect(fleet.map(fleetState)).toEqual(['Ready', 'Stalled', 'Failed', 'Reconciling', 'Suspended', 'Reconciling']);
  });

  it('does not call Ready=True of an older generation Ready', () => {
    const behind = ps('a', 'x', { generation: 2, observed: 1, conditions: [cond('Ready', 'True')] });
    expect(fleetState(behind)).toBe('Reconciling');
  });
});

describe('fleetPage', () => {
  it('counts every state over the whole fleet, whatever the state filter', () => {
    const page = fleetPage(fleet, query({ state: 'Failed' }));
    expect(page.counts).toEqual({ Ready: 1, Reconciling: 2, Stalled: 1, Failed: 1, Suspended: 1 });
    expect(page.items.map((r) => r.name)).toEqual(['failing']);
    expect(page.namespaces).toEqual(['a', 'b', 'c']);
  });

  it('counts within the namespace chosen', () => {
    expect(fleetPage(fleet, query({ namespace: 'c', state: 'Ready' })).counts).toEqual({
      Ready: 0,
      Reconciling: 1,
      Stalled: 0,
      Failed: 0,
      Suspended: 1,
    });
  });

  it('filters by namespace and by text in name, reason, message or URL, case-insensitively', () => {
    expect(fleetPage(fleet, query({ namespace: 'b' })).items.map((r) => r.name)).toEqual(['failing', 'working']);
    expect(fleetPage(fleet, query({ q: 'KUSTOMIZATION' })).items.map((r) => r.name)).toEqual(['stalled']);
    expect(fleetPage(fleet, query({ q: 'git.example.com/off' })).items.map((r) => r.name)).toEqual(['off']);
  });

  it('filters by a label selector, as kubectl -l reads one', () => {
    const names = (label: string) => fleetPage(fleet, query({ label })).items.map((r) => r.name);
    expect(names('team=payments')).toEqual(['stalled', 'failing']);
    expect(names('team=payments,env!=prod')).toEqual(['failing']);
    expect(names('env in (prod, staging)')).toEqual(['stalled']);
    expect(names('!team')).toEqual(['ready', 'working', 'new', 'off']);
    // the counts stay those of the namespace, as for the other filters
    expect(fleetPage(fleet, query({ label: 'team=none' })).counts.Ready).toBe(1);
  });

  it('sorts, reverses and pages on the server', () => {
    const byState = fleetPage(fleet, query({ sort: 'state' })).items.map((r) => r.name);
    expect(byState).toEqual(['ready', 'working', 'new', 'stalled', 'failing', 'off']);
    const p2 = fleetPage(fleet, query({ sort: 'name', desc: '1', pageSize: '2', page: '2' }));
    expect(p2.items.map((r) => r.name)).toEqual(['ready', 'off']);
    expect(p2.total).toBe(6);
  });

  it('refuses a query outside its bounds', () => {
    expect(FleetQuerySchema.safeParse({ pageSize: '100000' }).success).toBe(false);
    expect(FleetQuerySchema.safeParse({ state: 'Bogus' }).success).toBe(false);
  });
});
