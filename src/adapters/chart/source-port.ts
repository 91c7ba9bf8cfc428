import { createHash } from 'node:crypto';
import { cp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { durationMs, type Spec } from '../../api/packagesync.ts';
import { Reason } from '../../api/reasons.ts';
import type { ControllerConfig } from '../../config/controller-config.ts';
import {
  chartAuthFromSecret,
  checkChartSource,
  formatChartRevision,
  type CheckedChartSource,
} from '../../core/chart/chart-source.ts';
import { checkEntries, splitDependencyCredentials } from '../../core/chart/dependency-credentials.ts';
import {
  combinedRevision,
  PROVENANCE_CREDENTIALS_PREFIX,
  splitCredentials,
  VALUES_DIR,
} from '../../core/chart/values-source.ts';
import { fail, ok, type Result } from '../../core/failure.ts';
import { registryAuthFromSecret } from '../../core/oci/credentials.ts';
import type { FetchedSource, SourcePort } from '../git/source-port.ts';
import { createCheckoutStore, type CheckoutStore } from '../oci/checkout-store.ts';
import { unpackLayer } from '../oci/extract.ts';
import { makeToolHome } from '../render/run-tool.ts';
import { buildDependencies } from './dependencies.ts';
import type { DependencyAuth } from './dependency-auth.ts';
import { pullFromIndex, pullFromRegistry, type PullContext, type Pulled } from './helm-pull.ts';

/**
 * The engine's SourcePort for spec.source.chart (docs/adr/0041): the pinned helm resolves the version and pulls
 * the archive (helm-pull.ts: from an HTTP repository's index, or an OCI registry's tags) in a private HOME
 * whose repositories.yaml / registry config alone carries the credentials, under render-sandbox with TCP to
 * the repository's port only. The archive is hashed (the revision: `<version>@sha256:<hex>`, for OCI the
 * manifest digest), its entries checked, and unpacked once per digest into the shared checkout store (inside
 * the git cache root, so its bounds cover it). The package is the chart directory inside: rendered as a chart
 * in git is (spec.helm).
 */
export type ChartSourceConfig = Pick<ControllerConfig, 'gitCacheDir' | 'gitTimeout' | 'ociMaxLayerBytes'> &
  Partial<Pick<ControllerConfig, 'gitCacheMaxBytes' | 'gitCacheMaxAge'>> & { helmPath: string };

export function createChartSource(
  config: ChartSourceConfig,
  log: Logger,
  store: CheckoutStore = createCheckoutStore(config),
  /** The git source that reads spec.source.chart.values (values beside the chart); without it they are refused. */
  git?: SourcePort,
): SourcePort {
  async function fetch(
    source: Spec['source'],
    allCredentials: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<Result<FetchedSource>> {
    const { chart: chartAndDependencies, values: valuesCredentials } = splitCredentials(allCredentials);
    const { own: withKeyring, byEntry } = splitDependencyCredentials(chartAndDependencies);
    const { own: credentials, keyring } = splitProvenance(withKeyring);
    if (source.chart?.verify !== undefined && (keyring === undefined || !/BEGIN PGP PUBLIC KEY BLOCK/.test(keyring)))
      return fail(
        Reason.InvalidAuthSecret,
        `Secret ${source.chart.verify.secretRef.name} named in spec.source.chart.verify.secretRef needs a key "keyring" holding armored public keys (gpg --export --armor)`,
        { terminal: true },
      );
    const entries = source.dependencyRepositories ?? [];
    const checkedEntries = checkEntries(entries);
    if (!checkedEntries.ok) return checkedEntries;
    const fetchedChart = await fetchChart(source, credentials, { entries, byEntry }, signal, keyring);
    const values = source.chart?.values;
    if (!fetchedChart.ok || values === undefined) return fetchedChart;
    return withValues(fetchedChart.value, source, values, valuesCredentials, signal);
  }

  /**
   * The chart beside a git repository of values (Argo CD multi-source `$values`): one read-only checkout per
   * (chart digest, commit) holding the chart and the repository under `$values/`, so spec.helm.valuesFiles
   * `$values/<path>` resolve inside it as any repository path does, and the revision names both.
   */
  async function withValues(
    chart: FetchedSource,
    source: Spec['source'],
    values: NonNullable<NonNullable<Spec['source']['chart']>['values']>,
    credentials: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<Result<FetchedSource>> {
    if (!git)
      return fail(Reason.InvalidSpec, 'spec.source.chart.values is not supported by this command', {
        terminal: true,
      });
    const gitSource = {
      url: values.url,
      ...(values.ref ? { ref: values.ref } : {}),
      path: '.',
      ...(values.secretRef ? { secretRef: values.secretRef } : {}),
    };
    const fetched = await git.fetch(gitSource, credentials, signal, { deferFiles: true });
    if (!fetched.ok)
      return {
        ok: false,
        failure: { ...fetched.failure, message: `spec.source.chart.values: ${fetched.failure.message}` },
      };
    const revision = combinedRevision(chart.revision, fetched.value.revision);
    const key = createHash('sha256').update(`${chart.commit}\n${fetched.value.commit}`).digest('hex');
    const base = await store.base(
      `${source.chart!.repository}\n${source.chart!.name}\nvalues ${values.url}`,
      allCredentialsIdentity(credentials, chart.checkoutRoot),
    );
    const got = await store.checkout(
      base,
      key,
      `${source.chart!.repository} ${source.chart!.name} + ${values.url}`,
      async (staging) => {
        await cp(join(chart.checkoutRoot, chart.packagePath), join(staging, chart.packagePath), { recursive: true });
        await cp(fetched.value.checkoutRoot, join(staging, VALUES_DIR), {
          recursive: true,
          filter: (from) => !/[/\\]\.git$/.test(from),
        });
        return ok(undefined);
      },
    );
    if (!got.ok) return got;
    return ok({ ...chart, revision, commit: `sha256:${key}`, checkoutRoot: got.value });
  }

  async function fetchChart(
    source: Spec['source'],
    credentials: Record<string, string> | undefined,
    dependencyAuth: DependencyAuth,
    signal: AbortSignal,
    keyring?: string,
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

    const home = await makeToolHome();
    try {
      const ctx: PullContext = {
        helmPath: config.helmPath,
        home,
        timeoutMs: durationMs(config.gitTimeout),
        maxArchiveBytes: config.ociMaxLayerBytes,
        signal,
      };
      if (keyring !== undefined) {
        ctx.keyring = join(home, 'config', 'helm', 'keyring.asc');
        await writeFile(ctx.keyring, keyring, { mode: 0o600 });
      }
      let pulled: Result<Pulled>;
      let identity: readonly unknown[] | undefined;
      if (chart.kind === 'oci') {
        const auth = registryAuthFromSecret(credentials, chart.host, secretName);
        if (!auth.ok) return auth;
        const a = auth.value;
        identity =
          a?.username !== undefined || a?.identityToken !== undefined
            ? [a.username, a.password, a.identityToken]
            : undefined;
        pulled = await pullFromRegistry(ctx, chart, a);
      } else {
        const auth = chartAuthFromSecret(credentials, secretName);
        if (!auth.ok) return auth;
        identity = auth.value.username !== undefined ? [auth.value.username, auth.value.password] : undefined;
        // the index is kept per repository and credentials, for conditional requests (index-fetch.ts)
        const indexBase = await store.base(`${chart.repository}\nindex.yaml`, identity);
        pulled = await pullFromIndex(ctx, chart, auth.value, join(indexBase, 'index'));
      }
      if (!pulled.ok) return pulled;
      const { file, version, manifestDigestHex, indexDigestHex } = pulled.value;
      const archiveHex = createHash('sha256')
        .update(await readFile(file))
        .digest('hex');
      if (indexDigestHex !== undefined && indexDigestHex !== archiveHex)
        return fail(
          Reason.ArtifactDigestMismatch,
          `chart ${chart.name} ${version} from ${chart.repository}: the archive hashes to sha256:${archiveHex} but the repository's index.yaml says sha256:${indexDigestHex}: nothing was applied; the archive was changed behind its index (publish it again with helm repo index)`,
          { terminal: true },
        );
      const revisionHex = manifestDigestHex ?? archiveHex;
      const revision = formatChartRevision(version, revisionHex);
      // a tenant whose credentials cannot read a private chart must not get another tenant's copy of it
      // nor its dependencies as another tenant's dependency credentials fetched them
      const base = await store.base(
        `${chart.repository}\n${chart.name}`,
        dependencyAuth.byEntry.size === 0 ? identity : [identity ?? null, dependencyIdentity(dependencyAuth)],
      );
      // dependencies are fetched once with the chart (Chart.lock pins them; without one, the ranges are resolved
      // when this chart digest is first fetched), into the same read-only checkout
      const got = await store.checkout(base, archiveHex, `${chart.repository} ${chart.name}`, async (staging) => {
        const unpacked = await unpackChart(file, staging, chart);
        if (!unpacked.ok) return unpacked;
        return buildDependencies(
          ctx,
          chart,
          join(staging, chart.name),
          config.ociMaxLayerBytes * 4,
          [...(source.chart?.insecure === true ? ['--plain-http'] : [])],
          dependencyAuth,
        );
      });
      if (!got.ok)
        return { ok: false, failure: { ...got.failure, message: `${got.failure.message} (revision ${revision})` } };
      const dir = got.value;
      if (!(await stat(join(dir, chart.name, 'Chart.yaml')).catch(() => undefined))?.isFile())
        return fail(
          Reason.RenderFailed,
          `chart ${chart.name} ${revision} from ${chart.repository} holds no ${chart.name}/Chart.yaml: the repository serves a broken archive`,
          { terminal: true },
        );
      log.debug({ repository: chart.repository, chart: chart.name, revision }, 'chart source fetched');
      return ok({ revision, commit: `sha256:${revisionHex}`, files: [], checkoutRoot: dir, packagePath: chart.name });
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  }

  /** The archive's entries checked, then unpacked into the store's staging directory. */
  async function unpackChart(file: string, staging: string, chart: CheckedChartSource): Promise<Result<void>> {
    try {
      return await unpackLayer(file, staging, `chart ${chart.name}`, config.ociMaxLayerBytes * 4);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      return fail(
        Reason.ArtifactMediaTypeUnsupported,
        `chart ${chart.name} from ${chart.repository}: the archive is not a readable gzip tarball (${typeof code === 'string' ? code : 'unreadable'})`,
        { terminal: true },
      );
    }
  }

  return { fetch };
}

/** The dependency repositories' credentials, as the store hashes an identity: entries and their Secrets. */
export function dependencyIdentity(auth: DependencyAuth): readonly unknown[] {
  return auth.entries.map((e, i) => [e.url, auth.byEntry.get(i) ?? null]);
}

/**
 * Who reads the combined checkout: the values repository's credentials (hashed by the store) and the chart
 * checkout it was made from (whose base already carries the chart credentials' identity).
 */
function allCredentialsIdentity(
  credentials: Record<string, string> | undefined,
  chartCheckout: string,
): readonly unknown[] {
  return [chartCheckout, credentials ?? null];
}

/** spec.source.chart.verify's keyring out of the record (PROVENANCE_CREDENTIALS_PREFIX), and the rest. */
function splitProvenance(data: Record<string, string> | undefined): {
  own: Record<string, string> | undefined;
  keyring: string | undefined;
} {
  if (data === undefined) return { own: undefined, keyring: undefined };
  const own: Record<string, string> = {};
  let keyring: string | undefined;
  for (const [k, v] of Object.entries(data)) {
    if (k === `${PROVENANCE_CREDENTIALS_PREFIX}keyring`) keyring = v;
    else if (!k.startsWith(PROVENANCE_CREDENTIALS_PREFIX)) own[k] = v;
  }
  return { own: Object.keys(own).length > 0 ? own : undefined, keyring };
}
