/**
 * The web UI's rollouts (PackageSyncSets, docs/adr/0042, 0045): one shared watch of the sets for every open page
 * (as server.ts keeps one of PackageSyncs), the list filtered per viewer by RBAC, a set's page read as the viewer,
 * and the two decisions a person makes on a rollout (set-actions.ts). A cluster without the PackageSyncSet CRD,
 * or a user who may not list sets, gets a page that says so; the rest of the UI is not held up by it.
 */
import { KubeApiError } from '../../adapters/kube/client.ts';
import { Informer } from '../../adapters/kube/informer.ts';
import { packageSyncCollectionPath, type PackageSyncs } from '../../adapters/kube/packagesyncs.ts';
import { API_VERSION, type PackageSync } from '../../api/packagesync.ts';
import { SET_KIND, SET_LABEL, setCollectionPath, type PackageSyncSet } from '../../api/packagesyncset.ts';
import type { Cluster } from '../cluster.ts';
import { errorMessage } from '../exit-codes.ts';
import { visibleTo, type Viewer } from './access.ts';
import type { ChangeEvent } from './api-types.ts';
import { objectEvents } from './detail.ts';
import type { Refusal } from './security.ts';
import { performSetAction } from './set-actions.ts';
import { SET_ACTIONS, SetListQuerySchema, type SetAction, type SetListPage } from './set-types.ts';
import { setDetail, setListPage } from './set-view.ts';

export interface SetRoutesOptions {
  /** The identity of the one shared watch (server.ts's). */
  cluster: Cluster;
  namespace?: string;
  /** Writes the events recording actions. */
  recorder: PackageSyncs;
  /** Every change the watch sees, once the first list is in (server.ts fans it out to the viewers who may list). */
  onChange(change: ChangeEvent): void;
}

export interface Answer {
  status: number;
  body: unknown;
}

export interface SetRoutes {
  /** Resolves once the sets are listed, or the list is refused or has no CRD to list: never holds the server up. */
  ready: Promise<void>;
  /** The answer to a request under /api/packagesyncsets, or undefined for any other path. */
  handle(
    method: string,
    url: URL,
    viewer: Viewer,
    csrf: () => Refusal,
    perRequest: boolean,
  ): Promise<Answer | undefined>;
  stop(): void;
}

const ONE = /^\/api\/packagesyncsets\/([^/]+)\/([^/]+)(?:\/([a-z-]+))?$/;

export function setRoutes(opts: SetRoutesOptions): SetRoutes {
  let refused: string | undefined;
  let settle!: () => void;
  const settled = new Promise<void>((r) => (settle = r));
  const informer = new Informer(opts.cluster.client, {
    path: setCollectionPath(opts.namespace),
    objectType: { apiVersion: API_VERSION, kind: SET_KIND },
    onRefused: (e) => {
      refused =
        `The API server refused to list PackageSyncSets: ${e.reason}: ${e.message}. ` +
        'Start packagesync ui -n NAMESPACE for a namespace you may list.';
      settle();
    },
    onError: (e) => {
      // no CRD (an older install): said on the page, and the watch keeps trying, so installing it later shows them
      if (e instanceof KubeApiError && e.status === 404)
        refused = 'This cluster has no PackageSyncSet CRD (packagesyncsets.packagesync.io): no rollouts to show.';
      // any failure of the first list: the informer retries it; the rest of the UI does not wait for it
      settle();
    },
  });
  let synced = false;
  void informer.synced.then(() => {
    synced = true;
    refused = undefined;
    settle();
  });
  informer.on((_event, obj) => {
    if (synced) opts.onChange({ namespace: obj.metadata.namespace ?? '', name: obj.metadata.name, kind: SET_KIND });
  });
  informer.start();

  const list = async (url: URL, viewer: Viewer, perRequest: boolean): Promise<Answer> => {
    const query = SetListQuerySchema.safeParse(Object.fromEntries(url.searchParams));
    if (!query.success) return { status: 400, body: { ok: false, message: query.error.issues[0]?.message } };
    const all = [...informer.cache.values()] as unknown[] as PackageSyncSet[];
    const visible = (await visibleTo(viewer, all, 'packagesyncsets')).items;
    const body: SetListPage = {
      ...setListPage(visible, query.data),
      ...(refused ? { refused } : {}),
      ...(perRequest && all.length > 0 && visible.length === 0
        ? { refused: `${viewer.user} may not list PackageSyncSets in any namespace that has one (RBAC).` }
        : {}),
    };
    return { status: 200, body };
  };

  const detail = async (viewer: Viewer, namespace: string, name: string): Promise<Answer> => {
    const path = `${setCollectionPath(namespace)}/${encodeURIComponent(name)}`;
    let set: PackageSyncSet;
    try {
      set = await viewer.cluster.client.request<PackageSyncSet>('GET', path);
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 404)
        return { status: 404, body: { ok: false, message: `PackageSyncSet ${namespace}/${name} not found` } };
      throw e;
    }
    const notes: string[] = [];
    const [children, events] = await Promise.all([
      // the children the viewer may read: each target links to its PackageSync's page only where there is one
      viewer.cluster.client
        .request<{ items: PackageSync[] }>('GET', packageSyncCollectionPath(namespace), {
          query: { labelSelector: `${SET_LABEL}=${name}` },
        })
        .then(
          (l) => new Set(l.items.map((c) => c.metadata.name)),
          (e: unknown) => {
            notes.push(`the set's PackageSyncs could not be listed: ${errorMessage(e)}`);
            return new Set<string>();
          },
        ),
      objectEvents(viewer.cluster, namespace, SET_KIND, name),
    ]);
    return { status: 200, body: setDetail({ set, children, events, notes, now: Date.now() }) };
  };

  return {
    ready: settled,
    async handle(method, url, viewer, csrf, perRequest) {
      const path = url.pathname;
      if (method === 'GET' && path === '/api/packagesyncsets') return list(url, viewer, perRequest);
      const one = ONE.exec(path);
      if (!one) return undefined;
      const [namespace, name] = [decodeURIComponent(one[1]!), decodeURIComponent(one[2]!)];
      const action = one[3];
      if (method === 'GET' && !action) return detail(viewer, namespace, name);
      if (method !== 'POST' || !(SET_ACTIONS as readonly string[]).includes(action ?? '')) return undefined;
      const denied = csrf();
      if (denied) return { status: denied.status, body: { ok: false, message: denied.message } };
      const done = await performSetAction(viewer.cluster, opts.recorder, viewer.user, {
        namespace,
        name,
        action: action as SetAction,
        wave: url.searchParams.get('wave') ?? '',
        revision: url.searchParams.get('revision') ?? '',
      });
      return { status: done.status, body: done.result };
    },
    stop: () => informer.stop(),
  };
}
