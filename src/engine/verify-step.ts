/**
 * spec.source.verify, between the fetch and the render: the commit (and, by mode, the tag) must carry a
 * signature by a key of the Secret in verify.secretRef (GPG public keys, SSH allowed signers). A commit that
 * fails is never rendered or applied; the previous inventory stands (Flux GitRepository spec.verify).
 */
import type { Spec } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import { fail, ok, type Result } from '../core/failure.ts';
import { allowedKeys } from '../core/signers.ts';
import type { FetchedSource, Ports } from './ports.ts';

export async function verifyStep(
  ports: Ports,
  namespace: string,
  source: Spec['source'],
  fetched: FetchedSource,
  credentials: Record<string, string> | undefined,
  signal: AbortSignal,
): Promise<Result<void>> {
  const verify = source.verify;
  if (!verify) return ok(undefined);
  const named = `Secret ${namespace}/${verify.secretRef.name}`;
  const data = await ports.secrets.read(namespace, verify.secretRef.name);
  if (!data) return fail(Reason.VerificationFailed, `${named} named in spec.source.verify.secretRef does not exist`);
  if (!ports.source.verify) {
    return fail(Reason.VerificationFailed, 'this source cannot verify signatures: spec.source.verify is not supported');
  }
  return ports.source.verify(source, fetched, allowedKeys(data), credentials, signal);
}
