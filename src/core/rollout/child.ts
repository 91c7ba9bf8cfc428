/**
 * A target's child PackageSync, from the set's template (docs/adr/0042): its cluster's kubeconfig Secret, its
 * directory, and source.ref pinned to the exact commit of its wave (an OCI source: oci.ref to its digest). And the reverse: what the rollout reads of
 * a child (status fields only).
 */
import { API_VERSION, KIND, type PackageSync } from '../../api/packagesync.ts';
import { SET_KIND, SET_LABEL, TARGET_ANNOTATION, type SetSpec } from '../../api/packagesyncset.ts';
import { commitOf, type ChildObservation } from './observe.ts';
import { setLabelValue, type Target } from './targets.ts';

export interface SetRef {
  name: string;
  namespace: string;
  uid: string;
  /** The set's own labels: its children carry them (a sharded controller watches both by the same label). */
  labels?: Readonly<Record<string, string>>;
}

/** What a child reads of its set: the set controller and `packagesync plan packagesyncset/NAME` stamp with it. */
export function setRef(set: {
  metadata: { name: string; namespace: string; uid?: string; labels?: Record<string, string> };
}): SetRef {
  const { name, namespace, uid, labels } = set.metadata;
  return { name, namespace, uid: uid ?? '', labels: labels ?? {} };
}

export function childObject(set: SetRef, template: SetSpec['template'], target: Target, revision: string): PackageSync {
  const commit = commitOf(revision);
  if (!commit) throw new Error(`not an exact revision: ${revision}`);
  const spec = structuredClone(template.spec) as PackageSync['spec'];
  // an OCI artifact is pinned by its digest alone: with its tag kept, a revert to an older digest would be
  // refused as a moved tag (ArtifactTagMoved)
  if (spec.source.oci)
    spec.source = { ...spec.source, oci: { ...spec.source.oci, ref: { digest: `sha256:${commit}` } } };
  else spec.source = { ...spec.source, ref: { commit } };
  if (target.directory !== undefined) spec.source.path = target.directory;
  spec.kubeConfig = { secretRef: { name: target.cluster } };
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: {
      name: target.child,
      namespace: set.namespace,
      labels: { ...(set.labels ?? {}), ...(template.metadata?.labels ?? {}), [SET_LABEL]: setLabelValue(set.name) },
      annotations: { ...(template.metadata?.annotations ?? {}), [TARGET_ANNOTATION]: target.name },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: SET_KIND,
          name: set.name,
          uid: set.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    } as PackageSync['metadata'],
    spec,
  };
}

/** Whether `child` is this set's to manage: a same-named PackageSync of anyone else is never taken over. */
export function ownedBy(
  child: { metadata: { ownerReferences?: { uid: string; controller?: boolean }[] } },
  uid: string,
): boolean {
  return (child.metadata.ownerReferences ?? []).some((o) => o.uid === uid && o.controller === true);
}

export function observationOf(ps: PackageSync): ChildObservation {
  const cond = (type: string) => ps.status?.conditions?.find((c) => c.type === type);
  const ready = cond('Ready');
  return {
    ...(ps.spec?.source?.ref?.commit ? { pinnedCommit: ps.spec.source.ref.commit } : {}),
    ...(ps.spec?.source?.oci?.ref?.digest ? { pinnedCommit: ps.spec.source.oci.ref.digest } : {}),
    ...(ps.metadata.generation !== undefined ? { generation: ps.metadata.generation } : {}),
    ...(ps.status?.observedGeneration !== undefined ? { observedGeneration: ps.status.observedGeneration } : {}),
    ...(ready ? { ready: ready.status, reason: ready.reason, message: ready.message } : {}),
    stalled: cond('Stalled')?.status === 'True',
    ...(ps.status?.lastAppliedRevision ? { lastAppliedRevision: ps.status.lastAppliedRevision } : {}),
    ...(ps.status?.lastAttemptedRevision ? { lastAttemptedRevision: ps.status.lastAttemptedRevision } : {}),
  };
}

/** The revision the template's ref resolved to, in Flux's form: `<branch|tag>@sha1:<commit>`, or `sha1:<commit>`. */
export function revisionOf(ref: { branch?: string; tag?: string } | undefined, commit: string): string {
  const label = ref?.branch ?? ref?.tag;
  const algo = commit.length === 64 ? 'sha256' : 'sha1';
  return label ? `${label}@${algo}:${commit}` : `${algo}:${commit}`;
}
