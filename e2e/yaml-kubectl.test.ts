/**
 * YAML as Kubernetes reads it (issue 32, docs/adr/0034), on the real control plane: `packagesync render -o yaml`
 * piped into `kubectl create --dry-run=client` gives the objects `render -o json` gives (every test package, and
 * the stored go-yaml answers, are checked offline by test/render/goyaml-kubectl.test.ts); a plain package's `defaultMode: 0440` reaches the API server as 288; a chart whose output repeats a key renders,
 * applies the last value and warns once.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { jsonObjects, renderCli } from '../test/support/kubectl-decode.ts';
import { eventually, eventReasons, kubeconfig, kubectl } from './support/cluster.ts';
import { createPackageSync, packageSync, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { cmPath, get } from './support/safety.ts';

const root = join(import.meta.dirname, '..');
const testdata = join(root, 'test/render/testdata');

/** `kubectl create --dry-run=client -o json`: the objects kubectl would send, read from `yaml`. */
function kubectlCreateDryRun(yaml: string): unknown[] {
  const run = spawnSync(
    inject('kubectl'),
    ['--kubeconfig', kubeconfig(), 'create', '--dry-run=client', '--validate=false', '-o', 'json', '-f', '-'],
    { input: yaml, encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  if (run.status !== 0) throw new Error(`kubectl create --dry-run=client refused it: ${run.stderr}`);
  return jsonObjects(run.stdout);
}

describe('render -o yaml | kubectl create --dry-run=client -o json -f - equals render -o json', () => {
  // every test package is round-tripped offline by test/render/goyaml-kubectl.test.ts; here the create path
  it.each(['yaml11', 'yaml11-chart', 'kustomize-repo/overlays/prod'])('%s', (pkg) => {
    const dir = join(testdata, pkg);
    const json = JSON.parse(renderCli(dir, 'json')) as { items: unknown[] };
    expect(kubectlCreateDryRun(renderCli(dir, 'yaml'))).toEqual(json.items);
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
