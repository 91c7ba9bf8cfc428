/** Small helpers shared by the safety e2e suites (e2e/safety-*.test.ts). */
import { isNotFound } from '../../src/adapters/kube/client.ts';
import type { KubeObject } from '../../src/core/object.ts';
import type { PackageSync } from '../../src/api/packagesync.ts';
import { conditionOf } from '../../src/core/status.ts';
import {
  commitFiles,
  createRepoRoot,
  startGitHttpServer,
  type FileChange,
  type TestRepo,
} from '../../test/support/git/index.ts';
import type { GitHttpServer } from '../../test/support/git/index.ts';
import { createNamespace, deleteNamespace, kube } from './cluster.ts';
import { patchPackageSync } from './controller.ts';

export type Live = KubeObject & { data?: Record<string, string>; spec?: Record<string, unknown> };

export async function get(path: string): Promise<Live | undefined> {
  try {
    return await (await kube()).request<Live>('GET', path);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

export const cmPath = (ns: string, name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;

export function configMap(name: string, data: Record<string, string>, extra = ''): string {
  const entries = Object.entries(data).map(([k, v]) => `  ${k}: "${v}"`);
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${extra}data:\n${entries.join('\n')}\n`;
}

export function deployment(name: string, opts: { replicas?: number; image?: string; selector?: string } = {}): string {
  const app = opts.selector ?? name;
  return [
    'apiVersion: apps/v1',
    'kind: Deployment',
    `metadata: {name: ${name}}`,
    'spec:',
    ...(opts.replicas === undefined ? [] : [`  replicas: ${opts.replicas}`]),
    `  selector: {matchLabels: {app: ${app}}}`,
    '  template:',
    `    metadata: {labels: {app: ${app}}}`,
    `    spec: {containers: [{name: app, image: "${opts.image ?? `registry.local/${name}:1`}"}]}`,
    '',
  ].join('\n');
}

/** A git http server over a fresh repo root, plus the namespaces a suite created, cleaned up together. */
export async function safetyFixture() {
  const repos = await createRepoRoot();
  const server: GitHttpServer = await startGitHttpServer({ root: repos.root, auth: 'none' });
  const namespaces: string[] = [];
  return {
    server,
    async namespace(prefix: string): Promise<string> {
      const ns = await createNamespace(prefix);
      namespaces.push(ns);
      return ns;
    },
    async repo(name: string, files: Record<string, FileChange>): Promise<{ repo: TestRepo; url: string; sha: string }> {
      const repo = await repos.createRepo(name);
      const sha = await commitFiles(repo, 'main', files, 'initial');
      return { repo, url: server.url(name), sha };
    },
    async dispose(): Promise<void> {
      await server.stop();
      await repos.dispose();
      await Promise.all(namespaces.map((ns) => deleteNamespace(ns)));
    },
  };
}

let triggers = 0;
/** Asks for a reconcile now (the trigger annotation), as `packagesync reconcile` does. */
export async function trigger(ns: string, name: string): Promise<void> {
  await patchPackageSync(ns, name, {
    metadata: { annotations: { 'packagesync.io/reconcile-requested-at': `safety-${Date.now()}-${triggers++}` } },
  });
}

export function ready(ps: PackageSync | undefined) {
  return conditionOf(ps?.status, 'Ready');
}

export const inventoryIds = (ps: PackageSync | undefined): string[] =>
  (ps?.status?.inventory?.entries ?? []).map((e) => e.id).sort();

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
