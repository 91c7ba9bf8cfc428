/**
 * The revision a PackageSyncSet would roll out now (docs/adr/0042): the template's git ref resolved to a commit
 * (`main@sha1:…`), or its OCI ref to a digest (`tag@sha256:…`, one manifest read), with the credentials the
 * template's secretRef names in the set's namespace. One function for the set controller and for
 * `packagesync plan packagesyncset/NAME`, so the plan shows the revision the controller would pin.
 */
import type { Spec } from '../api/packagesync.ts';
import type { SourcePort } from '../adapters/git/source-port.ts';
import { revisionOf } from '../core/rollout/child.ts';

export interface SetRevision {
  revision?: string;
  /** The ref did not resolve: the rollout in flight (if any) keeps its state. */
  revisionError?: { reason: string; message: string };
}

export async function resolveSetRevision(
  source: Spec['source'],
  namespace: string,
  deps: {
    source: Pick<SourcePort, 'resolve' | 'resolveArtifact'>;
    readSecret: (namespace: string, name: string) => Promise<Record<string, string> | undefined>;
  },
  signal: AbortSignal,
): Promise<SetRevision> {
  const secretName = source.oci ? (source.oci.secretRef ?? source.oci.certSecretRef)?.name : source.secretRef?.name;
  const credentials = secretName ? await deps.readSecret(namespace, secretName) : undefined;
  // an OCI artifact's revision is `tag@sha256:…` from one manifest read; git's is the ref's commit
  const resolve = source.oci ? deps.source.resolveArtifact : deps.source.resolve;
  const resolved = resolve ? await resolve(source, credentials, signal) : undefined;
  if (resolved?.ok) return { revision: source.oci ? resolved.value : revisionOf(source.ref, resolved.value) };
  if (resolved) return { revisionError: { reason: resolved.failure.reason, message: resolved.failure.message } };
  return {};
}
