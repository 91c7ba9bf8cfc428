/**
 * YAML as Kubernetes reads it (issue 32, docs/adr/0034), checked against kubectl itself on the real control plane:
 * the stored go-yaml answers (src/core/render/testdata/goyaml-cases.json) are what the pinned kubectl says today;
 * `packagesync render -o yaml` piped into kubectl gives the objects `render -o json` gives, for every test package;
 * a plain package's `defaultMode: 0440` reaches the API server as 288; a chart whose output repeats a key renders,
 * applies the last value and warns once.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { kubectlCase, kubectlDecode, readAnswers, readCases } from '../test/support/kubectl-decode.ts';
import { eventually, eventReasons, kubeconfig, kubectl } from './support/cluster.ts';
import { createPackageSync, packageSync, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { cmPath, get } from './support/safety.ts';

const root = join(import.meta.dirname, '..');
const testdata = join(root, 'test/render/testdata');

describe('go-yaml cases: the stored answers are what kubectl says', () => {
  const answers = readAnswers().cases;
  it.each(Object.entries(readCases()))('%s', (name, body) => {
    expect(kubectlCase(inject('kubectl'), kubeconfig(), body)).toEqual(answers[name]);
  });
});

/** `packagesync render DIR -o FORMAT`, as a user runs it. */
function render(dir: string, format: 'yaml' | 'json'): string {
  const run = spawnSync(
    process.execPath,
    [join(root, 'bin/packagesync.js'), 'render', dir, '-o', format, '--namespace', 'yaml-roundtrip'],
    { encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  if (run.status !== 0) throw new Error(`render ${relative(root, dir)} failed: ${run.stderr}`);
  return run.stdout;
}

/** Test packages kubectl can map without extra CRDs (crd/ defines a kind of its own; helm-repo needs a value). */
const packages = ['basic', 'yaml11', 'yaml11-chart', 'kustomize-repo/base', 'kustomize-repo/overlays/prod'];

it('every test package is in the round trip but the two kubectl cannot map alone', () => {
  const all = readdirSync(testdata).filter((d) => statSync(join(testdata, d)).isDirectory());
  expect(all.filter((d) => !packages.some((p) => p.split('/')[0] === d)).sort()).toEqual(['crd', 'helm-repo']);
});

describe('render -o yaml | kubectl create --dry-run=client -o json -f - equals render -o json', () => {
  it.each(packages)('%s', (pkg) => {
    const dir = join(testdata, pkg);
    const json = JSON.parse(render(dir, 'json')) as { items: unknown[] };
    const decoded = kubectlDecode(inject('kubectl'), kubeconfig(), render(dir, 'yaml'));
    if ('error' in decoded) throw new Error(`kubectl refused the YAML of ${pkg}: ${decoded.error}`);
    const items =
      (decoded.json as { kind: string; items?: unknown[] }).kind === 'List'
        ? (decoded.json as { items: unknown[] }).items
        : [decoded.json];
    expect(json.items.length).toBeGreaterThan(0);
    expect(items).toEqual(json.items);
  });

  it('the argo-cd shape: args ["no"] from a chart stays the string "no"', () => {
    const text = render(join(testdata, 'yaml11-chart'), 'yaml');
    expect(text).toContain('- "no"\n');
  });
});

describe('through the controller', () => {
  let env: GitEnvWithController;
  beforeAll(async () => {
    env = await startGitEnv();
  });
  afterAll(async () => {
    await env?.dispose();
  });

  const filesOf = (dir: string, prefix: string): Record<string, string> => {
    const out: Record<string, string> = {};
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) walk(p);
        else out[`${prefix}/${relative(dir, p)}`] = readFileSync(p, 'utf8');
      }
    };
    walk(dir);
    return out;
  };

  it('a plain package with defaultMode: 0440 reaches the API server as 288', async () => {
    const ns = await env.namespace('yaml-modes');
    const { url, sha } = await env.repo('yaml-modes', filesOf(join(testdata, 'yaml11'), 'app'));
    await createPackageSync(
      packageSync(ns, 'modes', env.controller.shard, {
        source: { url, path: 'app' },
        interval: '1h',
        retryInterval: '1s',
        wait: false,
      }),
    );
    await waitReady(ns, 'modes', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${sha}`);
    const deploy = await get(`/apis/apps/v1/namespaces/${ns}/deployments/yaml11-modes`);
    const pod = (deploy?.spec as { template: { spec: Record<string, unknown> } }).template.spec as {
      volumes: { configMap: { defaultMode: number } }[];
      containers: { args: unknown[] }[];
    };
    expect(pod.volumes[0]?.configMap.defaultMode).toBe(288);
    expect(pod.containers[0]?.args).toEqual(['no', '--verbose=yes', '0755']);
    const cm = await get(cmPath(ns, 'yaml11-strings'));
    expect(cm?.data).toMatchObject({ no: 'no', octal: '0755', sexagesimal: '1:30', astral: '😀' });
  });

  it('a chart whose output repeats a key renders, applies the last value, and warns once', async () => {
    const ns = await env.namespace('yaml-dup');
    const { url, sha } = await env.repo('yaml-dup', filesOf(join(testdata, 'yaml11-chart'), 'chart'));
    await createPackageSync(
      packageSync(ns, 'dup', env.controller.shard, {
        source: { url, path: 'chart' },
        interval: '1h',
        retryInterval: '1s',
        wait: false,
      }),
    );
    await waitReady(ns, 'dup', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${sha}`);
    expect((await get(cmPath(ns, 'dup-logging')))?.data).toEqual({ logFormat: 'json', logLevel: 'debug' });
    const deploy = await get(`/apis/apps/v1/namespaces/${ns}/deployments/dup-app`);
    expect(JSON.stringify(deploy?.spec)).toContain('"args":["no"]');
    const message = await eventually('a DuplicateKeys warning', async () => {
      const reasons = await eventReasons(ns, 'dup');
      if (!reasons.split(' ').includes('DuplicateKeys')) return undefined;
      return kubectl(
        'get',
        'events',
        '-n',
        ns,
        '--field-selector',
        'involvedObject.name=dup,reason=DuplicateKeys',
        '-o',
        'jsonpath={range .items[*]}{.type} {.count} {.message}{"\\n"}{end}',
      );
    });
    const lines = message!.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Warning 1 /);
    expect(lines[0]).toContain(`ConfigMap/${ns}/dup-logging field data.logFormat (chart/templates/config.yaml)`);
    expect(lines[0]).toContain('data.logLevel');
    expect(lines[0]).toContain('The last value is applied');
  });
});
