/**
 * What the benchmarks apply, generated: the fleet units (Flux's benchmark shape: ServiceAccount, Service,
 * Deployment with 0 replicas, ConfigMap), the big packages (ConfigMaps and Deployments) and the small package
 * whose change latency is measured. Each benchmark has its own repository on one real git smart-HTTP server.
 * Documents are written as JSON (valid YAML): generation stays cheap at 10,000 objects.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { root } from './cluster.ts';
import {
  commitFiles,
  createRepo,
  createRepoRoot,
  startGitHttpServer,
  type TestRepo,
} from '../../test/support/git/index.ts';
import type { GitHttpServer } from '../../test/support/git/index.ts';

export interface GitFixtures {
  server: GitHttpServer;
  /** fleet/ units: what Flux's benchmark clones once per GitRepository. */
  fleet: GitFixture;
  big: GitFixture;
  change: GitFixture;
  stop(): Promise<void>;
}

export interface GitFixture {
  repo: TestRepo;
  url: string;
}

/**
 * One git server, one repository per benchmark: a repository holding every benchmark's content would make
 * Flux clone and archive the big packages 1,000 times in the fleet run, and slow every checkout of the
 * change-latency run; neither would be the shape being measured.
 */
export async function startGitFixtures(): Promise<GitFixtures> {
  const repos = await createRepoRoot();
  const server = await startGitHttpServer({ root: repos.root, auth: 'none' });
  const fixture = async (name: string): Promise<GitFixture> => ({
    repo: await createRepo(repos.root, name),
    url: server.url(name),
  });
  return {
    server,
    fleet: await fixture('fleet'),
    big: await fixture('big'),
    change: await fixture('change'),
    async stop() {
      await server.stop();
      await repos.dispose();
    },
  };
}

export type Doc = Record<string, unknown>;
export const yaml = (docs: Doc[]): string => docs.map((d) => JSON.stringify(d)).join('\n---\n') + '\n';

/** The four objects of fleet unit `name`; the ConfigMap carries the unit's own data, so every unit differs. */
export function fleetUnit(name: string, index: number): Doc[] {
  const labels = { app: name };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name },
      spec: { selector: labels, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
    },
    deploymentDoc(name),
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { unit: name, index: String(index) } },
  ];
}

function deploymentDoc(name: string): Doc {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: 0,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [{ name: 'app', image: `registry.local/bench/${name}:1`, ports: [{ containerPort: 8080 }] }],
        },
      },
    },
  };
}

export const unitName = (i: number) => `u-${String(i).padStart(4, '0')}`;
export const unitPath = (i: number) => `fleet/${unitName(i)}`;

/** One directory per unit (fleet/u-0000 … ): `count` units. */
export async function commitFleet(repo: TestRepo, count: number): Promise<string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) files[`${unitPath(i)}/app.yaml`] = yaml(fleetUnit(unitName(i), i));
  return commitFiles(repo, 'main', files, `fleet of ${count}`);
}

/** `count` objects, one Deployment (0 replicas) for every three ConfigMaps, no namespace set. */
export function bigObjects(count: number): Doc[] {
  const out: Doc[] = [];
  for (let i = 0; i < count; i++) {
    const name = `obj-${String(i).padStart(5, '0')}`;
    if (i % 4 === 3) out.push(deploymentDoc(name));
    else
      out.push({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name },
        data: { index: String(i), payload: 'x'.repeat(256) },
      });
  }
  return out;
}

export const kustomizeUnitPath = (i: number) => `kfleet/${unitName(i)}`;

/**
 * The kustomize fleet (issue 13, Flux's own benchmark shape: kustomize-controller always runs kustomize):
 * one shared base (ServiceAccount, Service, Deployment reading a ConfigMap), and per unit an overlay as teams
 * write them — namePrefix, labels into selectors, a configMapGenerator (hashed name, references rewritten),
 * an image tag. Both tools build every unit with kustomize; the same four objects per unit as the plain fleet.
 */
export async function commitKustomizeFleet(repo: TestRepo, count: number): Promise<string> {
  const labels = { app: 'app' };
  const base: Doc[] = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app' } },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'app' },
      spec: { selector: labels, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'app' },
      spec: {
        replicas: 0,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: 'app',
            containers: [
              {
                name: 'app',
                image: 'registry.local/bench/app:0',
                ports: [{ containerPort: 8080 }],
                envFrom: [{ configMapRef: { name: 'app-config' } }],
              },
            ],
          },
        },
      },
    },
  ];
  const files: Record<string, string> = {
    'kfleet/base/app.yaml': yaml(base),
    'kfleet/base/kustomization.yaml': yaml([
      { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: ['app.yaml'] },
    ]),
  };
  for (let i = 0; i < count; i++) {
    const name = unitName(i);
    files[`${kustomizeUnitPath(i)}/kustomization.yaml`] = yaml([
      {
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        resources: ['../base'],
        namePrefix: `${name}-`,
        labels: [{ pairs: { app: name }, includeSelectors: true }],
        configMapGenerator: [{ name: 'app-config', literals: [`UNIT=${name}`, `INDEX=${i}`] }],
        images: [{ name: 'registry.local/bench/app', newTag: '1' }],
      },
    ]);
  }
  Object.assign(files, sameObjectsAsPlain(files, count));
  return commitFiles(repo, 'main', files, `kustomize fleet of ${count}`);
}

