import { describe, expect, it } from 'vitest';
import { checkParseBudget, countDocuments, maxPackageDocuments, parseManifestFile } from './parse.ts';
import { readObjects } from './render.ts';
import { objectsOfHelmOutput } from './built.ts';

describe('the parser is bounded before it parses (issue 34)', () => {
  it('countDocuments counts --- and ... markers at line starts, never fewer than the parser sees', () => {
    expect(countDocuments('a: 1\n')).toBe(1);
    expect(countDocuments('---\na: 1\n---\n---\n')).toBe(4);
    expect(countDocuments('a: |\n  ---x\n---  # c\nb: 1\n...\n')).toBe(3);
    expect(countDocuments('---x: 1\n')).toBe(1);
  });

  it('three files of 10⁶ empty documents are refused quickly, with bounded memory, naming the file', () => {
    const content = '---\n'.repeat(1_000_000); // 4 MB each: under the per-file byte limit
    const files = ['a.yaml', 'b.yaml', 'c.yaml'].map((name) => ({ path: `app/${name}`, content }));
    const heapBefore = process.memoryUsage().heapUsed;
    const started = performance.now();
    const read = readObjects(files);
    const seconds = (performance.now() - started) / 1000;
    const grown = process.memoryUsage().heapUsed - heapBefore;
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.failure.reason).toBe('RenderFailed');
    expect(read.failure.message).toBe(
      `app/a.yaml: the package holds more than ${maxPackageDocuments} YAML documents (counted before parsing); split it into several packages`,
    );
    expect(seconds).toBeLessThan(5);
    expect(grown).toBeLessThan(64 << 20);
  });

  it('the budget covers the whole package: files each under it, together over it', () => {
    const content = '---\n'.repeat(maxPackageDocuments / 2);
    const r = checkParseBudget([
      { path: 'a.yaml', content },
      { path: 'b.yaml', content },
      { path: 'c.yaml', content },
    ]);
    expect(!r.ok && r.failure.message).toMatch(/^b\.yaml: the package holds more than/);
  });

  it('tool output is bounded the same way (helm template, kustomize build)', () => {
    const r = objectsOfHelmOutput('---\n# Source: web/templates/a.yaml\n'.repeat(maxPackageDocuments + 1), 'app');
    expect(!r.ok && r.failure.message).toMatch(/^helm template app: the package holds more than \d+ YAML documents/);
    const k = parseManifestFile({ path: 'kustomize build app', content: '---\n'.repeat(maxPackageDocuments + 1) });
    expect(!k.ok && k.failure.message).toMatch(/^kustomize build app: the package holds more than/);
  });

  it('a document count under the limit still parses, streamed one document at a time', () => {
    const content = 'a: 1\n---\n'.repeat(10_000);
    const r = parseManifestFile({ path: 'x.yaml', content });
    expect(r.ok && r.value.length).toBe(10_000);
  });
});
