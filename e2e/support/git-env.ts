/**
 * A test file's world: a git server holding its repos, optionally a controller on its own shard, and the
 * namespaces it created (deleted at the end). Used by the CLI, RBAC, sharding and shutdown tests.
 */
import { commitFiles, createRepoRoot, startGitHttpServer, type TestRepo } from '../../test/support/git/index.ts';
import { createNamespace, deleteNamespace } from './cluster.ts';

export { deleteNamespace };
import { startController, type ControllerHandle, type ControllerOptions } from './controller.ts';
import { installCRDs } from './crds.ts';

export interface GitEnv {
  controller: ControllerHandle | undefined;
  namespace(prefix: string): Promise<string>;
  repo(name: string, files: Record<string, string | null>): Promise<{ repo: TestRepo; url: string; sha: string }>;
  commit(repo: TestRepo, files: Record<string, string | null>): Promise<string>;
  dispose(): Promise<void>;
}

export async function startGitEnv(controller: ControllerOptions | false = {}): Promise<GitEnv> {
  await installCRDs();
  const repos = await createRepoRoot();
  const server = await startGitHttpServer({ root: repos.root, auth: 'none' });
  const handle = controller === false ? undefined : await startController(controller);
  const namespaces: string[] = [];
  return {
    controller: handle,
    async namespace(prefix) {
      const ns = await createNamespace(prefix);
      namespaces.push(ns);
      return ns;
    },
    async repo(name, files) {
      const repo = await repos.createRepo(name);
      const sha = await commitFiles(repo, 'main', files, 'initial');
      return { repo, url: server.url(name), sha };
    },
    commit: (repo, files) => commitFiles(repo, 'main', files, 'change'),
    async dispose() {
      await handle?.stop();
      await server.stop();
      await repos.dispose();
      await Promise.all(namespaces.map((ns) => deleteNamespace(ns)));
    },
  };
}

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
