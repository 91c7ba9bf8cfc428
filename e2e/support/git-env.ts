/**
 * A test file's world: a git server holding its repos, optionally a controller on its own shard (and any
 * more it starts), and the namespaces it created. dispose() stops the controllers, then the git servers,
 * removes the repos and deletes the namespaces (finalizers released), so an afterAll is one line. Every
 * e2e test that needs git or a controller starts here.
 */
import { writeFileSync } from 'node:fs';
import {
  commitFiles,
  startGitFixture,
  type FileChange,
  type GitFixture,
  type GitHttpAuth,
  type GitHttpServer,
  type GitSshServer,
  type TestRepo,
} from '../../test/support/git/index.ts';
import { deleteNamespace, trackNamespaces } from './cluster.ts';
import type { PackageSync, SpecInput } from '../../src/api/packagesync.ts';
import {
  createPackageSync,
  packageSync,
  startController,
  waitReady,
  type ControllerHandle,
  type ControllerOptions,
} from './controller.ts';
import { installCRDs } from './crds.ts';

export { deleteNamespace };

export interface GitEnvOptions {
  /** What the git http server asks of a client (default: anonymous). */
  auth?: GitHttpAuth;
  /** Serve the repos over ssh too (env.ssh). */
  ssh?: boolean;
  /** Install the PackageSync CRDs on the shared cluster first (default true; false for a private cluster). */
  crds?: boolean;
}

export interface GitEnv {
  /** The controller started with the env (undefined for startGitEnv(false)). */
  controller: ControllerHandle | undefined;
  /** The git http server; env.repo's url points at it. */
  server: GitHttpServer;
  /** The ssh server over the same repos (started with `ssh: true`; reading it otherwise throws). */
  ssh: GitSshServer;
  /** The repo root and its servers: `git.serveHttp(auth)` adds another server, stopped by dispose. */
  git: GitFixture;
  /** A new namespace `<prefix>-xxxxxx`, deleted by dispose. */
  namespace(prefix: string): Promise<string>;
  /** Deletes namespaces created some other way with the env's own. */
  adoptNamespace(...names: string[]): void;
  /** A new repo with one commit on main, and its url on env.server. */
  repo(name: string, files: Record<string, FileChange>): Promise<{ repo: TestRepo; url: string; sha: string }>;
  commit(repo: TestRepo, files: Record<string, FileChange>): Promise<string>;
  /** Another controller on its own shard, stopped by dispose. */
  startController(opts?: ControllerOptions): Promise<ControllerHandle>;
  /** Creates PackageSync `namespace/name` with `spec` on env.controller's shard (throws without a controller). */
  sync(namespace: string, name: string, spec: SpecInput): Promise<PackageSync>;
  /** sync(), then waitReady(namespace, name, check): the PackageSync once Ready for its generation. */
  syncReady(
    namespace: string,
    name: string,
    spec: SpecInput,
    check?: (ps: PackageSync) => boolean,
  ): Promise<PackageSync>;
  dispose(): Promise<void>;
}

/** A GitEnv started with its controller (any startGitEnv call but startGitEnv(false)). */
export type GitEnvWithController = GitEnv & { controller: ControllerHandle };

/**
 * startGitEnv() / startGitEnv({args}) starts a controller with the env; startGitEnv(false) starts none (the
 * test starts its own, e.g. with env.startController once a namespace it needs exists).
 */
export function startGitEnv(controller?: ControllerOptions, options?: GitEnvOptions): Promise<GitEnvWithController>;
export function startGitEnv(controller: ControllerOptions | false, options?: GitEnvOptions): Promise<GitEnv>;
export async function startGitEnv(
  controller: ControllerOptions | false = {},
  options: GitEnvOptions = {},
): Promise<GitEnv> {
  if (options.crds !== false) await installCRDs();
  const git = await startGitFixture();
  const namespaces = trackNamespaces();
  const controllers: ControllerHandle[] = [];
  const launch = async (opts: ControllerOptions = {}) => {
    const handle = await startController(opts);
    controllers.push(handle);
    return handle;
  };
  let server: GitHttpServer;
  let ssh: GitSshServer | undefined;
  let handle: ControllerHandle | undefined;
  try {
    server = await git.serveHttp(options.auth);
    ssh = options.ssh ? await git.serveSsh() : undefined;
    handle = controller === false ? undefined : await launch(controller);
  } catch (e) {
    // the test's afterAll has no env to dispose: leave no server or repo behind
    await Promise.all(controllers.map((c) => c.stop()));
    await git.dispose();
    throw e;
  }
  const sync = (namespace: string, name: string, spec: SpecInput) => {
    if (!handle) throw new Error('this GitEnv has no controller: start it with startGitEnv() or use packageSync()');
    return createPackageSync(packageSync(namespace, name, handle.shard, spec));
  };
  return {
    controller: handle,
    server,
    get ssh() {
      if (!ssh) throw new Error('this GitEnv serves no ssh: start it with { ssh: true }');
      return ssh;
    },
    git,
    namespace: (prefix) => namespaces.create(prefix),
    adoptNamespace: (...names) => names.forEach((n) => namespaces.adopt(n)),
    async repo(name, files) {
      const { repo, sha } = await git.repoWith(name, files);
      return { repo, url: server.url(name), sha };
    },
    commit: (repo, files) => commitFiles(repo, 'main', files, 'change'),
    startController: launch,
    sync,
    async syncReady(namespace, name, spec, check) {
      await sync(namespace, name, spec);
      return waitReady(namespace, name, check);
    },
    async dispose() {
      await Promise.all(controllers.map((c) => c.stop()));
      // E2E_CONTROLLER_LOG=/path keeps the controllers' logs of the run, for a failure that needs them
      const log = process.env.E2E_CONTROLLER_LOG;
      if (log && controllers.length) writeFileSync(log, controllers.flatMap((c) => c.logs).join('\n'));
      await git.dispose();
      await namespaces.deleteAll();
    },
  };
}

/**
 * The spec most e2e PackageSyncs start from: the package at `url`, an interval no test waits for (1h: what a test
 * sees happens because it asked), a failure retried after 1 s, and a minute's budget per reconcile. `more` adds to
 * it or replaces any of it.
 */
export const quickSpec = (url: string, more: Record<string, unknown> = {}) => ({
  source: { url },
  interval: '1h',
  retryInterval: '1s',
  timeout: '1m',
  ...more,
});

export const configMap = (name: string, data: Record<string, string>) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n${Object.entries(data)
    .map(([k, v]) => `  ${k}: "${v}"`)
    .join('\n')}\n`;

export const deployment = (name: string, replicas = 1) =>
  [
    'apiVersion: apps/v1',
    'kind: Deployment',
    `metadata: {name: ${name}}`,
    'spec:',
    `  replicas: ${replicas}`,
    `  selector: {matchLabels: {app: ${name}}}`,
    '  template:',
    `    metadata: {labels: {app: ${name}}}`,
    `    spec: {containers: [{name: app, image: "registry.local/${name}:1"}]}`,
    '',
  ].join('\n');

/** A claim no provisioner will bind (its class does not exist): a health wait that never ends by itself. */
export const unboundClaim = (name: string, storageClass = 'manual-e2e') =>
  [
    'apiVersion: v1',
    'kind: PersistentVolumeClaim',
    `metadata: {name: ${name}}`,
    'spec:',
    `  storageClassName: ${storageClass}`,
    '  accessModes: [ReadWriteOnce]',
    '  resources: {requests: {storage: 1Gi}}',
    '',
  ].join('\n');
