// Writes crds/ from the zod schema in src/api (`make crds`). A unit test fails when they differ.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { crdYaml } from '../src/api/crd-yaml.ts';

const file = resolve(import.meta.dirname, '../crds/packagesync.io_packagesyncs.yaml');
writeFileSync(file, crdYaml());
console.log(`wrote ${file}`);
