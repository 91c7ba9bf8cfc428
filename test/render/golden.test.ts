// Golden files: each fixture package under testdata/ renders to testdata/<name>.golden.yaml.
// Update with `npx vitest run --project unit src/core/render -u` and review the diff.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { renderPackage } from '../../src/core/render/render.ts';
import type { RenderOptions, SourceFile } from '../../src/core/render/types.ts';

const testdata = join(import.meta.dirname, 'testdata');
const manifest = /\.(ya?ml|json)$/;

function readPackage(root: string): SourceFile[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && manifest.test(entry.name))
    .map((entry) => {
      const file = join(entry.parentPath, entry.name);
      return { path: relative(root, file), content: readFileSync(file, 'utf8') };
    });
}

const cases: [string, RenderOptions][] = [
  ['basic', { owner: { name: 'web', namespace: 'team-a' } }],
  ['crd', { owner: { name: 'widgets', namespace: 'platform' }, targetNamespace: 'widgets' }],
];

describe('renderPackage golden files', () => {
  it.each(cases)('%s', async (name, options) => {
    const result = renderPackage(readPackage(join(testdata, name)), options);
    if (!result.ok) throw new Error(result.failure.message);
    const { objects, digest, sources } = result.value;
    const header = `# digest: ${digest}\n# sources: ${JSON.stringify(Object.fromEntries(sources))}\n`;
    const body = objects.map((obj) => stringify(obj, { singleQuote: true })).join('---\n');
    await expect(header + body).toMatchFileSnapshot(join(testdata, `${name}.golden.yaml`));
  });
});
