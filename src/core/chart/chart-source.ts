import type { ChartSource } from '../../api/chart-source.ts';
import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../failure.ts';
import type { RegistryAuth } from '../oci/credentials.ts';
import { isLoopback, parseOciRepository } from '../oci/reference.ts';

/**
 * spec.source.chart checked before anything reaches helm (docs/adr/0041): the repository URL (https, or http
 * only for a loopback host with insecure), the chart name (one path component, as in a repository index) and
 * the version (an exact version or a semver range: Helm itself resolves it; here only characters are checked
 * so nothing but a version reaches helm's argv).
 */
export interface CheckedChartSource {
  /** An HTTP repository (index.yaml) or an OCI registry (oci://host/path: the chart is `<path>/<name>`). */
  kind: 'http' | 'oci';
  /** The repository URL without a trailing slash, as messages and the cache key use it. */
  repository: string;
  /** host[:port] lower-cased: credentials go only there. */
  host: string;
  /** The TCP port the fetch may connect to (the only one its sandbox allows). */
  port: number;
  name: string;
  /** '*' when unset: Helm's "newest stable version". */
  version: string;
  /** OCI only: `oci://host/path/name`, what `helm pull` is given. */
  chartRef?: string;
  /** OCI only: plain http (`helm pull --plain-http`), a loopback registry with insecure. */
  plainHttp?: boolean;
}

// a chart name as `helm create` and repository indexes allow it; no slashes, so it is never a path
const CHART_NAME = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,252}$/;
// what a Masterminds semver constraint is made of: versions, operators, wildcards, ||, commas, spaces
// (never a leading '-': it would read as a flag)
const VERSION = /^[0-9a-zA-Z.*^~<>=!|,+ ][0-9a-zA-Z.*^~<>=!|,+ -]{0,254}$/;

const invalidURL = (raw: string, why: string) =>
  fail<never>(
    Reason.InvalidURL,
    `spec.source.chart.repository ${JSON.stringify(raw.slice(0, 200))} ${why}: write https://host/path of the repository (its index.yaml's directory)`,
    { terminal: true },
  );

