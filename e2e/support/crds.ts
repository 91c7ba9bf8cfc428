import { resolve } from 'node:path';
import { kubectl } from './cluster.ts';

let installed: Promise<void> | undefined;

/** Applies crds/ (server-side, idempotent) and waits until the PackageSync CRD is Established. */
export function installCRDs(): Promise<void> {
  installed ??= (async () => {
    await kubectl('apply', '--server-side', '--force-conflicts', '-f', resolve(import.meta.dirname, '../../crds'));
    await kubectl('wait', '--for=condition=Established', 'crd/packagesyncs.packagesync.io', '--timeout=60s');
  })();
  return installed;
}
