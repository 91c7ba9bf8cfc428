/**
 * Tenancy guard: a PackageSync may only place objects in its own namespace, unless it lives in the
 * controller's own namespace (the platform team's) or the controller allows it with
 * --allow-cross-namespace-objects. Cluster-scoped objects count as outside every namespace.
 * Without this, anyone allowed to create a PackageSync could write anywhere the controller can.
 */
import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../failure.ts';
import { describeRef, refOf, type KubeObject } from '../object.ts';

export interface NamespacePolicy {
  controllerNamespace: string;
  allowCrossNamespace: boolean;
}

export function checkNamespacePolicy(
  objects: readonly KubeObject[],
  packageSyncNamespace: string,
  policy: NamespacePolicy,
): Result<void> {
  if (policy.allowCrossNamespace || packageSyncNamespace === policy.controllerNamespace) return ok(undefined);
  const outside = objects.filter((o) => (o.metadata.namespace ?? '') !== packageSyncNamespace);
  if (outside.length === 0) return ok(undefined);
  const first = refOf(outside[0]!);
  const where = first.namespace ? `namespace ${first.namespace}` : 'cluster scope';
  return fail(
    Reason.NamespaceNotAllowed,
    `${describeRef(first)} is in ${where}, outside this PackageSync's namespace ${packageSyncNamespace}` +
      `${outside.length > 1 ? ` (and ${outside.length - 1} more)` : ''}: move the PackageSync to ${policy.controllerNamespace}, ` +
      'or run the controller with --allow-cross-namespace-objects',
    { object: first, terminal: true },
  );
}