export const kustomizePlainUnitPath = (i: number) => `kplain/${unitName(i)}`;

/**
 * The kustomize fleet's objects as plain YAML (kplain/<unit>/all.yaml): what the pinned `kustomize build` gives
 * for each overlay, so the kustomize fleet is compared with a plain fleet of the same objects (issue 27), not
 * with fleet/'s units, whose objects differ (no labels, no generated ConfigMap name, no envFrom). One build of a
 * kustomization naming every overlay, split by the units' name prefixes.
 */
function sameObjectsAsPlain(files: Record<string, string>, count: number): Record<string, string> {
  const kustomize = /^KUSTOMIZE_BIN=(.*)$/m.exec(
    execFileSync(resolve(root, 'hack/build-cluster.sh'), ['paths'], { encoding: 'utf8' }),
  )![1]!;
  const dir = mkdtempSync(join(tmpdir(), 'bench-kplain-'));
  try {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, dirname(path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const units = Array.from({ length: count }, (_, i) => unitName(i));
    writeFileSync(join(dir, 'kustomization.yaml'), yaml([{ resources: units.map((u) => `kfleet/${u}`) }]));
    const built = execFileSync(kustomize, ['build', dir], { encoding: 'utf8', maxBuffer: 1 << 30 });
    const byUnit = new Map<string, Doc[]>(units.map((u) => [u, []]));
    for (const doc of parseAllDocuments(built)) {
      const d = doc.toJS() as Doc & { metadata: { name: string } };
      byUnit.get(d.metadata.name.slice(0, unitName(0).length))!.push(d);
    }
    return Object.fromEntries(units.map((u, i) => [`${kustomizePlainUnitPath(i)}/all.yaml`, yaml(byUnit.get(u)!)]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const bigPath = (count: number) => `big/n-${count}`;

/** The objects in every other part file of the big package (parts 1, 3, 5, …): half of it. */
export function bigPrunedNames(count: number): Set<string> {
  const names = new Set<string>();
  for (let f = 1; f * 100 < count; f += 2)
    for (let i = f * 100; i < Math.min(count, f * 100 + 100); i++) names.add(`obj-${String(i).padStart(5, '0')}`);
  return names;
}

/** Removes every other part file (bigPrunedNames): the prune of half the package. */
export async function commitBigHalf(repo: TestRepo, count: number): Promise<string> {
  const files: Record<string, null> = {};
  for (let f = 1; f * 100 < count; f += 2) files[`${bigPath(count)}/part-${String(f).padStart(3, '0')}.yaml`] = null;
  return commitFiles(repo, 'main', files, `big package of ${count}: half removed`);
}

/** The big package as files of 100 documents each, as a real package is split. */
export async function commitBig(repo: TestRepo, count: number): Promise<string> {
  const docs = bigObjects(count);
  const files: Record<string, string> = {};
  for (let f = 0; f * 100 < docs.length; f++)
    files[`${bigPath(count)}/part-${String(f).padStart(3, '0')}.yaml`] = yaml(docs.slice(f * 100, f * 100 + 100));
  return commitFiles(repo, 'main', files, `big package of ${count}`);
}

export const CHANGE_PATH = 'change';
export const CHANGE_OBJECTS = 10;

/** The 10-object package at revision `rev`: every ConfigMap says which revision it came from. */
export async function commitChange(repo: TestRepo, rev: number): Promise<string> {
  const docs: Doc[] = [];
  for (let i = 0; i < CHANGE_OBJECTS; i++)
    docs.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { rev: String(rev) } });
  return commitFiles(repo, 'main', { [`${CHANGE_PATH}/app.yaml`]: yaml(docs) }, `change ${rev}`);
}

/** The Helm fleet's one chart (issue 27): every unit is a release of it. */
export const HELM_CHART_PATH = 'hfleet/chart';

/**
 * The Helm fleet's chart, made by `helm create` with the pinned helm (hack/versions.env), so it is exactly the
 * chart every Helm user starts from: a Deployment, a Service and a ServiceAccount, with its HPA, Ingress and
 * HTTPRoute off by default. The test hook under templates/tests is left out: `helm install` (Flux) does not run
 * it and PackageSync drops test hooks, so it would differ only in what nobody applies. Both tools render it with
 * the same values (replicaCount 0, as the plain fleet's Deployments).
 */
export async function commitHelmFleet(repo: TestRepo): Promise<string> {
  const helm = /^HELM_BIN=(.*)$/m.exec(
    execFileSync(resolve(root, 'hack/build-cluster.sh'), ['paths'], { encoding: 'utf8' }),
  )![1]!;
  const dir = mkdtempSync(join(tmpdir(), 'bench-hfleet-'));
  try {
    execFileSync(helm, ['create', 'chart'], { cwd: dir, env: { ...process.env, HOME: dir }, stdio: 'pipe' });
    const files: Record<string, string> = {};
    const walk = (rel: string) => {
      for (const e of readdirSync(join(dir, 'chart', rel), { withFileTypes: true })) {
        const path = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) {
          if (path !== 'templates/tests') walk(path);
        } else files[`${HELM_CHART_PATH}/${path}`] = readFileSync(join(dir, 'chart', path), 'utf8');
      }
    };
    walk('');
    return await commitFiles(repo, 'main', files, 'helm fleet chart (helm create)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
