import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Reason } from '../../api/reasons.ts';
import { chartAuthFromSecret } from '../../core/chart/chart-source.ts';
import { entryFor, type DependencyRepositoryEntry } from '../../core/chart/dependency-credentials.ts';
import { fail, ok, type Result } from '../../core/failure.ts';
import { registryAuthFromSecret } from '../../core/oci/credentials.ts';
import { parseOciRepository } from '../../core/oci/reference.ts';

/**
 * The repositories `helm dependency build` may use (docs/adr/0041): each HTTP dependency repository is an entry
 * of the run's private repositories.yaml (as `helm repo add` makes it: with a Chart.lock helm fetches from
 * defined repositories only), with the credentials of the spec.source.dependencyRepositories entry that covers
 * it (same origin, longest path prefix; helm sends them to that repository alone, pass_credentials_all false);
 * an OCI one so covered is an entry of its registry config (per host, as docker config files are). A repository
 * no entry covers gets no credentials. Files are 0600 in the fetch's HOME.
 */
export interface DependencyAuth {
  entries: readonly (DependencyRepositoryEntry & { secretRef: { name: string } })[];
  /** Each entry's Secret data, by its index in `entries`. */
  byEntry: ReadonlyMap<number, Record<string, string>>;
}

interface RepositoriesFile {
  repositories: Record<string, unknown>[];
}

const normal = (url: string) => url.replace(/\/+$/, '');

export async function writeDependencyAuth(
  home: string,
  repositories: readonly string[],
  auth: DependencyAuth | undefined,
): Promise<Result<void>> {
  const helmDir = join(home, 'config', 'helm');
  const reposFile = join(helmDir, 'repositories.yaml');
  const registryFile = join(helmDir, 'registry.json');
  // what the chart source wrote for its own repository (JSON, which is YAML): kept, and first
  const repos = await readJson<RepositoriesFile>(reposFile, {
    apiVersion: '',
    generated: '0001-01-01T00:00:00Z',
    repositories: [],
  } as RepositoriesFile);
  const registry = await readJson<{ auths: Record<string, Record<string, string>> }>(registryFile, { auths: {} });
  let n = 0;
  for (const repository of repositories) {
    const index = auth === undefined ? undefined : entryFor(repository, auth.entries);
    const data = index === undefined ? undefined : auth!.byEntry.get(index);
    const field = `spec.source.dependencyRepositories[${index}]`;
    const secret = index === undefined ? '' : auth!.entries[index]!.secretRef.name;
    if (repository.startsWith('oci://')) {
      if (index === undefined) continue;
      const parsed = parseOciRepository(normal(repository));
      if (!parsed.ok) continue; // refused by dependencyNeeds before this runs
      const host = parsed.value.host;
      const got = registryAuthFromSecret(data, host, `${secret} (${field})`);
      if (!got.ok) return got;
      const entry: Record<string, string> = {};
      if (got.value?.username !== undefined)
        entry.auth = Buffer.from(`${got.value.username}:${got.value.password ?? ''}`, 'utf8').toString('base64');
      if (got.value?.identityToken !== undefined) entry.identitytoken = got.value.identityToken;
      const before = registry.auths[host];
      if (before !== undefined && JSON.stringify(before) !== JSON.stringify(entry))
        return fail(
          Reason.InvalidSpec,
          `two credentials apply to the OCI registry ${host} (the chart's own, or two spec.source.dependencyRepositories entries): helm keeps one per registry host; use one Secret for it`,
          { terminal: true },
        );
      if (Object.keys(entry).length > 0) registry.auths[host] = entry;
      continue;
    }
    // the chart's own repository (same URL) keeps the entry the chart source wrote
    if (repos.repositories.some((r) => typeof r.url === 'string' && normal(r.url) === normal(repository))) continue;
    // every HTTP repository gets an entry, credentials or none: with a Chart.lock, `helm dependency build`
    // fetches only from repositories its repositories.yaml defines (as after `helm repo add`)
    const got = chartAuthFromSecret(data, secret, field);
    if (!got.ok) return got;
    const name = `dependency-${n++}`;
    const entry: Record<string, unknown> = {
      name,
      url: repository,
      pass_credentials_all: false,
      insecure_skip_tls_verify: false,
    };
    if (got.value.username !== undefined)
      Object.assign(entry, { username: got.value.username, password: got.value.password });
    if (got.value.ca !== undefined) {
      entry.caFile = join(helmDir, `${name}-ca.crt`);
      await writeFile(entry.caFile as string, got.value.ca, { mode: 0o600 });
    }
    repos.repositories.push(entry);
  }
  await writeFile(reposFile, JSON.stringify(repos), { mode: 0o600 });
  await writeFile(registryFile, JSON.stringify(registry), { mode: 0o600 });
  return ok(undefined);
}

async function readJson<T>(file: string, otherwise: T): Promise<T> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch {
    return otherwise;
  }
}
