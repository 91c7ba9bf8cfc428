/**
 * Creating the objects under test (PackageSyncs, or GitRepository + Kustomization pairs for Flux) and
 * waiting until N of them are Ready. Readiness is followed with one LIST + WATCH (the repo's own Informer),
 * not by polling, so the harness adds two requests to the API server's count, not thousands.
 */
import PQueue from 'p-queue';
import type { KubeClient } from '../../src/adapters/kube/client.ts';
import { Informer } from '../../src/adapters/kube/informer.ts';
import type { KubeObject } from '../../src/core/object.ts';

export const PS_PATH = (ns: string) => `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncs`;
export const GITREPO_PATH = (ns: string) => `/apis/source.toolkit.fluxcd.io/v1/namespaces/${ns}/gitrepositories`;
export const KS_PATH = (ns: string) => `/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/${ns}/kustomizations`;

export interface UnitSpec {
  name: string;
  url: string;
  path: string;
  interval: string;
  wait: boolean;
}

/** The bench controller watches only PackageSyncs with this label, so it never touches anyone else's. */
export const BENCH_LABEL = 'bench.packagesync.io/harness';

export function packageSyncOf(ns: string, u: UnitSpec, annotations?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'packagesync.io/v1alpha1',
    kind: 'PackageSync',
    metadata: {
      name: u.name,
      namespace: ns,
      labels: { [BENCH_LABEL]: 'true' },
      ...(annotations ? { annotations } : {}),
    },
    spec: {
      source: { url: u.url, ref: { branch: 'main' }, path: u.path },
      interval: u.interval,
      timeout: '10m',
      prune: true,
      wait: u.wait,
    },
  };
}

/**
 * Flux's fleet as a Flux user with one repository sets it up: one GitRepository, and a Kustomization per
 * unit pointing at its path. The kindest shape for Flux (one clone, one artifact for all), as PackageSync's
 * units share one fetch per commit.
 */
export function fluxSourceOf(ns: string, url: string, interval: string): KubeObject {
  return {
    apiVersion: 'source.toolkit.fluxcd.io/v1',
    kind: 'GitRepository',
    metadata: { name: FLUX_SOURCE, namespace: ns },
    spec: { url, ref: { branch: 'main' }, interval, timeout: '5m' },
  };
}

export const FLUX_SOURCE = 'fleet';

export function fluxUnitOf(ns: string, u: UnitSpec): KubeObject {
  return {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name: u.name, namespace: ns },
    spec: {
      sourceRef: { kind: 'GitRepository', name: FLUX_SOURCE },
      path: `./${u.path}`,
      interval: u.interval,
      timeout: '10m',
      prune: true,
      wait: u.wait,
      targetNamespace: ns,
    },
  };
}

/** POSTs every object, 32 at a time. */
export async function createAll(client: KubeClient, items: { path: string; body: KubeObject }[]): Promise<void> {
  const q = new PQueue({ concurrency: 32 });
  await Promise.all(items.map((i) => q.add(() => client.request('POST', i.path, { body: i.body }))));
}

type Condition = { type: string; status: string };
export function isReady(o: KubeObject): boolean {
  const status = o.status as { conditions?: Condition[]; observedGeneration?: number } | undefined;
  const ready = status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' && status?.observedGeneration === o.metadata.generation;
}

/** Follows a collection until `count` objects in it satisfy `done`; resolves with the time it happened. */
export function watchUntil(
  client: KubeClient,
  collectionPath: string,
  count: number,
  done: (o: KubeObject) => boolean,
  timeoutMs: number,
): { ready: Promise<number>; stop(): void; readyNow(): number } {
  const informer = new Informer(client, { path: collectionPath });
  const satisfied = new Set<string>();
  let resolveReady!: (t: number) => void;
  let rejectReady!: (e: Error) => void;
  const ready = new Promise<number>((res, rej) => ((resolveReady = res), (rejectReady = rej)));
  const timer = setTimeout(
    () => rejectReady(new Error(`${collectionPath}: ${satisfied.size}/${count} ready after ${timeoutMs / 1000}s`)),
    timeoutMs,
  );
  informer.on((event, obj) => {
    const key = obj.metadata.name;
    if (event !== 'delete' && done(obj)) satisfied.add(key);
    else satisfied.delete(key);
    if (satisfied.size >= count) {
      clearTimeout(timer);
      resolveReady(performance.now());
    }
  });
  informer.start();
  return {
    ready,
    readyNow: () => satisfied.size,
    stop() {
      clearTimeout(timer);
      informer.stop();
    },
  };
}

// The Helm fleet (issue 27): one chart, a release of it per unit, the same values in both tools.
export const HELMCHART_PATH = (ns: string) => `/apis/source.toolkit.fluxcd.io/v1/namespaces/${ns}/helmcharts`;
export const HR_PATH = (ns: string) => `/apis/helm.toolkit.fluxcd.io/v2/namespaces/${ns}/helmreleases`;
export const HELM_VALUES = { replicaCount: 0 };
export const FLUX_CHART = 'fleet-chart';

/** A PackageSync rendering the chart at u.path with Helm, released as the unit's name. */
export function packageSyncHelmOf(ns: string, u: UnitSpec): KubeObject {
  const ps = packageSyncOf(ns, u) as KubeObject & { spec: Record<string, unknown> };
  return { ...ps, spec: { ...ps.spec, helm: { releaseName: u.name, values: HELM_VALUES } } };
}

/**
 * Flux's kindest shape for a fleet of one chart: one HelmChart built once from the fleet's GitRepository, and a
 * HelmRelease per unit referring to it (spec.chartRef), as the kustomize fleet shares one GitRepository.
 */
export function fluxHelmChartOf(ns: string, path: string, interval: string): KubeObject {
  return {
    apiVersion: 'source.toolkit.fluxcd.io/v1',
    kind: 'HelmChart',
    metadata: { name: FLUX_CHART, namespace: ns },
    spec: { chart: `./${path}`, sourceRef: { kind: 'GitRepository', name: FLUX_SOURCE }, interval },
  };
}

export function fluxHelmReleaseOf(ns: string, u: UnitSpec): KubeObject {
  return {
    apiVersion: 'helm.toolkit.fluxcd.io/v2',
    kind: 'HelmRelease',
    metadata: { name: u.name, namespace: ns },
    spec: {
      chartRef: { kind: 'HelmChart', name: FLUX_CHART },
      releaseName: u.name,
      interval: u.interval,
      timeout: '10m',
      values: HELM_VALUES,
      // helm install --wait, as PackageSync's wait: Ready once every object is
      install: { disableWait: !u.wait },
    },
  };
}
