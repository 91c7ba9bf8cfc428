/**
 * Regenerates src/core/render/testdata/goyaml-cases.json: each case of goyaml-cases.yaml as the pinned kubectl
 * decodes it (go-yaml v2 via sigs.k8s.io/yaml; no cluster needed). test/render/goyaml-kubectl.test.ts checks the
 * stored answers against kubectl on every run.
 *
 *   node hack/goyaml-cases.ts
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  casesDir,
  kubectlCase,
  kubectlVersion,
  pinnedKubectl,
  readCases,
  type KubectlAnswer,
} from '../test/support/kubectl-decode.ts';

const kubectl = pinnedKubectl();
const cases: Record<string, KubectlAnswer> = {};
for (const [name, body] of Object.entries(readCases())) cases[name] = kubectlCase(kubectl, body);
const version = kubectlVersion(kubectl);
writeFileSync(join(casesDir, 'goyaml-cases.json'), `${JSON.stringify({ kubectl: version, cases }, null, 2)}\n`);
process.stdout.write(`${Object.keys(cases).length} cases written with kubectl ${version}\n`);
