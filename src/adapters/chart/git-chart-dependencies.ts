import { createHash } from 'node:crypto';
import { cp, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { parse } from 'yaml';
import { durationMs, type Spec } from '../../api/packagesync.ts';
import { absentDependencies, dependencyNeeds } from '../../core/chart/dependencies.ts';
import { checkEntries, splitDependencyCredentials } from '../../core/chart/dependency-credentials.ts';
import { ok, type Result } from '../../core/failure.ts';
import { isLoopback, parseOciRepository } from '../../core/oci/reference.ts';
import type { FetchedSource, SourcePort } from '../git/source-port.ts';
import type { CheckoutStore } from '../oci/checkout-store.ts';
import { makeToolHome } from '../render/run-tool.ts';
import { buildDependencies } from './dependencies.ts';
import { describeHelmFetchFailure } from './fetch-failure.ts';
import { runHelm, type PullContext } from './helm-pull.ts';
import { dependencyIdentity, type ChartSourceConfig } from './source-port.ts';

/**
 * A chart in git whose Chart.yaml names repositories that its charts/ does not hold (docs/adr/0041): the git
 * source's checkout is read-only and shared, and `helm template` runs with no network, so the dependencies are
 * fetched here, as `helm dependency build` fetches them (the pinned helm, sandboxed, Chart.lock honoured and a
 * lock out of sync refused: dependencies.ts), into one read-only copy of the commit per (commit, path) in the
 * shared checkout store; the package is rendered from that copy. A chart that vendors its dependencies, and
 * every package that is not a chart, is the git checkout as it was. The revision stays the commit's: Chart.lock
 * pins what is fetched (without a lock the ranges are resolved once, when the commit is first fetched, as for
 * a fetched chart).
 */
const MAX_CHART_YAML_BYTES = 1 << 20;
/** (commit, path) pairs known to need no fetch: `helm dependency list` runs once per commit, not per reconcile. */
const MAX_KNOWN_COMPLETE = 4096;

export function withChartDependencies(
  git: SourcePort,
  config: ChartSourceConfig,
  store: CheckoutStore,
  log: Logger,
): SourcePort {
  const complete = new Set<string>();
  /** The git checkout a derived one was made from: git's verify reads signatures from the repository. */
  const gitCheckout = new WeakMap<FetchedSource, FetchedSource>();

  async function fetch(
    source: Spec['source'],
    credentials: Record<string, string> | undefined,
    signal: AbortSignal,
    opts?: Parameters<SourcePort['fetch']>[3],
  ): Promise<Result<FetchedSource>> {
    const { own, byEntry } = splitDependencyCredentials(credentials);
    const entries = source.dependencyRepositories ?? [];
    const checked = checkEntries(entries);
    if (!checked.ok) return checked;
    const fetched = await git.fetch(source, own, signal, opts);
    if (!fetched.ok) return fetched;
    const { checkoutRoot, packagePath, commit } = fetched.value;
    const known = `${commit}\n${packagePath}`;
    if (complete.has(known)) return fetched;
    const chartDir = join(checkoutRoot, packagePath);
    const chartYaml = await readChartYaml(chartDir);
    // not a chart, or one the render step reports on (it reads Chart.yaml with helm's own rules)
    if (chartYaml === undefined) return remember(known, fetched);
    const name = (chartYaml as { name?: unknown } | null)?.name;
    const chart = { name: typeof name === 'string' ? name : packagePath, repository: `${source.url} ${packagePath}` };
    const needs = dependencyNeeds(chartYaml, chart.name);
    if (needs.ok && !needs.value.remote) return remember(known, fetched);

    const home = await makeToolHome();
    try {
      const ctx: PullContext = {
        helmPath: config.helmPath,
        home,
        timeoutMs: durationMs(config.gitTimeout),
        maxArchiveBytes: config.ociMaxLayerBytes,
        signal,
      };
      const listed = await runHelm(ctx, ['dependency', 'list', chartDir], [], '', [checkoutRoot]);
      if (!listed.ok)
        return describeHelmFetchFailure(`listing the dependencies of chart ${chart.name}`, listed, config.helmPath);
      if (absentDependencies(listed.stdout).length === 0) return remember(known, fetched);
      // a repository PackageSync cannot fetch from (an alias, plain http off loopback) matters only when used
      if (!needs.ok) return needs;
      const base = await store.base(`${source.url}\n${packagePath}\ndependencies`, [
        own ?? null,
        dependencyIdentity({ entries, byEntry }),
      ]);
      const key = createHash('sha256').update(known).digest('hex');
      const got = await store.checkout(base, key, `${source.url} ${packagePath}`, async (staging) => {
        // the whole commit: values files and symlinks of the chart name repository paths
        await cp(checkoutRoot, staging, {
          recursive: true,
          filter: (from) => from !== join(checkoutRoot, '.git'),
        });
        return buildDependencies(
          ctx,
          chart,
          join(staging, packagePath),
          config.ociMaxLayerBytes * 4,
          loopbackOci(needs.value.repositories) ? ['--plain-http'] : [],
          { entries, byEntry },
        );
      });
      if (!got.ok) return got;
      log.debug({ url: source.url, path: packagePath, commit }, 'chart dependencies fetched');
      const derived = { ...fetched.value, checkoutRoot: got.value };
      gitCheckout.set(derived, fetched.value);
      return ok(derived);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  }

  function remember(known: string, fetched: Result<FetchedSource>): Result<FetchedSource> {
    if (complete.size >= MAX_KNOWN_COMPLETE) complete.clear();
    complete.add(known);
    return fetched;
  }

  return {
    ...git,
    fetch,
    ...(git.resolve
      ? {
          resolve: (source, credentials, signal) =>
            git.resolve!(source, splitDependencyCredentials(credentials).own, signal),
        }
      : {}),
    ...(git.verify
      ? {
          verify: (source, fetched, keys, credentials, signal) =>
            git.verify!(
              source,
              gitCheckout.get(fetched) ?? fetched,
              keys,
              splitDependencyCredentials(credentials).own,
              signal,
            ),
        }
      : {}),
  };
}

async function readChartYaml(chartDir: string): Promise<unknown> {
  const file = join(chartDir, 'Chart.yaml');
  const size = (await stat(file).catch(() => undefined))?.size;
  if (size === undefined || size > MAX_CHART_YAML_BYTES) return undefined;
  try {
    return parse(await readFile(file, 'utf8'), { maxAliasCount: 100 });
  } catch {
    return undefined;
  }
}

/** `--plain-http` for OCI dependencies on loopback (tests), as spec.source.chart.insecure does for the chart. */
function loopbackOci(repositories: readonly string[]): boolean {
  return repositories.some((r) => {
    if (!r.startsWith('oci://')) return false;
    const parsed = parseOciRepository(r.replace(/\/+$/, ''));
    return parsed.ok && isLoopback(parsed.value.host);
  });
}
