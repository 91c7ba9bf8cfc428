/**
 * REST mapping: which resource path serves a group/kind, and whether it is namespaced. Read from the
 * API server's aggregated discovery (two requests for the whole cluster) and refreshed when a kind is
 * unknown, e.g. right after the package created its CRD.
 */
import { assertValidName, InvalidNameError } from '../../api/names.ts';
import type { KubeClient } from './client.ts';

export interface ResourceMapping {
  group: string;
  version: string;
  kind: string;
  resource: string;
  namespaced: boolean;
  /** The verbs the resource serves (list, watch, patch, …), as discovery reports them. */
  verbs?: string[];
}

interface DiscoveryList {
  items: {
    metadata: { name?: string };
    versions: {
      version: string;
      resources: {
        resource: string;
        responseKind?: { kind: string };
        scope: 'Namespaced' | 'Cluster';
        verbs?: string[];
      }[];
    }[];
  }[];
}

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

export class Discovery {
  private byGroupKind = new Map<string, ResourceMapping[]>();
  private refreshing: Promise<void> | undefined;
  private loadedAt = 0;
  private serverVersion: Promise<string> | undefined;
  private readonly client: KubeClient;

  constructor(client: KubeClient) {
    this.client = client;
  }

  /** The mapping for group/kind, preferring `version` when served. Refreshes once on a miss. */
  async mapping(group: string, kind: string, version?: string): Promise<ResourceMapping | undefined> {
    if (this.loadedAt === 0) await this.refresh();
    let found = this.pick(group, kind, version);
    if (!found && Date.now() - this.loadedAt > 200) {
      await this.refresh();
      found = this.pick(group, kind, version);
    }
    return found;
  }

  /** Synchronous scope lookup for render: undefined when the kind is not served (yet). */
  isNamespaced(group: string, kind: string): boolean | undefined {
    return this.byGroupKind.get(`${group}/${kind}`)?.[0]?.namespaced;
  }

  /** The preferred version of every kind that can be listed, e.g. to find objects by label across kinds. */
  async listable(): Promise<ResourceMapping[]> {
    if (this.loadedAt === 0) await this.refresh();
    return [...this.byGroupKind.values()].map((all) => all[0]!).filter((m) => m.verbs?.includes('list'));
  }

  /**
   * What Helm's .Capabilities holds on a real install: the server's version, and every served
   * group/version and group/version/Kind. The version is asked once per discovery load.
   */
  async capabilities(): Promise<{ kubeVersion: string; apiVersions: string[] }> {
    if (this.loadedAt === 0) await this.refresh();
    this.serverVersion ??= this.client
      .request<{ gitVersion?: string }>('GET', '/version')
      .then((v) => v.gitVersion ?? 'v1.0.0')
      .catch((err: unknown) => {
        this.serverVersion = undefined;
        throw err;
      });
    const apiVersions = new Set<string>();
    for (const all of this.byGroupKind.values()) {
      for (const m of all) {
        const gv = m.group ? `${m.group}/${m.version}` : m.version;
        apiVersions.add(gv);
        apiVersions.add(`${gv}/${m.kind}`);
      }
    }
    return { kubeVersion: await this.serverVersion, apiVersions: [...apiVersions].sort() };
  }

  async refresh(): Promise<void> {
    this.refreshing ??= this.load().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private pick(group: string, kind: string, version?: string): ResourceMapping | undefined {
    const all = this.byGroupKind.get(`${group}/${kind}`);
    if (!all) return undefined;
    return (version && all.find((m) => m.version === version)) || all[0];
  }

  private async load(): Promise<void> {
    const [core, groups] = await Promise.all([
      this.client.request<DiscoveryList>('GET', '/api', { accept: AGGREGATED }),
      this.client.request<DiscoveryList>('GET', '/apis', { accept: AGGREGATED }),
    ]);
    const next = new Map<string, ResourceMapping[]>();
    for (const g of [...core.items, ...groups.items]) {
      const group = g.metadata.name ?? '';
      // versions are listed in preference order: the first is the preferred one
      for (const v of g.versions) {
        for (const r of v.resources) {
          if (!r.responseKind?.kind || r.resource.includes('/')) continue;
          const key = `${group}/${r.responseKind.kind}`;
          const list = next.get(key) ?? [];
          list.push({
            group,
            version: v.version,
            kind: r.responseKind.kind,
            resource: r.resource,
            namespaced: r.scope === 'Namespaced',
            verbs: r.verbs,
          });
          next.set(key, list);
        }
      }
    }
    this.byGroupKind = next;
    this.loadedAt = Date.now();
    this.serverVersion = undefined;
  }
}

/** The URL path of a collection or of one object. */
export function resourcePath(
  m: Pick<ResourceMapping, 'group' | 'version' | 'resource' | 'namespaced'>,
  namespace?: string,
  name?: string,
): string {
  // encodeURIComponent keeps dots, and URL parsing resolves "." and ".." (also as %2e) as dot segments: a
  // ConfigMap named ".." would turn into its namespace, "." into the whole collection; and the API server
  // decodes %2F, so "other-ns/cm" would name a subresource (issue 35). Kubernetes' own rules refuse them all
  // (a namespace is a DNS label; every name a valid path segment: apimachinery's ValidatePathSegmentName).
  if (namespace) assertValidName('namespace', namespace, 'namespace');
  if (name !== undefined && (name === '' || name === '.' || name === '..' || /[/%]/.test(name))) {
    throw new InvalidNameError(
      `${JSON.stringify(name)} is not a valid object name: it may not be "." or ".." nor contain "/" or "%"`,
    );
  }
  const base = m.group ? `/apis/${m.group}/${m.version}` : `/api/${m.version}`;
  const ns = m.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${ns}/${m.resource}${name ? `/${encodeURIComponent(name)}` : ''}`;
}
