import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { durationMs, type Spec } from '../../api/packagesync.ts';
import { Reason } from '../../api/reasons.ts';
import type { ControllerConfig } from '../../config/controller-config.ts';
import {
  chartAuthFromSecret,
  checkChartSource,
  formatChartRevision,
  repositoriesFile,
  versionFromArchive,
  type CheckedChartSource,
} from '../../core/chart/chart-source.ts';
import { fail, ok, type Result } from '../../core/failure.ts';
import { loadFingerprintKey } from '../git/auth.ts';
import { exists, makeReadOnly, removeTree, STAGING_PREFIX } from '../git/cache.ts';
import { chooseEvictions, listCache } from '../git/evict.ts';
import type { FetchedSource, SourcePort } from '../git/source-port.ts';
import { unpackLayer } from '../oci/extract.ts';
import { makeToolHome, runTool, type ToolOutcome } from '../render/run-tool.ts';
import { describeHelmFetchFailure } from './fetch-failure.ts';

/**
 * The engine's SourcePort for spec.source.chart (docs/adr/0041): the pinned helm resolves the version and pulls
 * the archive (`helm repo update`, `helm pull <repo>/<chart> --version=<range>`) in a private HOME whose
 * repositories.yaml alone carries the credentials, under render-sandbox with TCP to the repository's port only.
 * The archive is hashed (the revision: `<version>@sha256:<hex>`), its entries checked, and unpacked once per
 * digest into the git cache root (`<root>/<key>/checkouts/<hex>`, so the git cache's bounds cover it). The
 * package is the chart directory inside: rendered as a chart in git is (spec.helm).
 */
export type ChartSourceConfig = Pick<ControllerConfig, 'gitCacheDir' | 'gitTimeout' | 'ociMaxLayerBytes'> &
  Partial<Pick<ControllerConfig, 'gitCacheMaxBytes' | 'gitCacheMaxAge'>> & { helmPath: string };

/** A checkout used this recently may be in use (a render reading it): eviction never removes it. */
const IN_USE_MS = 5 * 60_000;
const EVICTION_EVERY_MS = 30_000;

/** The repository's name inside the run's private repositories.yaml. */
const ALIAS = 'source';
/** What a fetch over the network may read besides its HOME: name resolution and the system CA bundle. */
const NETWORK_READS = [
  '/etc/resolv.conf',
  '/etc/hosts',
  '/etc/nsswitch.conf',
  '/etc/ssl',
  '/etc/pki',
  '/etc/ca-certificates',
  '/usr/share/ca-certificates',
];

