import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../failure.ts';
import { isLoopback, parseOciRepository } from '../oci/reference.ts';

/**
 * What a fetched chart's dependencies need before `helm dependency build` may run (docs/adr/0041): the TCP
 * ports of the repositories its Chart.yaml names (the fetch's sandbox allows those alone), checked as
 * spec.source.chart.repository is (https, or http / plain-http OCI only on loopback; no credentials in the
 * URL). Which versions match and what is downloaded stays Helm's: nothing here reads an index or a lock.
 */
export interface DependencyNeeds {
  /** True when some dependency comes from a repository (not file:// or bundled). */
  remote: boolean;
  /** The ports `helm dependency build` may connect to. */
  ports: number[];
  /** The distinct repository URLs named (as written): each gets the credentials its entry gives, if any. */
  repositories: string[];
}

const refuse = (chart: string, why: string) =>
  fail<never>(Reason.RenderFailed, `chart ${chart}: Chart.yaml ${why}`, { terminal: true });

export function dependencyNeeds(chartYaml: unknown, chart: string): Result<DependencyNeeds> {
  const deps = (chartYaml as { dependencies?: unknown } | null)?.dependencies;
  if (deps === undefined || deps === null) return ok({ remote: false, ports: [], repositories: [] });
  if (!Array.isArray(deps)) return refuse(chart, 'has dependencies that are not a list');
  const ports = new Set<number>();
  const repositories = new Set<string>();
  for (const [i, dep] of deps.entries()) {
    const name = (dep as { name?: unknown } | null)?.name;
    const repository = (dep as { repository?: unknown } | null)?.repository ?? '';
    if (typeof name !== 'string' || name === '') return refuse(chart, `dependencies[${i}] has no name`);
    if (typeof repository !== 'string')
      return refuse(chart, `dependencies[${i}] (${name}) has a repository that is not a string`);
    if (repository === '' || repository.startsWith('file://')) continue;
    const port = repositoryPort(repository);
    if (!port.ok) return refuse(chart, `dependencies[${i}] (${name}): ${port.failure.message}`);
    ports.add(port.value);
    repositories.add(repository);
  }
  return ok({ remote: ports.size > 0, ports: [...ports].sort((a, b) => a - b), repositories: [...repositories] });
}

function repositoryPort(raw: string): Result<number> {
  if (raw.startsWith('@') || raw.startsWith('alias:'))
    return fail(
      Reason.RenderFailed,
      `repository ${JSON.stringify(raw.slice(0, 100))} names a repository by alias, which needs a helm repositories.yaml PackageSync does not keep: write the repository URL`,
    );
  if (raw.startsWith('oci://')) {
    const parsed = parseOciRepository(raw.replace(/\/+$/, ''));
    if (!parsed.ok)
      return fail(Reason.RenderFailed, `repository ${JSON.stringify(raw.slice(0, 200))} is not oci://host/path`);
    const port = /:([0-9]+)$/.exec(parsed.value.host)?.[1];
    return ok(port !== undefined ? Number(port) : 443);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail(Reason.RenderFailed, `repository ${JSON.stringify(raw.slice(0, 200))} is not a URL`);
  }
  if (url.username !== '' || url.password !== '')
    return fail(Reason.RenderFailed, 'repository carries credentials in its URL');
  if (url.protocol === 'http:' && !isLoopback(url.host))
    return fail(Reason.RenderFailed, `repository ${url.host} is plain http: only https is fetched (http on loopback)`);
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return fail(
      Reason.RenderFailed,
      `repository ${JSON.stringify(raw.slice(0, 200))} is neither https://, oci:// nor file://`,
    );
  return ok(url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80);
}

/**
 * The dependencies `helm dependency list` reports as not in charts/ (its STATUS column: `ok` and `unpacked`
 * are present; `missing`, `wrong version`, `misnamed`… are not): helm builds them only when one is absent, so
 * a published chart that bundles its dependencies (the usual) is never fetched twice.
 */
export function absentDependencies(listing: string): string[] {
  const absent: string[] = [];
  for (const line of listing.split('\n').slice(1)) {
    const columns = line.split('\t').map((c) => c.trim());
    if (columns.length < 4 || columns[0] === '') continue;
    const status = columns[columns.length - 1]!;
    if (status !== 'ok' && status !== 'unpacked') absent.push(`${columns[0]} (${status})`);
  }
  return absent;
}
