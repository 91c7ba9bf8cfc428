/**
 * What kubectl makes of a YAML text. `kubectl patch --local -f - --type merge -p {} -o json` reads the file as
 * `kubectl apply` and `kubectl create` read it (the resource builder: sigs.k8s.io/yaml, go-yaml v2, as Helm and
 * Flux read it too), changes nothing, and prints each object; --local needs no cluster. The only source of
 * expected values for the YAML 1.1 cases (src/core/render/testdata/goyaml-cases.*).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from 'yaml';

/** A case's text is the body of this object. */
export const caseHead = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: goyaml-case\n';

export type KubectlAnswer = { value: Record<string, unknown> } | { error: string };

/** Every object of `yaml` as kubectl decodes it, in order, or its error's first line. */
export function kubectlDecode(kubectl: string, yaml: string): { objects: unknown[] } | { error: string } {
  const run = spawnSync(kubectl, ['patch', '--local', '-f', '-', '--type', 'merge', '-p', '{}', '-o', 'json'], {
    input: yaml,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    // no kubeconfig, no cluster: the file alone decides
    env: { PATH: process.env.PATH ?? '', KUBECONFIG: '/nonexistent', HOME: '/nonexistent' },
  });
  if (run.error) throw run.error;
  if (run.status !== 0) return { error: (run.stderr.split('\n')[0] ?? '').trim() };
  return { objects: jsonObjects(run.stdout) };
}

/** kubectl's `-o json` for several objects: one pretty-printed JSON object after another. */
export function jsonObjects(stdout: string): unknown[] {
  const chunks = stdout.trim().split(/(?<=^\})\n(?=\{$)/m);
  return chunks.filter((c) => c !== '').map((c) => JSON.parse(c, exactIntegers) as unknown);
}

/**
 * An integer JavaScript cannot hold exactly (kubectl keeps int64) is recorded as `{ integer: "<digits>" }`, so
 * the stored answer says what kubectl printed, not a rounded neighbour.
 */
function exactIntegers(_key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value) && context?.source) {
    return { integer: context.source };
  }
  return value;
}

/** One case as kubectl reads it: the object's body without apiVersion, kind and metadata. */
export function kubectlCase(kubectl: string, body: string): KubectlAnswer {
  const decoded = kubectlDecode(kubectl, caseHead + body);
  if ('error' in decoded) return { error: decoded.error.replace(/^error: /, '') };
  const { apiVersion: _a, kind: _k, metadata: _m, ...value } = decoded.objects[0] as Record<string, unknown>;
  return { value };
}

export const casesDir = join(import.meta.dirname, '../../src/core/render/testdata');

/** The case texts, by name (goyaml-cases.yaml). */
export function readCases(): Record<string, string> {
  return parse(readFileSync(join(casesDir, 'goyaml-cases.yaml'), 'utf8')) as Record<string, string>;
}

/** kubectl's answers as last generated (goyaml-cases.json). */
export function readAnswers(): { kubectl: string; cases: Record<string, KubectlAnswer> } {
  return JSON.parse(readFileSync(join(casesDir, 'goyaml-cases.json'), 'utf8')) as {
    kubectl: string;
    cases: Record<string, KubectlAnswer>;
  };
}

/** The pinned kubectl (hack/build-cluster.sh paths); throws, naming the command to build it, when absent. */
export function pinnedKubectl(root = join(import.meta.dirname, '../..')): string {
  const run = spawnSync(join(root, 'hack/build-cluster.sh'), ['paths'], { encoding: 'utf8' });
  const dir = /KUBE_BIN_DIR=(.*)/.exec(run.stdout)?.[1];
  if (!dir) throw new Error('hack/build-cluster.sh paths named no KUBE_BIN_DIR');
  const kubectl = join(dir, 'kubectl');
  const version = spawnSync(kubectl, ['version', '--client'], { encoding: 'utf8' });
  if (version.status !== 0) throw new Error(`the pinned kubectl is not built at ${kubectl}: run hack/build-cluster.sh`);
  return kubectl;
}

/** `v1.36.3`: which kubectl answered. */
export function kubectlVersion(kubectl: string): string {
  const out = spawnSync(kubectl, ['version', '--client', '-o', 'json'], { encoding: 'utf8' }).stdout;
  return (JSON.parse(out) as { clientVersion: { gitVersion: string } }).clientVersion.gitVersion;
}

const repoRoot = join(import.meta.dirname, '../..');

/** `packagesync render DIR -o FORMAT`, as a user runs it. */
export function renderCli(dir: string, format: 'yaml' | 'json'): string {
  const run = spawnSync(
    process.execPath,
    [join(repoRoot, 'bin/packagesync.js'), 'render', dir, '-o', format, '--namespace', 'yaml-roundtrip'],
    { encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  if (run.status !== 0) throw new Error(`render ${relative(repoRoot, dir)} failed: ${run.stderr}`);
  return run.stdout;
}
