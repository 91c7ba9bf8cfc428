/**
 * As whom the Plan button's `packagesync plan` runs for a viewer behind the trusted auth proxy (docs/adr/0046).
 * Their requests are the proxy's token impersonating them, and a plan impersonates the PackageSync's
 * ServiceAccount: Kubernetes does not chain impersonation, so the plan cannot run with their credentials. Instead the
 * API server is asked (a SelfSubjectAccessReview sent as them, through the proxy's impersonation) whether they may
 * `create` the `plan` subresource of that PackageSync by name; only when RBAC says yes does the plan run as the
 * server's own identity, which impersonates the ServiceAccount as the controller's reconcile does. A PackageSync
 * without a ServiceAccount needs no second impersonation: its plan runs with the viewer's own credentials, as the CLI.
 */
import type { KubeClient } from '../../adapters/kube/client.ts';
import { GROUP, type PackageSync } from '../../api/packagesync.ts';

/** The CLI's `--kubeconfig` arguments for a plan child process, and its clean-up. */
export interface CliKubeconfig {
  args: string[];
  done(): Promise<void>;
}

export type PlanIdentity = ({ ok: true } & CliKubeconfig) | { ok: false; status: number; message: string };

/** The RBAC subresource that lets a proxied user see the plan the controller would make of one PackageSync. */
export const PLAN_SUBRESOURCE = 'plan';

export interface ProxiedPlanInput {
  /** The viewer's client: the proxy's token with Impersonate-User/-Group, so the review is about them. */
  client: KubeClient;
  /** The viewer as the API server names them (its SelfSubjectReview), for the refusal. */
  user: string;
  /** The PackageSync as the viewer read it (their own `get`). */
  packageSync: PackageSync;
  /** The viewer's own credentials for the CLI (no ServiceAccount: nothing to chain). */
  asViewer(): Promise<CliKubeconfig>;
  /** The server's own identity for the CLI: the controller's kubeconfig, or nothing in a pod (in-cluster config). */
  serverArgs: readonly string[];
}

export async function proxiedPlanIdentity(input: ProxiedPlanInput): Promise<PlanIdentity> {
  const { name, namespace } = input.packageSync.metadata;
  if (!input.packageSync.spec.serviceAccountName) return { ok: true, ...(await input.asViewer()) };
  const review = await input.client.request<{ status?: { allowed?: boolean; reason?: string } }>(
    'POST',
    '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    {
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: {
          resourceAttributes: {
            group: GROUP,
            resource: 'packagesyncs',
            subresource: PLAN_SUBRESOURCE,
            verb: 'create',
            namespace,
            name,
          },
        },
      },
    },
  );
  if (review.status?.allowed === true) return { ok: true, args: [...input.serverArgs], done: () => Promise.resolve() };
  return { ok: false, status: 403, message: planRefusal(input.user, namespace, name, review.status?.reason) };
}

/**
 * The refusal in the API server's own words (a review carries its decision and RBAC's reason, not the sentence a
 * refused request gets), and what would allow it.
 */
export function planRefusal(user: string, namespace: string, name: string, reason?: string): string {
  return (
    `packagesyncs.${GROUP} "${name}" is forbidden: User "${user}" cannot create resource ` +
    `"packagesyncs/${PLAN_SUBRESOURCE}" in API group "${GROUP}" in the namespace "${namespace}"` +
    (reason ? `: ${reason}` : '') +
    ` (behind the auth proxy a plan runs as the PackageSync's ServiceAccount only for a user RBAC allows ` +
    `create on packagesyncs/${PLAN_SUBRESOURCE})`
  );
}
