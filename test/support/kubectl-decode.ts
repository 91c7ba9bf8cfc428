/**
 * What kubectl makes of a YAML text: `kubectl create --dry-run=client -o json` reads the file through
 * sigs.k8s.io/yaml (go-yaml v2), exactly as `kubectl apply`, Helm and Flux do, and prints the object it would
 * send. The only source of expected values for the YAML 1.1 cases (src/core/render/testdata/goyaml-cases.*).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/** A case's text is the body of this object. */
export const caseHead = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: goyaml-case\n';

export type KubectlAnswer = { value: Record<string, unknown> } | { error: string };

/** Every object of `yaml` as kubectl decodes it (a List when several), or its error's first line. */
export function kubectlDecode(
  kubectl: string,
  kubeconfig: string,
  yaml: string,
): { json: unknown } | { error: string } {
  const run = spawnSync(
    kubectl,
    ['--kubeconfig', kubeconfig, 'create', '--dry-run=client', '--validate=false', '-o', 'json', '-f', '-'],
    { input: yaml, encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  if (run.error) throw run.error;
  if (run.status !== 0) return { error: (run.stderr.split('\n')[0] ?? '').trim() };
  return { json: JSON.parse(run.stdout) as unknown };
}

/** One case as kubectl reads it: the object's body without apiVersion, kind and metadata. */
export function kubectlCase(kubectl: string, kubeconfig: string, body: string): KubectlAnswer {
  const decoded = kubectlDecode(kubectl, kubeconfig, caseHead + body);
  if ('error' in decoded) return { error: errorKind(decoded.error) };
  const { apiVersion: _a, kind: _k, metadata: _m, ...value } = decoded.json as Record<string, unknown>;
  return { value };
}

/** The error without the parts that change from run to run (temporary paths, stdin's name). */
function errorKind(message: string): string {
  return message.replace(/^error: /, '').replace(/"STDIN"|STDIN/g, 'stdin');
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

/** The pinned kubectl (hack/build-cluster.sh paths); throws when it was not built. */
export function pinnedKubectl(root = join(import.meta.dirname, '../..')): string {
  const run = spawnSync(join(root, 'hack/build-cluster.sh'), ['paths'], { encoding: 'utf8' });
  const dir = /KUBE_BIN_DIR=(.*)/.exec(run.stdout)?.[1];
  if (!dir) throw new Error('hack/build-cluster.sh paths named no KUBE_BIN_DIR');
  return join(dir, 'kubectl');
}
