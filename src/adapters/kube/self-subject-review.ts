/**
 * Who the API server says the caller is (authentication.k8s.io/v1 SelfSubjectReview): the name an approval or a
 * resume of a PackageSyncSet is recorded with, and the one deploy/optional/approver-policy.yaml holds it to.
 */
import type { KubeClient } from './client.ts';

export async function callerName(client: KubeClient): Promise<string> {
  const review = await client.request<{ status?: { userInfo?: { username?: string } } }>(
    'POST',
    '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } },
  );
  const name = review.status?.userInfo?.username;
  if (!name) throw new Error('the API server named no user in its SelfSubjectReview');
  return name;
}