export function checkChartSource(chart: ChartSource): Result<CheckedChartSource> {
  const raw = chart.repository;
  if (raw.startsWith('oci://')) return checkOciChartSource(chart);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return invalidURL(raw, 'is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return invalidURL(raw, 'is neither https:// nor http://');
  if (url.username !== '' || url.password !== '')
    return invalidURL(raw, 'carries credentials; put them in the Secret spec.source.chart.secretRef names');
  if (url.search !== '' || url.hash !== '') return invalidURL(raw, 'has a query or fragment');
  const host = url.host.toLowerCase();
  const loopback = isLoopback(host);
  if (url.protocol === 'http:' && !(chart.insecure === true && loopback))
    return fail(
      Reason.InvalidURL,
      chart.insecure === true
        ? `spec.source.chart.insecure is allowed only for a loopback repository, not ${host}: serve the repository over https`
        : `spec.source.chart.repository ${JSON.stringify(raw.slice(0, 200))} is plain http: use https (insecure: true is accepted for loopback hosts only)`,
      { terminal: true },
    );
  const named = checkNameAndVersion(chart);
  if (!named.ok) return named;
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const repository = `${url.protocol}//${host}${url.pathname.replace(/\/+$/, '')}`;
  return ok({ kind: 'http', repository, host, port, ...named.value });
}

function checkNameAndVersion(chart: ChartSource): Result<{ name: string; version: string }> {
  if (!CHART_NAME.test(chart.name))
    return fail(
      Reason.InvalidSpec,
      `spec.source.chart.name ${JSON.stringify(chart.name.slice(0, 100))} is not a chart name: letters, digits, '.', '_', '-', no '/'`,
      { terminal: true },
    );
  const version = (chart.version ?? '*').trim();
  if (!VERSION.test(version))
    return fail(
      Reason.InvalidRef,
      `spec.source.chart.version ${JSON.stringify(version.slice(0, 100))} is neither a version nor a semver range (e.g. 1.2.3, 1.x, ">=1.2 <2")`,
      { terminal: true },
    );
  return ok({ name: chart.name, version });
}

/**
 * `oci://host/path` (Flux's HelmRepository `type: oci` url; Argo CD's repoURL without the scheme): the chart
 * is the OCI repository `<path>/<name>`, its versions are that repository's tags (Helm resolves a range against
 * them). https on the registry's port, or plain http for a loopback registry with insecure.
 */
function checkOciChartSource(chart: ChartSource): Result<CheckedChartSource> {
  const named = checkNameAndVersion(chart);
  if (!named.ok) return named;
  const trimmed = chart.repository.replace(/\/+$/, '');
  const parsed = parseOciRepository(`${trimmed}/${chart.name}`);
  if (!parsed.ok)
    return fail(
      Reason.InvalidURL,
      `spec.source.chart.repository ${JSON.stringify(chart.repository.slice(0, 200))} with chart ${JSON.stringify(chart.name.slice(0, 100))} is not an OCI repository: write oci://host/path (lower-case; the chart name is appended), no tag, no credentials`,
      { terminal: true },
    );
  const { host, loopback, url } = parsed.value;
  if (chart.insecure === true && !loopback)
    return fail(
      Reason.InvalidURL,
      `spec.source.chart.insecure is allowed only for a loopback registry, not ${host}: serve the registry over https`,
      { terminal: true },
    );
  const port = /:([0-9]+)$/.exec(host)?.[1];
  return ok({
    kind: 'oci',
    repository: url.slice(0, -(chart.name.length + 1)),
    host,
    port: port !== undefined ? Number(port) : chart.insecure === true ? 80 : 443,
    ...named.value,
    chartRef: url,
    ...(chart.insecure === true ? { plainHttp: true } : {}),
  });
}

/**
 * The manifest digest `helm pull oci://…` reports on stdout (`Digest: sha256:…`): the revision of an OCI
 * chart, as Flux's OCIRepository shows `tag@sha256:<manifest digest>`.
 */
export function manifestDigestFromPull(stdout: string): string | undefined {
  return /^Digest: sha256:([0-9a-f]{64})\s*$/m.exec(stdout)?.[1];
}

/**
 * The run's private registry config (HELM_REGISTRY_CONFIG, a docker config.json, written 0600): the only place
 * OCI credentials reach helm, for the registry's host alone.
 */
export function registryConfigFile(host: string, auth: RegistryAuth | undefined): string {
  const entry: Record<string, string> = {};
  if (auth?.username !== undefined)
    entry.auth = Buffer.from(`${auth.username}:${auth.password ?? ''}`, 'utf8').toString('base64');
  if (auth?.identityToken !== undefined) entry.identitytoken = auth.identityToken;
  return JSON.stringify({ auths: Object.keys(entry).length > 0 ? { [host]: entry } : {} });
}

/** Flux's `tag@sha256:` form, with the chart version as the tag (docs/adr/0041). */
export function formatChartRevision(version: string, digestHex: string): string {
  return `${version}@sha256:${digestHex}`;
}

/**
 * The version helm pulled, read off the archive's name (`<name>-<version>.tgz`, as helm writes it); undefined
 * when the file is not named for this chart.
 */
export function versionFromArchive(file: string, name: string): string | undefined {
  if (!file.startsWith(`${name}-`) || !file.endsWith('.tgz')) return undefined;
  const version = file.slice(name.length + 1, -'.tgz'.length);
  return /^v?[0-9]+\.[0-9]+\.[0-9]+[0-9A-Za-z.+-]*$/.test(version) ? version : undefined;
}

/**
 * The run's private repositories.yaml (HELM_REPOSITORY_CONFIG, written 0600): the only place credentials reach
 * helm. JSON is YAML, and helm reads this file with sigs.k8s.io/yaml. pass_credentials_all stays false: helm
 * sends them only to the repository's host, never to a chart URL on another host.
 */
export function repositoriesFile(
  alias: string,
  repository: string,
  auth: { username?: string; password?: string; caFile?: string },
): string {
  const entry: Record<string, unknown> = {
    name: alias,
    url: repository,
    pass_credentials_all: false,
    insecure_skip_tls_verify: false,
  };
  if (auth.username !== undefined) entry.username = auth.username;
  if (auth.password !== undefined) entry.password = auth.password;
  if (auth.caFile !== undefined) entry.caFile = auth.caFile;
  return JSON.stringify({ apiVersion: '', generated: '0001-01-01T00:00:00Z', repositories: [entry] });
}

/** username/password (and ca.crt) of the Secret secretRef names, as Flux's HelmRepository reads them. */
export function chartAuthFromSecret(
  data: Record<string, string> | undefined,
  secretName: string,
  field = 'spec.source.chart',
): Result<{ username?: string; password?: string; ca?: string }> {
  if (data === undefined) return ok({});
  const { username, password } = data;
  const ca = data['ca.crt'];
  if ((username === undefined) !== (password === undefined) || (username === undefined && data.bearerToken))
    return fail(
      Reason.InvalidAuthSecret,
      `Secret ${secretName} for ${field} needs both username and password (Helm chart repositories take basic auth; bearerToken is not supported)`,
      { terminal: true },
    );
  return ok({
    ...(username !== undefined ? { username, password } : {}),
    ...(ca !== undefined && ca !== '' ? { ca } : {}),
  });
}

/**
 * The sha256 the repository's index.yaml (as helm downloaded it for `helm repo update`) gives for the version
 * helm pulled, or undefined when its entry carries none. Helm resolved the version and fetched the archive;
 * this only looks up that one entry, so an archive changed behind its index (a tampered or republished .tgz)
 * is refused rather than applied: helm pull itself does not compare them.
 */
export function indexDigestFor(index: unknown, name: string, version: string): string | undefined {
  const entries = (index as { entries?: Record<string, unknown> } | null)?.entries?.[name];
  if (!Array.isArray(entries)) return undefined;
  const bare = (v: unknown) => (typeof v === 'string' ? v.replace(/^v/, '') : undefined);
  const entry = entries.find((e) => bare((e as { version?: unknown } | null)?.version) === bare(version)) as
    { digest?: unknown } | undefined;
  return typeof entry?.digest === 'string' && /^[0-9a-f]{64}$/.test(entry.digest) ? entry.digest : undefined;
}
