// A teardown leaves through the run context like every reconcile (docs/adr/0037): a live read that fails there
// is a Warning event and a log line, the finalizer stays, and it is tried again soon (it returned
// `{failed: true}` with neither).
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { memoryWorld } from '../../test/engine/memory-ports.ts';
import { FINALIZER, type PackageSync } from '../api/packagesync.ts';
import { TEARDOWN_RETRY_MS } from '../core/exit.ts';
import { finalize } from './finalize.ts';
import type { PackageObjects, Ports } from './ports.ts';
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

/** The memory ports (test/engine/memory-ports.ts), the package's live read answered by `listOwned`. */
function portsWhere(listOwned: PackageObjects['listOwned']) {
  const w = memoryWorld();
  const logs: string[] = [];
  const finalizers: boolean[] = [];
  const { objects, packageSyncs } = w.ports;
  const forPackage = objects.forPackage.bind(objects);
  objects.forPackage = (owner, serviceAccount) => ({ ...forPackage(owner, serviceAccount), listOwned });
  const setFinalizer = packageSyncs.setFinalizer.bind(packageSyncs);
  packageSyncs.setFinalizer = async (ps, finalizer, present) => {
    finalizers.push(present);
    return setFinalizer(ps, finalizer, present);
  };
  const log = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line).msg) });
  const ports: Ports = { ...w.ports, log };
  return { ports, events: w.packageSyncs.events, logs, finalizers };
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
