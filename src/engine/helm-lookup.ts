/**
 * spec.helm.lookup (docs/adr/0038): Helm's `lookup` answered from the target cluster as the PackageSync's own
 * identity — the view the reconcile reads and applies with (its ServiceAccount impersonated when it names one,
 * spec.kubeConfig's cluster when it names one), as `helm install` run with that identity would read. Reads go
 * to the API server (never the controller's own watches, which see more than the identity may). Helm's rules
 * (pkg/engine/lookup_func.go): a name gets one object, no name lists; a namespace applies to namespaced kinds
 * only; not found (a kind or group the cluster does not serve included) is nothing; any other failure —
 * forbidden above all — is the API server's Status, which fails the template as it would fail Helm's.
 */
import { InvalidNameError } from '../api/names.ts';
import type { HelmLookup, LookupAnswer } from '../adapters/render/worker-lookup.ts';
import { groupOf } from '../core/object.ts';
import type { PackageObjects } from './ports.ts';

export function helmLookup(objects: PackageObjects): HelmLookup {
  return async (q, signal): Promise<LookupAnswer> => {
    const slash = q.apiVersion.indexOf('/');
    const version = slash < 0 ? q.apiVersion : q.apiVersion.slice(slash + 1);
    try {
      const m = await objects.discovery.mapping(groupOf(q.apiVersion), q.kind, version);
      if (!m) return {};
      const namespace = m.namespaced ? q.namespace : '';
      if (q.name !== '') {
        const object = await objects.get(
          { group: m.group, kind: m.kind, namespace, name: q.name },
          signal ? { signal } : {},
        );
        return object ? { object } : {};
      }
      const items = await objects.list(m, namespace, '', signal ? { signal } : {});
      return { object: { apiVersion: q.apiVersion, kind: `${m.kind}List`, metadata: {}, items } };
    } catch (e) {
      const status = e as { status?: unknown; reason?: unknown; message?: unknown };
      if (typeof status.status === 'number')
        return { code: status.status, reason: String(status.reason ?? ''), message: String(status.message ?? '') };
      // a name no API path may hold ("..", "a/b"): the API server would not find it
      if (e instanceof InvalidNameError) return {};
      return { code: 500, reason: 'InternalError', message: e instanceof Error ? e.message : String(e) };
    }
  };
}
