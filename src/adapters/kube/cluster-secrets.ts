/**
 * The clusters registered in a namespace (kubeconfig Secrets labelled packagesync.io/secret-type=cluster), read
 * from the API server as metadata only: no Secret value reaches this process. A LIST without a resourceVersion is a
 * consistent read: it sees every Secret created before it was sent, which a watch cache may not have yet.
 */
import { CLUSTER_SECRET_LABEL, CLUSTER_SECRET_VALUE } from '../../api/packagesyncset.ts';
import type { ClusterSecret } from '../../core/rollout/targets.ts';
import type { KubeClient } from './client.ts';
import { METADATA_LIST } from './informer.ts';

export async function listClusterSecrets(
  client: KubeClient,
  namespace: string,
  signal?: AbortSignal,
): Promise<ClusterSecret[]> {
  const out: ClusterSecret[] = [];
  let cont: string | undefined;
  do {
    const page = await client.request<{
      // an empty PartialObjectMetadataList comes as `"items": null` (Go's nil slice), not []
      items: { metadata: { name: string; labels?: Record<string, string> } }[] | null;
      metadata: { continue?: string };
    }>('GET', `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`, {
      query: { labelSelector: `${CLUSTER_SECRET_LABEL}=${CLUSTER_SECRET_VALUE}`, limit: 500, continue: cont },
      accept: METADATA_LIST,
      ...(signal ? { signal } : {}),
    });
    for (const s of page.items ?? []) out.push({ name: s.metadata.name, namespace, labels: s.metadata.labels ?? {} });
    cont = page.metadata.continue || undefined;
  } while (cont);
  return out;
}
