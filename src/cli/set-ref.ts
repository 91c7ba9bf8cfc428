/** A PackageSyncSet named on the command line: `plan`, `why`, `approve` and `resume` read it the same way. */
import { setCollectionPath, type PackageSyncSet } from '../api/packagesyncset.ts';
import { isNotFound } from '../adapters/kube/client.ts';
import type { Cluster } from './cluster.ts';
import { CliError, ExitCode } from './exit-codes.ts';

/**
 * `packagesyncset/NAME` → NAME: kubectl's kind/name form, also `packagesyncsets/`, the short name `pkset/` and
 * `pss/` (what `why` took first), with or without `.packagesync.io`.
 */
export function setArgument(arg: string): string | undefined {
  return /^(?:packagesyncsets?|pkset|pss)(?:\.packagesync\.io)?\/(.+)$/.exec(arg)?.[1];
}

/** The set, or exit 2 naming it. */
export async function getSet(cluster: Cluster, namespace: string, name: string): Promise<PackageSyncSet> {
  try {
    return await cluster.client.request<PackageSyncSet>(
      'GET',
      `${setCollectionPath(namespace)}/${encodeURIComponent(name)}`,
    );
  } catch (e) {
    if (isNotFound(e)) throw new CliError(ExitCode.Invalid, `PackageSyncSet ${namespace}/${name} not found`);
    throw e;
  }
}
