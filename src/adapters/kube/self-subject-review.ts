/**
 * Who the API server says the caller is (authentication.k8s.io/v1 SelfSubjectReview): the name an approval or a
 * resume of a PackageSyncSet is recorded with, the one deploy/optional/approver-policy.yaml holds it to, and the
 * user the web UI names in its Events and access answers.
 */
import type { KubeClient } from './client.ts';

/** The username the API server gives the client's credentials, or undefined when it names none. */
export async function reviewedUser(client: KubeClient): Promise<string | undefined> {
  const review = await client.request<{ status?: { userInfo?: { username?: string } } }>(
    'POST',
    '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } },
  );
  return review.status?.userInfo?.username || undefined;
}

export async function callerName(client: KubeClient): Promise<string> {
  const name = await reviewedUser(client);
  if (!name) throw new Error('the API server named no user in its SelfSubjectReview');
  return name;
}
