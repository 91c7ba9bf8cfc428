import { cp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { Reason } from '../../api/reasons.ts';
import type { CheckedChartSource } from '../../core/chart/chart-source.ts';
import { absentDependencies, dependencyNeeds } from '../../core/chart/dependencies.ts';
import { fail, ok, type Result } from '../../core/failure.ts';
import { writeDependencyAuth, type DependencyAuth } from './dependency-auth.ts';
import { describeHelmFetchFailure } from './fetch-failure.ts';
import { runHelm, type PullContext } from './helm-pull.ts';

/**
 * A chart (fetched, or in git) whose Chart.yaml names repositories gets its dependencies as `helm dependency
 * build` gets them (docs/adr/0041): the pinned helm, in the fetch's private HOME (whose repositories.yaml /
 * registry config give the chart's own repository its credentials, and each dependency repository that a
 * spec.source.dependencyRepositories entry covers that entry's: dependency-auth.ts), under the sandbox with TCP to
 * the dependencies' repository ports only. Chart.lock's versions are used when present, and a lock out of
 * sync with Chart.yaml (its digest) is refused. Conditions and aliases are applied by `helm template` itself.
 * Only when `helm dependency list` reports one absent from charts/: a chart that bundles them is not fetched.
 *
 * `chartDir` is the unpacked chart in the checkout store's staging directory; helm builds in a copy inside its
 * HOME (the only place its sandbox may write), and charts/ is copied back.
 */
export async function buildDependencies(
  ctx: PullContext,
  /** The chart's name and where it came from, for messages. */
  chart: Pick<CheckedChartSource, 'name' | 'repository'>,
  chartDir: string,
  maxBytes: number,
  extraFlags: string[],
  auth?: DependencyAuth,
): Promise<Result<void>> {
  let chartYaml: unknown;
  try {
    chartYaml = parse(await readFile(join(chartDir, 'Chart.yaml'), 'utf8'), { maxAliasCount: 100 });
  } catch {
    return ok(undefined); // no readable Chart.yaml: the source reports the broken archive
  }
  const needs = dependencyNeeds(chartYaml, chart.name);
  if (needs.ok && !needs.value.remote) return ok(undefined);
  const what = `building the dependencies of chart ${chart.name} from ${chart.repository}`;
  const listed = await runHelm(ctx, ['dependency', 'list', chartDir], [], '', [chartDir]);
  if (!listed.ok) return describeHelmFetchFailure(what, listed, ctx.helmPath);
  if (absentDependencies(listed.stdout).length === 0) return ok(undefined);
  // a repository PackageSync cannot fetch from (an alias, plain http off loopback) matters only when it is used
  if (!needs.ok) return needs;

  const written = await writeDependencyAuth(ctx.home, needs.value.repositories, auth);
  if (!written.ok) return written;
  const work = join(ctx.home, 'dependencies', chart.name);
  await cp(chartDir, work, { recursive: true });
  const built = await runHelm(ctx, ['dependency', 'build', work, ...extraFlags], needs.value.ports);
  if (!built.ok) {
    if (/lock file \(Chart\.lock\) is out of sync/i.test(built.stderr))
      return fail(
        Reason.ArtifactDigestMismatch,
        `${what}: Chart.lock does not match Chart.yaml (its digest is of other dependencies): nothing was fetched or applied; run helm dependency update and publish the chart again`,
        { terminal: true },
      );
    return describeHelmFetchFailure(what, built, ctx.helmPath);
  }
  const charts = join(work, 'charts');
  let bytes = 0;
  for (const file of await readdir(charts).catch(() => [] as string[])) bytes += (await stat(join(charts, file))).size;
  if (bytes > maxBytes)
    return fail(
      Reason.ArtifactTooLarge,
      `${what}: the dependencies are ${bytes} bytes, over the controller's --oci-max-layer-bytes ${maxBytes}`,
      { terminal: true },
    );
  // helm keeps what it fetched as archives in charts/; `helm template` loads them with its own checks
  await rm(join(chartDir, 'charts'), { recursive: true, force: true });
  await cp(charts, join(chartDir, 'charts'), { recursive: true });
  const lock = join(work, 'Chart.lock');
  if (await stat(lock).catch(() => undefined)) await cp(lock, join(chartDir, 'Chart.lock'));
  return ok(undefined);
}
