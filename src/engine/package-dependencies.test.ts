import { describe, expect, it } from 'vitest';
import { memoryWorld } from '../../test/engine/memory-ports.ts';
import type { PackageSync } from '../api/packagesync.ts';
import { parseSpec } from '../core/spec.ts';
import { dependenciesReady } from './package-dependencies.ts';
import type { Ports } from './ports.ts';

const pks = (namespace: string, name: string, ready: boolean): PackageSync =>
  ({
    apiVersion: 'packagesync.io/v1alpha1',
    kind: 'PackageSync',
    metadata: { namespace, name, generation: 1 },
    spec: { source: { url: 'https://x/y.git' } },
    status: {
      observedGeneration: 1,
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', reason: 'X', message: '' }],
    },
  }) as unknown as PackageSync;

/** The stored PackageSyncs, as the port reads them. */
function ports(stored: PackageSync[]): Ports {
  const w = memoryWorld();
  for (const p of stored) w.packageSyncs.put(p);
  return w.ports;
}

async function messageFor(dependsOn: { name: string; namespace?: string }[], stored: PackageSync[]) {
  const self = pks('team-a', 'app', false);
  const spec = parseSpec({ source: { url: 'https://x/y.git' }, dependsOn });
  if (!spec.ok) throw new Error(spec.failure.message);
  const r = await dependenciesReady(self, spec.value, ports(stored));
  return r.ok ? 'ok' : `${r.failure.reason}: ${r.failure.message}`;
}

describe('dependenciesReady', () => {
  it('in its own namespace, says whether the dependency is missing or not Ready', async () => {
    expect(await messageFor([{ name: 'db' }], [])).toBe('DependencyNotReady: dependency team-a/db does not exist');
    expect(await messageFor([{ name: 'db' }], [pks('team-a', 'db', false)])).toBe(
      'DependencyNotReady: dependency team-a/db is not Ready',
    );
    expect(await messageFor([{ name: 'db' }], [pks('team-a', 'db', true)])).toBe('ok');
  });

  // issue 35: "does not exist" vs "is not Ready" told a tenant what another namespace holds
  it('in another namespace, says the same whether it is missing or not Ready', async () => {
    const dep = [{ name: 'db', namespace: 'team-b' }];
    const missing = await messageFor(dep, []);
    expect(missing).toBe('DependencyNotReady: dependency team-b/db is not Ready (or does not exist)');
    expect(await messageFor(dep, [pks('team-b', 'db', false)])).toBe(missing);
  });
});
