/**
 * Kind order: what others refer to goes first (Namespaces, CRDs, identities, configuration), workloads
 * after, admission that validates everything last. The dependency graph (graph.ts) uses it to break
 * ties between objects it does not order; teardown walks it backwards.
 */
export const kindsFirst: readonly string[] = [
  'Namespace',
  'ResourceQuota',
  'StorageClass',
  'CustomResourceDefinition',
  'MutatingWebhookConfiguration',
  'ServiceAccount',
  'PodSecurityPolicy',
  'Role',
  'ClusterRole',
  'RoleBinding',
  'ClusterRoleBinding',
  'ConfigMap',
  'Secret',
  'Service',
  'LimitRange',
  'PriorityClass',
  'Deployment',
  'StatefulSet',
  'CronJob',
  'PodDisruptionBudget',
];

/**
 * Last, so that a validating webhook cannot reject the rest of the package (or the webhook's own
 * Deployment) while its backend is not running yet.
 */
export const kindsLast: readonly string[] = ['ValidatingWebhookConfiguration'];

/** The rank every kind not listed shares: after kindsFirst, before kindsLast. */
export const otherKindsRank = kindsFirst.length;

const ranks = new Map<string, number>([
  ...kindsFirst.map((kind, i) => [kind, i] as const),
  ...kindsLast.map((kind, i) => [kind, otherKindsRank + 1 + i] as const),
]);

export function kindRank(kind: string): number {
  return ranks.get(kind) ?? otherKindsRank;
}

export const crdRank = kindRank('CustomResourceDefinition');
