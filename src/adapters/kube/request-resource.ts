/**
 * The resource a Kubernetes API request is about, from its path, for the `resource` label of
 * packagesync_api_requests_total: the plural name (`packagesyncs`, `configmaps`, `selfsubjectaccessreviews`),
 * without group, namespace, name or subresource, so the label's values are bounded by the kinds the cluster
 * serves. The rules are the API server's (k8s.io/apiserver RequestInfoFactory): `/namespaces/<ns>/<resource>`
 * is a namespaced resource unless `<resource>` is a namespace's own subresource (`status`, `finalize`).
 * Anything that is not a resource request (discovery, /version, /openapi, /metrics) is "".
 */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

export function resourceOfPath(path: string): string {
  const parts = path
    .split('?')[0]!
    .split('/')
    .filter((p) => p !== '');
  // /api/<version>/… (the core group) or /apis/<group>/<version>/…
  const rest = parts[0] === 'api' ? parts.slice(2) : parts[0] === 'apis' ? parts.slice(3) : [];
  if (rest[0] === 'namespaces' && rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) return rest[2]!;
  return rest[0] ?? '';
}
