/**
 * The inputs of one reconcile, and their digest (docs/adr/0037-one-inputs-step-and-one-exit.md).
 *
 * `ReconcileInputs` is the one list of what a reconcile of a PackageSync reads that could change what it renders,
 * applies or reports. engine/inputs.ts reads each of them with the identity allowed to read it; every shortcut is
 * keyed by `inputsDigest` of this record and nothing else of the inputs: the check before loading
 * (engine/unchanged-check.ts), the settled checkpoint (engine/settled-checkpoints.ts) and the render cache
 * (adapters/render/build.ts). The digest is taken over the whole record, so a field added here is in every
 * shortcut's key without another edit (src/engine/inputs.test.ts adds one and sees each shortcut refused).
 *
 * Values that may be secret (credentials, variables, Helm values) enter only as digests: the record can be kept
 * in memory and compared, never read back.
 */
import { createHash, hash } from 'node:crypto';
import { canonicalJson } from './render/canonical.ts';

export interface ReconcileInputs {
  /** Which PackageSync: a re-created one (another uid) is another package; its name is the Helm release's. */
  packageSync: { namespace: string; name: string; uid: string };
  /** The spec, by its generation: any edit of spec.* is a new generation. */
  generation: number;
  /** Who acts, where: the ServiceAccount (spec or the controller's default) and spec.kubeConfig's Secret. */
  identity: { serviceAccount: string | null; kubeConfig: string | null };
  /** spec.source.secretRef's (or the OCI artifact's) data, as a digest. */
  credentials: string | null;
  /**
   * The package's content: the digest of what it reads in the commit (FetchedSource.pathRevision), or the commit
   * when that is unknown. A commit elsewhere in a monorepo leaves it as it was.
   */
  content: string;
  /** The revision this run works on and reports (engine/package-revision.ts: the revert rule of issue 26). */
  revision: string;
  /** spec.postBuild's variables (every substituteFrom source read, strictness, strategy), as a digest. */
  substitution: string | null;
  /** spec.decryption's age keys (its Secret, or the controller's --sops-age-secret), as a digest. */
  decryption: string | null;
  /** Which build turns the package into objects: plain files, kustomize or helm. */
  tool: 'plain' | 'kustomize' | 'helm';
  /**
   * A Helm package's spec.helm.valuesFrom contents (as a digest) and the cluster's capabilities; with
   * spec.helm.lookup, a value no two reads share: what the templates will look up is only known by rendering
   * them, so no shortcut ever holds for such a package (docs/adr/0038).
   */
  helm: { valuesFrom: string; kubeVersion: string; apiVersions: readonly string[]; lookup?: string } | null;
}

/** One digest of every input: equal digests, equal inputs. */
export function inputsDigest(inputs: ReconcileInputs): string {
  // Plain JSON, not canonicalJson: engine/inputs.ts recordOf builds every record in one key order, and each value in
  // it is a string, a number or a digest already (Secret data goes through valueDigest, which stays canonical). A
  // field added later in an unstable order could only make two equal records differ, which refuses a shortcut and
  // never grants a wrong one. The check before loading takes this digest on every periodic check: the canonical
  // form allocated 6.9 KB a call, about half of that check's garbage (bench/HISTORY.md, session 18).
  return hash('sha256', JSON.stringify(inputs), 'base64url');
}

/** The digest of a value that may be secret, for comparing it without keeping it. */
export function valueDigest(value: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(value ?? null))
    .digest('base64url');
}
