import type { KubeClient } from './client.ts';

export interface ResourceAttributes {
  verb: string;
  group?: string;
  resource: string;
  /** Omitted: cluster-wide. */
  namespace?: string;
}

/**
 * `kubectl auth can-i` for the client's own identity (a SelfSubjectAccessReview). False when the answer is
 * no, and when there is no answer: callers use it to pick a cheaper way that the fallback does not need.
 */
export async function canI(client: KubeClient, attributes: ResourceAttributes): Promise<boolean> {
  try {
    const review = await client.request<{ status?: { allowed?: boolean } }>(
      'POST',
      '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: attributes },
        },
      },
    );
    return review.status?.allowed === true;
  } catch {
    return false;
  }
}
