import { copyFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { Reason } from '../../api/reasons.ts';
import {
  indexDigestFor,
  manifestDigestFromPull,
  registryConfigFile,
  repositoriesFile,
  versionFromArchive,
  type CheckedChartSource,
} from '../../core/chart/chart-source.ts';
import { fail, ok, type Result } from '../../core/failure.ts';
import type { RegistryAuth } from '../../core/oci/credentials.ts';
import { runTool, type ToolOutcome } from '../render/run-tool.ts';
import { describeHelmFetchFailure } from './fetch-failure.ts';
import { fetchIndex } from './index-fetch.ts';

/**
 * The pinned helm fetching a chart archive (docs/adr/0041): Helm resolves the version (a range against an
 * index.yaml, or against an OCI repository's tags) and downloads the archive; nothing here parses an index
 * or an OCI chart layout. Every run is in the fetch's private HOME, whose repositories.yaml / registry config
 * alone carry the credentials, under render-sandbox with TCP to the repository's port only.
 */
export interface Pulled {
  /** The archive helm wrote. */
  file: string;
  version: string;
  /** OCI: the manifest digest helm reported (hex), the revision's digest as Flux shows OCI charts. */
  manifestDigestHex?: string;
  /** HTTP: the digest the index gives this version (hex), when it gives one: the archive must match it. */
  indexDigestHex?: string;
}

/** index-fetch.ts bounds the index as downloaded; this bounds what is parsed again here. */
const MAX_INDEX_BYTES = 64 << 20;

export interface PullContext {
  helmPath: string;
  home: string;
  timeoutMs: number;
  maxArchiveBytes: number;
  signal: AbortSignal;
  /** spec.source.chart.verify: the keyring file `helm pull --verify` checks the provenance against. */
  keyring?: string;
}

/** `helm pull --verify --keyring`: Helm's own provenance check (helm verify), never one of ours. */
function verifyFlags(ctx: PullContext): string[] {
  return ctx.keyring === undefined ? [] : ['--verify', '--keyring', ctx.keyring];
}

/** What helm says when the provenance is missing, unsigned by the keyring, or names another digest. */
const PROVENANCE_REFUSED = /prov|signature|openpgp|keyring|sha256 sum does not match|digest/i;

/** The repository's name inside the run's private repositories.yaml. */
export const ALIAS = 'source';
/** What a fetch over the network may read besides its HOME: name resolution and the system CA bundle. */
export const NETWORK_READS = [
  '/etc/resolv.conf',
  '/etc/hosts',
  '/etc/nsswitch.conf',
  '/etc/ssl',
  '/etc/pki',
  '/etc/ca-certificates',
  '/usr/share/ca-certificates',
];

/** helm in the fetch's HOME, allowed to connect to `ports` only. */
export function runHelm(ctx: PullContext, args: string[], ports: number[], cwd = '', reads: string[] = []) {
  return runTool({
    bin: ctx.helmPath,
    args,
    cwd,
    home: ctx.home,
    connect: ports,
    reads: [...NETWORK_READS, ...reads],
    timeoutMs: ctx.timeoutMs,
    maxOutputBytes: 1 << 20,
    signal: ctx.signal,
    hidePaths: cwd === '' ? [] : [{ path: cwd, as: '' }],
    stdoutOnFailure: true,
  });
}

/** The index (index-fetch.ts) into helm's cache, then `helm pull <alias>/<chart> --version`: helm resolves the version. */
export async function pullFromIndex(
  ctx: PullContext,
  chart: CheckedChartSource,
  auth: { username?: string; password?: string; ca?: string },
  /** Where this repository's index is kept between fetches (per repository and credentials). */
  indexCacheDir: string,
): Promise<Result<Pulled>> {
  const helmDir = join(ctx.home, 'config', 'helm');
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
  const what = `fetching chart ${chart.name} ${chart.version} from ${chart.repository}`;
  // the index: downloaded by index-fetch.ts (conditional, bounded), placed where `helm repo update` would put it
  const fetched = await fetchIndex(chart.repository, auth, indexCacheDir, {
    maxBytes: ctx.maxArchiveBytes,
    timeoutMs: ctx.timeoutMs,
    signal: ctx.signal,
  });
  if (!fetched.ok)
    return { ok: false, failure: { ...fetched.failure, message: `${what}: ${fetched.failure.message}` } };
  const indexFile = join(ctx.home, 'cache', 'helm', 'repository', `${ALIAS}-index.yaml`);
  await mkdir(dirname(indexFile), { recursive: true, mode: 0o700 });
  await copyFile(fetched.value.file, indexFile);
  const destination = await destinationDir(ctx);
  const pulled = await runHelm(
    ctx,
    ['pull', `${ALIAS}/${chart.name}`, `--version=${chart.version}`, '--destination', destination, ...verifyFlags(ctx)],
    [chart.port],
  );
  const got = await pulledArchive(ctx, chart, what, pulled, destination);
  if (!got.ok) return got;
  // the index helm resolved the version from
  const size = (await stat(indexFile).catch(() => undefined))?.size;
  if (size === undefined || size > MAX_INDEX_BYTES) return got;
  let index: unknown;
  try {
    index = parse(await readFile(indexFile, 'utf8'), { maxAliasCount: 100 });
  } catch {
    return got; // helm read it; what it is beyond that is helm's to judge
  }
  const indexDigestHex = indexDigestFor(index, chart.name, got.value.version);
  return ok(indexDigestHex === undefined ? got.value : { ...got.value, indexDigestHex });
}

/**
 * `helm pull oci://host/path/name --version <range>`: Helm lists the repository's tags and takes the highest
 * match, as Flux and Argo CD do. Credentials (a dockerconfigjson entry or username/password) are in the run's
 * registry config (HELM_REGISTRY_CONFIG) for the registry's host only; a CA goes to --ca-file.
 */
export async function pullFromRegistry(
  ctx: PullContext,
  chart: CheckedChartSource,
  auth: RegistryAuth | undefined,
): Promise<Result<Pulled>> {
  const helmDir = join(ctx.home, 'config', 'helm');
  await writeFile(join(helmDir, 'registry.json'), registryConfigFile(chart.host, auth), { mode: 0o600 });
  const flags: string[] = [];
  if (auth?.caCert !== undefined) {
    const caFile = join(helmDir, 'ca.crt');
    await writeFile(caFile, auth.caCert, { mode: 0o600 });
    flags.push('--ca-file', caFile);
  }
  if (chart.plainHttp === true) flags.push('--plain-http');
  const what = `fetching chart ${chart.name} ${chart.version} from ${chart.repository}`;
  const destination = await destinationDir(ctx);
  const pulled = await runHelm(
    ctx,
    [
      'pull',
      chart.chartRef!,
      `--version=${chart.version}`,
      '--destination',
      destination,
      ...flags,
      ...verifyFlags(ctx),
    ],
    [chart.port],
  );
  const got = await pulledArchive(ctx, chart, what, pulled, destination);
  if (!got.ok || !pulled.ok) return got;
  const manifestDigestHex = manifestDigestFromPull(pulled.stdout);
  if (manifestDigestHex === undefined)
    return fail(Reason.FetchFailed, `${what}: helm reported no manifest digest for ${got.value.version}`);
  return ok({ ...got.value, manifestDigestHex });
}

async function destinationDir(ctx: PullContext): Promise<string> {
  const destination = join(ctx.home, 'pulled');
  await mkdir(destination, { recursive: true, mode: 0o700 });
  return destination;
}

async function pulledArchive(
  ctx: PullContext,
  chart: CheckedChartSource,
  what: string,
  pulled: ToolOutcome,
  destination: string,
): Promise<Result<Pulled>> {
  if (!pulled.ok) {
    const failed = describeHelmFetchFailure<Pulled>(what, pulled, ctx.helmPath);
    // helm pull --verify refused the provenance: a verification failure, not a fetch to retry blindly
    if (!failed.ok && ctx.keyring !== undefined && PROVENANCE_REFUSED.test(pulled.stderr))
      return fail(
        Reason.VerificationFailed,
        `${what}: helm verify refused it (spec.source.chart.verify): ${failed.failure.message.slice(what.length + 2)}; nothing was applied: publish the chart with a .prov signed by a key of the keyring, or fix the keyring`,
        { terminal: true },
      );
    return failed;
  }
  const files = (await readdir(destination)).filter((f) => f.endsWith('.tgz'));
  const version = files.length === 1 ? versionFromArchive(files[0]!, chart.name) : undefined;
  if (version === undefined)
    return fail(
      Reason.FetchFailed,
      `${what}: helm pulled ${files.length} archives, not one named ${chart.name}-<version>.tgz`,
    );
  const file = join(destination, files[0]!);
  const size = (await stat(file)).size;
  if (size > ctx.maxArchiveBytes)
    return fail(
      Reason.ArtifactTooLarge,
      `${what}: the archive of ${version} is ${size} bytes, over the controller's --oci-max-layer-bytes ${ctx.maxArchiveBytes}`,
      { terminal: true },
    );
  return ok({ file, version });
}
