import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { repoUrl } from './repo-root.ts';

/**
 * Where the render tools are when no flag names them. In the image they are /usr/local/bin/kustomize,
 * /usr/local/bin/helm and /usr/local/bin/sops. In a source checkout (development, tests) hack/build-cluster.sh builds the versions
 * pinned in hack/versions.env into $PACKAGESYNC_CACHE/bin/<tool>-<version>/; $KUSTOMIZE_BIN / $HELM_BIN (the
 * names `hack/build-cluster.sh paths` prints) override both.
 */
export interface ToolPaths {
  kustomize: string;
  helm: string;
  sops: string;
  /** The launcher every render tool runs under (hack/render-sandbox, docs/adr/0033). */
  sandbox: string;
  /** The render worker: kustomize and Helm as libraries (hack/render-worker, docs/adr/0038). */
  worker: string;
  /** The same worker built without Helm's SDK, for kustomize renders (hack/render-worker/helm_off.go). */
  workerKustomize: string;
}

export function defaultToolPaths(env: NodeJS.ProcessEnv = process.env): ToolPaths {
  const pinned = readPins();
  const cache = env.PACKAGESYNC_CACHE || join(homedir(), '.cache', 'packagesync');
  const pick = (
    tool: 'kustomize' | 'helm' | 'sops',
    fromEnv: string | undefined,
    version: string | undefined,
  ): string => {
    if (fromEnv) return fromEnv;
    if (version) {
      const built = join(cache, 'bin', `${tool}-${version}`, tool);
      if (existsSync(built)) return built;
    }
    return `/usr/local/bin/${tool}`;
  };
  return {
    kustomize: pick('kustomize', env.KUSTOMIZE_BIN, pinned.KUSTOMIZE_VERSION),
    helm: pick('helm', env.HELM_BIN, pinned.HELM_VERSION),
    sops: pick('sops', env.SOPS_BIN, pinned.SOPS_VERSION),
    sandbox: sandboxPath(env, cache),
    worker: workerPath(env.RENDER_WORKER_BIN, cache, 'render-worker'),
    workerKustomize: workerPath(env.RENDER_WORKER_KUSTOMIZE_BIN, cache, 'render-worker-kustomize'),
  };
}

/**
 * $RENDER_WORKER_BIN (…_KUSTOMIZE_BIN); else the build of this source (keyed by the hash of its Go files, go.mod
 * and go.sum in that order, as hack/build-cluster.sh keys it); else /usr/local/bin/<name> (the image).
 */
function workerPath(fromEnv: string | undefined, cache: string, name: string): string {
  if (fromEnv) return fromEnv;
  try {
    const dir = repoUrl('hack/render-worker/');
    const goFiles = readdirSync(dir)
      .filter((f) => f.endsWith('.go'))
      .sort();
    const hash = createHash('sha256');
    for (const f of [...goFiles, 'go.mod', 'go.sum']) hash.update(readFileSync(new URL(f, dir)));
    const built = join(cache, 'bin', `render-worker-${hash.digest('hex').slice(0, 12)}`, name);
    if (existsSync(built)) return built;
  } catch {
    // the image ships no hack/
  }
  return `/usr/local/bin/${name}`;
}

/** $RENDER_SANDBOX_BIN; else the build of this source (keyed by its hash, as hack/build-cluster.sh keys it). */
function sandboxPath(env: NodeJS.ProcessEnv, cache: string): string {
  if (env.RENDER_SANDBOX_BIN) return env.RENDER_SANDBOX_BIN;
  try {
    const hash = createHash('sha256');
    for (const f of ['main.go', 'go.mod', 'go.sum']) hash.update(readFileSync(repoUrl(`hack/render-sandbox/${f}`)));
    const built = join(cache, 'bin', `render-sandbox-${hash.digest('hex').slice(0, 12)}`, 'render-sandbox');
    if (existsSync(built)) return built;
  } catch {
    // the image ships no hack/
  }
  return '/usr/local/bin/render-sandbox';
}

function readPins(): Record<string, string> {
  try {
    const text = readFileSync(repoUrl('hack/versions.env'), 'utf8');
    return Object.fromEntries(
      text
        .split('\n')
        .map((line) => /^([A-Z_]+)=(\S+)/.exec(line))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => [m[1] as string, m[2] as string]),
    );
  } catch {
    return {}; // the image ships no hack/
  }
}
