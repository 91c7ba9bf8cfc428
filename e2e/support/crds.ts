import { resolve } from 'node:path';
import { kubectl } from './cluster.ts';
import { waitEstablished } from '../../test/support/crd-established.ts';

let installed: Promise<void> | undefined;

/** Applies crds/ (server-side, idempotent) and waits until the PackageSync CRD is Established. */
export function installCRDs(): Promise<void> {
  installed ??= (async () => {
    await kubectl('apply', '--server-side', '--force-conflicts', '-f', resolve(import.meta.dirname, '../../crds'));
    await waitEstablished(kubectl, 'packagesyncs.packagesync.io');
  })();
  return installed;
}
