/**
 * Helm's `lookup` with spec.helm.lookup on (docs/adr/0038): the render worker has no network, so mid-render it
 * sends the question over its frames (hack/render-worker/lookup.go) and the pool asks the render's HelmLookup,
 * which reads the target cluster as the PackageSync's identity (engine/helm-lookup.ts).
 */

/** One call of Helm's `lookup` in a template: get (a name) or list (none), in a namespace or cluster-wide (''). */
export interface LookupQuery {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/**
 * What the API server answered, as the PackageSync's identity: the object (or list; none: not found), or the
 * failure's Status (code, reason, message) — the worker turns it into the error client-go would give Helm.
 */
export type LookupAnswer = { object?: Record<string, unknown> } | { code: number; reason: string; message: string };

/** Answers a render's lookups (engine/helm-lookup.ts): never throws, every failure is an answer. */
export type HelmLookup = (query: LookupQuery, signal?: AbortSignal) => Promise<LookupAnswer>;
