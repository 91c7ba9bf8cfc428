import type { KubeObject } from '../object.ts';
import { groupOf, isRecord, ownField } from '../object.ts';

/** Answers "is this kind namespaced?" for every object of one package. */
export type ScopeOf = (group: string, kind: string) => boolean;

/**
 * Built-in kinds that live outside namespaces, by group: a CRD may reuse a kind name in another group.
 * Needed when discovery cannot answer yet (first install, offline `packagesync render`).
 */
const clusterScoped: Record<string, readonly string[]> = {
  '': ['Namespace', 'Node', 'PersistentVolume', 'ComponentStatus'],
  'rbac.authorization.k8s.io': ['ClusterRole', 'ClusterRoleBinding'],
  'apiextensions.k8s.io': ['CustomResourceDefinition'],
  'apiregistration.k8s.io': ['APIService'],
  'admissionregistration.k8s.io': [
    'ValidatingWebhookConfiguration',
    'MutatingWebhookConfiguration',
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionPolicyBinding',
    'MutatingAdmissionPolicy',
    'MutatingAdmissionPolicyBinding',
  ],
  'storage.k8s.io': ['StorageClass', 'CSIDriver', 'CSINode', 'VolumeAttachment', 'VolumeAttributesClass'],
  'scheduling.k8s.io': ['PriorityClass'],
  'networking.k8s.io': ['IngressClass', 'IPAddress', 'ServiceCIDR'],
  'node.k8s.io': ['RuntimeClass'],
  'certificates.k8s.io': ['CertificateSigningRequest', 'ClusterTrustBundle'],
  'flowcontrol.apiserver.k8s.io': ['FlowSchema', 'PriorityLevelConfiguration'],
  'resource.k8s.io': ['DeviceClass', 'ResourceSlice'],
  policy: ['PodSecurityPolicy'],
  extensions: ['PodSecurityPolicy'],
  'snapshot.storage.k8s.io': ['VolumeSnapshotClass', 'VolumeSnapshotContent'],
  'gateway.networking.k8s.io': ['GatewayClass'],
};

const builtinClusterScoped = new Set(
  Object.entries(clusterScoped).flatMap(([group, kinds]) => kinds.map((kind) => `${group}/${kind}`)),
);

/**
 * Scope by, in order: discovery, a CRD in the same package (its spec.scope), the built-in table;
 * anything still unknown is namespaced, as most custom resources are.
 */
export function scopeResolver(
  objects: readonly KubeObject[],
  discovery?: (group: string, kind: string) => boolean | undefined,
): ScopeOf {
  const fromPackage = crdScopes(objects);
  return (group, kind) => {
    const key = `${group}/${kind}`;
    return discovery?.(group, kind) ?? fromPackage.get(key) ?? !builtinClusterScoped.has(key);
  };
}

/** `group/kind` → namespaced?, for each CustomResourceDefinition in the package. */
function crdScopes(objects: readonly KubeObject[]): Map<string, boolean> {
  const scopes = new Map<string, boolean>();
  for (const obj of objects) {
    if (obj.kind !== 'CustomResourceDefinition' || groupOf(obj.apiVersion) !== 'apiextensions.k8s.io') continue;
    const spec = ownField(obj, 'spec');
    if (!isRecord(spec)) continue;
    const group = ownField(spec, 'group');
    const names = ownField(spec, 'names');
    const kind = isRecord(names) ? ownField(names, 'kind') : undefined;
    const scope = ownField(spec, 'scope');
    if (typeof group !== 'string' || typeof kind !== 'string') continue;
    if (scope === 'Cluster' || scope === 'Namespaced') scopes.set(`${group}/${kind}`, scope === 'Namespaced');
  }
  return scopes;
}
