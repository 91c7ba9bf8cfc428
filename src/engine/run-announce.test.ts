// The Applied event goes out while the run goes on to its health wait (one round trip less on the worker), and
// the next status write waits for it: `kubectl describe` still lists it before the status that follows, and a
// fault in sending it still ends the run at that write.
import { describe, expect, it } from 'vitest';
import { memoryWorld } from '../../test/engine/memory-ports.ts';
import type { PackageSync } from '../api/packagesync.ts';
import { Run, type ResolvedRun } from './run.ts';

const ps = (): PackageSync =>
  ({
    apiVersion: 'packagesync.io/v1alpha1',
    kind: 'PackageSync',
    metadata: { name: 'web', namespace: 'apps', uid: 'u1', generation: 1, resourceVersion: '1' },
    spec: { source: { url: 'https://git.example/r.git' } },
  }) as unknown as PackageSync;

/** A run past its apply (one object created), with the event's answer held until `answer` is called. */
function appliedRun(answer: 'ok' | 'network fault' = 'ok') {
  const w = memoryWorld();
  const order: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  w.ports.packageSyncs.event = async (_ps, type, reason) => {
    order.push(`event sent: ${type} ${reason}`);
    await held;
    order.push('event answered');
    if (answer === 'network fault') throw new Error('socket hang up');
  };
  const writeStatus = w.ports.packageSyncs.writeStatus.bind(w.ports.packageSyncs);
  w.ports.packageSyncs.writeStatus = async (p, status) => {
    order.push(`status: ${status.conditions?.map((c) => `${c.type}=${c.status}`).join(',')}`);
    return writeStatus(p, status);
  };
  const run = new Run(w.packageSyncs.put(ps()), w.ports, new AbortController().signal)
    .actAs(undefined)
    .resolved('main@sha1:' + 'a'.repeat(40));
  run.handled([{ action: 'created', ref: { group: '', kind: 'ConfigMap', namespace: 'apps', name: 'c' } }]);
  return { run: run as ResolvedRun, order, release };
}

describe('the Applied event does not hold the worker', () => {
  it('is sent and the run goes on; Ready is written only once the event was answered', async () => {
    const { run, order, release } = appliedRun();
    run.announceChanges();
    // nothing awaited: the worker is free for the health wait already
    expect(order).toEqual(['event sent: Normal Applied']);
    const succeeded = run.succeeded('Applied revision main@sha1:aaaa: 1 created');
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual(['event sent: Normal Applied']);
    release();
    await succeeded;
    expect(order).toEqual(['event sent: Normal Applied', 'event answered', 'status: Ready=True']);
  });

  it('a fault in sending it ends the run at the next status write, as it did when it was awaited', async () => {
    const { run, order, release } = appliedRun('network fault');
    run.announceChanges();
    release();
    await expect(run.succeeded('Applied')).rejects.toThrow('socket hang up');
    expect(order).toEqual(['event sent: Normal Applied', 'event answered']);
  });
});