export function createChartSource(config: ChartSourceConfig, log: Logger): SourcePort {
  const root = config.gitCacheDir;
  const inFlight = new Map<string, Promise<Result<void>>>();
  let fingerprintKey: Promise<Buffer> | undefined;
  let lastEviction = 0;
  /** Cache bases holding chart checkouts (this process's; a restart leaves older ones to the git eviction). */
  const chartBases = new Set<string>();

  async function cacheBase(chart: CheckedChartSource, auth: { username?: string; password?: string }): Promise<string> {
    // a tenant whose credentials cannot read a private chart must not get another tenant's copy of it
    const key = await (fingerprintKey ??= loadFingerprintKey(root));
    const who =
      auth.username !== undefined
        ? createHmac('sha256', key)
            .update(JSON.stringify([auth.username, auth.password]))
            .digest('hex')
        : 'anonymous';
    return join(
      root,
      createHash('sha256').update(`${chart.repository}\n${chart.name}\n${who}`).digest('hex').slice(0, 32),
    );
  }

  async function fetch(
    source: Spec['source'],
    credentials: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<Result<FetchedSource>> {
    if (!source.chart) return fail(Reason.InvalidSpec, 'spec.source.chart is not set', { terminal: true });
    if ((source.path ?? '.') !== '.' || source.ref !== undefined || source.secretRef !== undefined)
      return fail(
        Reason.InvalidSpec,
        'spec.source.path, ref and secretRef are for git: a chart source is the chart itself (set chart.version, chart.secretRef)',
        { terminal: true },
      );
    const checked = checkChartSource(source.chart);
    if (!checked.ok) return checked;
    const chart = checked.value;
    const secretName = source.chart.secretRef?.name ?? source.chart.certSecretRef?.name ?? '';
    const auth = chartAuthFromSecret(credentials, secretName);
    if (!auth.ok) return auth;

    const home = await makeToolHome();
    try {
      const pulled = await pull(chart, auth.value, home, signal);
      if (!pulled.ok) return pulled;
      const { file, version } = pulled.value;
      const digestHex = createHash('sha256')
        .update(await readFile(file))
        .digest('hex');
      const revision = formatChartRevision(version, digestHex);
      const base = await cacheBase(chart, auth.value);
      chartBases.add(base);
      const dir = join(base, 'checkouts', digestHex);
      let unpacked = inFlight.get(dir);
      if (!unpacked) {
        unpacked = materialise(file, base, dir, chart).finally(() => inFlight.delete(dir));
        inFlight.set(dir, unpacked);
      }
      const got = await unpacked;
      if (!got.ok)
        return { ok: false, failure: { ...got.failure, message: `${got.failure.message} (revision ${revision})` } };
      // the eviction of the git cache reads a checkout's mtime as its last use
      const now = new Date();
      await utimes(dir, now, now).catch(() => undefined);
      if (!(await stat(join(dir, chart.name, 'Chart.yaml')).catch(() => undefined))?.isFile())
        return fail(
          Reason.RenderFailed,
          `chart ${chart.name} ${revision} from ${chart.repository} holds no ${chart.name}/Chart.yaml: the repository serves a broken archive`,
          { terminal: true },
        );
      log.debug({ repository: chart.repository, chart: chart.name, revision }, 'chart source fetched');
      scheduleEviction();
      return ok({ revision, commit: `sha256:${digestHex}`, files: [], checkoutRoot: dir, packagePath: chart.name });
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  }

  /** `helm repo update` then `helm pull`, in the private HOME: the archive's path and the version helm chose. */
  async function pull(
    chart: CheckedChartSource,
    auth: { username?: string; password?: string; ca?: string },
    home: string,
    signal: AbortSignal,
  ): Promise<Result<{ file: string; version: string }>> {
    const helmDir = join(home, 'config', 'helm');
    let caFile: string | undefined;
    if (auth.ca !== undefined) {
      caFile = join(helmDir, 'ca.crt');
      await writeFile(caFile, auth.ca, { mode: 0o600 });
    }
    await writeFile(
      join(helmDir, 'repositories.yaml'),
      repositoriesFile(ALIAS, chart.repository, { ...auth, ...(caFile ? { caFile } : {}) }),
      { mode: 0o600 },
    );
    const destination = join(home, 'pulled');
    await mkdir(destination, { mode: 0o700 });
    const timeoutMs = durationMs(config.gitTimeout);
    const run = (args: string[]): Promise<ToolOutcome> =>
      runTool({
        bin: config.helmPath,
        args,
        cwd: '',
        home,
        connect: [chart.port],
        reads: NETWORK_READS,
        timeoutMs,
        maxOutputBytes: 1 << 20,
        signal,
        hidePaths: [],
        stdoutOnFailure: true,
      });
    const what = `fetching chart ${chart.name} ${chart.version} from ${chart.repository}`;
    const updated = await run(['repo', 'update', ALIAS]);
    if (!updated.ok) return describeHelmFetchFailure(what, updated, config.helmPath);
    const pulled = await run([
      'pull',
      `${ALIAS}/${chart.name}`,
      `--version=${chart.version}`,
      '--destination',
      destination,
    ]);
    if (!pulled.ok) return describeHelmFetchFailure(what, pulled, config.helmPath);
    const files = (await readdir(destination)).filter((f) => f.endsWith('.tgz'));
    const version = files.length === 1 ? versionFromArchive(files[0]!, chart.name) : undefined;
    if (version === undefined)
      return fail(
        Reason.FetchFailed,
        `${what}: helm pulled ${files.length} archives, not one named ${chart.name}-<version>.tgz`,
      );
    const file = join(destination, files[0]!);
    const size = (await stat(file)).size;
    if (size > config.ociMaxLayerBytes)
      return fail(
        Reason.ArtifactTooLarge,
        `${what}: the archive of ${version} is ${size} bytes, over the controller's --oci-max-layer-bytes ${config.ociMaxLayerBytes}`,
        { terminal: true },
      );
    return ok({ file, version });
  }

  async function materialise(
    file: string,
    base: string,
    dir: string,
    chart: CheckedChartSource,
  ): Promise<Result<void>> {
    if (await exists(dir)) return ok(undefined);
    const checkouts = join(base, 'checkouts');
    await mkdir(checkouts, { recursive: true });
    await writeFile(join(base, 'url'), `${chart.repository} ${chart.name}\n`);
    const staging = join(checkouts, `${STAGING_PREFIX}${randomBytes(6).toString('hex')}`);
    try {
      await mkdir(staging, { recursive: true });
      let unpacked: Result<void>;
      try {
        unpacked = await unpackLayer(file, staging, `chart ${chart.name}`, config.ociMaxLayerBytes * 4);
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        return fail(
          Reason.ArtifactMediaTypeUnsupported,
          `chart ${chart.name} from ${chart.repository}: the archive is not a readable gzip tarball (${typeof code === 'string' ? code : 'unreadable'})`,
          { terminal: true },
        );
      }
      if (!unpacked.ok) return unpacked;
      await makeReadOnly(staging);
      try {
        await rename(staging, dir);
      } catch (err) {
        if (!(await exists(dir))) throw err; // else: another process unpacked the same digest first
      }
      return ok(undefined);
    } finally {
      if (await exists(staging)) await removeTree(staging);
    }
  }

  /** The git cache's own eviction rules, over the chart checkouts (as the OCI source does for its own). */
  function scheduleEviction(): void {
    if (config.gitCacheMaxBytes === undefined || Date.now() - lastEviction < EVICTION_EVERY_MS) return;
    lastEviction = Date.now();
    const policy = {
      maxBytes: config.gitCacheMaxBytes,
      maxIdleMs: config.gitCacheMaxAge === undefined ? Number.MAX_SAFE_INTEGER : durationMs(config.gitCacheMaxAge),
      minIdleMs: IN_USE_MS,
    };
    void (async () => {
      const all = await listCache(root, new Map());
      const charts = all.filter((e) => e.kind === 'checkout' && chartBases.has(e.base));
      for (const entry of chooseEvictions(charts, policy, Date.now())) await removeTree(entry.path);
    })().catch(() => undefined);
  }

  return { fetch };
}
