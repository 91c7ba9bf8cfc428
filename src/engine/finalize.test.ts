// A teardown leaves through the run context like every reconcile (docs/adr/0037): a live read that fails there
// is a Warning event and a log line, the finalizer stays, and it is tried again soon (it returned
// `{failed: true}` with neither).
import { describe, expect, it } from 'vitest';
import { FINALIZER, type PackageSync } from '../api/packagesync.ts';
import { TEARDOWN_RETRY_MS } from '../core/exit.ts';
import { finalize } from './finalize.ts';
import type { Ports } from './ports.ts';
import { Run } from './run.ts';

const deleting = (): PackageSync =>
  ({
    apiVersion: 'packagesync.io/v1alpha1',
    kind: 'PackageSync',
    metadata: {
      name: 'web',
      namespace: 'apps',
      uid: 'u1',
      generation: 1,
      finalizers: [FINALIZER],
      deletionTimestamp: '2026-11-27T00:00:00Z',
    },
    spec: { source: { url: 'https://git.example/r.git' } },
    status: { inventory: { entries: [{ id: 'apps_web__ConfigMap', v: 'v1' }] } },
  }) as unknown as PackageSync;

function portsWhere(listOwned: () => Promise<unknown[]>) {
  const events: string[] = [];
  const logs: string[] = [];
  const finalizers: boolean[] = [];
  const mapping = { group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true };
  const objects = {
    owner: { name: 'web', namespace: 'apps' },
    discovery: { mapping: async () => mapping },
    liveCache: undefined,
    listOwned,
    delete: async () => ({ gone: true, finalizers: [] }),
    get: async () => undefined,
    forPackage: () => objects,
  };
  const ports = {
    objects,
    packageSyncs: {
      event: async (_ps: PackageSync, type: string, reason: string, message: string) => {
        events.push(`${type} ${reason}: ${message}`);
      },
      setFinalizer: async (ps: PackageSync, _f: string, present: boolean) => {
        finalizers.push(present);
        return ps;
      },
    },
    log: { info: (_o: unknown, message: string) => logs.push(message), debug: () => undefined },
  } as unknown as Ports;
  return { ports, events, logs, finalizers };
}

describe('finalize: the teardown goes through the one exit', () => {
  it('a live read that fails: a Warning event and a log line, the finalizer stays, back soon', async () => {
    const forbidden = Object.assign(new Error('configmaps is forbidden'), { status: 403 });
    const { ports, events, logs, finalizers } = portsWhere(async () => Promise.reject(forbidden));
    const res = await finalize(new Run(deleting(), ports, new AbortController().signal), {});
    expect(res).toEqual({ failed: true, requeueAfterMs: TEARDOWN_RETRY_MS });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatch(/^Warning Forbidden: reading live objects: forbidden: .*the deletion waits/);
    expect(logs).toEqual([expect.stringMatching(/^reading live objects: forbidden/)]);
    expect(finalizers).toEqual([]);
  });

  it('its objects already gone: the finalizer goes, and nothing runs it again', async () => {
    const { ports, events, finalizers } = portsWhere(async () => []);
    const res = await finalize(new Run(deleting(), ports, new AbortController().signal), {});
    expect(res).toEqual({ failed: false });
    expect(events).toEqual(['Normal Pruned: Deleted 1 object(s)']);
    expect(finalizers).toEqual([false]);
  });

  it('an aborted run (shutdown) says nothing: no event for a teardown cut short', async () => {
    const { ports, events } = portsWhere(async () => Promise.reject(new Error('aborted')));
    const aborted = new AbortController();
    aborted.abort();
    const res = await finalize(new Run(deleting(), ports, aborted.signal), {});
    expect(res.failed).toBe(true);
    expect(events).toEqual([]);
  });
});
