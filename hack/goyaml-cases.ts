/**
 * Regenerates src/core/render/testdata/goyaml-cases.json: each case of goyaml-cases.yaml as the pinned
 * kubectl decodes it (go-yaml v2 via sigs.k8s.io/yaml). Needs a running control plane (kubectl resolves the
 * kind through discovery even for a client-side dry run):
 *
 *   hack/cluster.sh up && node hack/goyaml-cases.ts "$(hack/cluster.sh kubeconfig)"
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { casesDir, kubectlCase, pinnedKubectl, readCases, type KubectlAnswer } from '../test/support/kubectl-decode.ts';

const kubeconfig = process.argv[2];
if (!kubeconfig) throw new Error('usage: node hack/goyaml-cases.ts KUBECONFIG');
const kubectl = pinnedKubectl();
const version = execFileSync(kubectl, ['version', '--client', '-o', 'json'], { encoding: 'utf8' });
const cases: Record<string, KubectlAnswer> = {};
for (const [name, body] of Object.entries(readCases())) cases[name] = kubectlCase(kubectl, kubeconfig, body);
const gitVersion = (JSON.parse(version) as { clientVersion: { gitVersion: string } }).clientVersion.gitVersion;
writeFileSync(join(casesDir, 'goyaml-cases.json'), `${JSON.stringify({ kubectl: gitVersion, cases }, null, 2)}\n`);
process.stdout.write(`${Object.keys(cases).length} cases written with kubectl ${gitVersion}\n`);
