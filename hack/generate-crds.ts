// Writes crds/ from the zod schemas in src/api (`make crds`). A unit test fails when they differ.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  CRD_FILE,
  crdYaml,
  NOTIFIER_CRD_FILE,
  notifierCrdYaml,
  SET_CRD_FILE,
  setCrdYaml,
} from '../src/api/crd-yaml.ts';

for (const [path, text] of [
  [CRD_FILE, crdYaml()],
  [NOTIFIER_CRD_FILE, notifierCrdYaml()],
  [SET_CRD_FILE, setCrdYaml()],
] as const) {
  const file = resolve(import.meta.dirname, '..', path);
  writeFileSync(file, text);
  console.log(`wrote ${file}`);
}
