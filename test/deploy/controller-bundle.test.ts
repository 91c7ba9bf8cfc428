/**
 * The image runs the controller as one esbuild bundle of src/ (hack/build-controller.ts, docs/adr/0052). A bundle has
 * one import.meta.url for every module it holds, so a file named relative to a module's own place would be looked
 * for elsewhere once bundled: every such path goes through src/config/repo-root.ts, at the bundle's depth.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { buildController } from '../../hack/build-controller.ts';

const root = resolve(import.meta.dirname, '../..');

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sources(p)));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !p.includes('/testdata/')) out.push(p);
  }
  return out;
}

describe('the controller bundle', () => {
  it('names files from the root only through config/repo-root.ts', async () => {
    const users: string[] = [];
    for (const f of await sources(join(root, 'src')))
      if ((await readFile(f, 'utf8')).includes('import.meta.url')) users.push(relative(root, f));
    expect(users).toEqual(['src/config/repo-root.ts']);
  });

  it('runs from <root>/dist/controller and finds the root’s files, as the image runs it', async () => {
    // a root of its own (the checkout's files linked in), so the build never rewrites the dist/ a running test reads
    const tmp = await mkdtemp(join(tmpdir(), 'ps-bundle-'));
    try {
      for (const f of ['package.json', 'hack', 'node_modules']) await symlink(join(root, f), join(tmp, f));
      await buildController(join(tmp, 'dist/controller'));
      const bundle = await readFile(join(tmp, 'dist/controller/main.js'), 'utf8');
      // every module of src/ inside it: no import of a .ts file is left for node to strip
      expect(bundle).not.toMatch(/from\s+["'][^"']+\.ts["']/);
      const { stdout } = await promisify(execFile)('node', [join(tmp, 'dist/controller/main.js'), 'version'], {
        timeout: 60_000,
      });
      const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
      expect(stdout).toContain(`packagesync ${pkg.version}`);
      // the render worker's build found through hack/render-worker's sources, as from src/
      expect(stdout).toMatch(/render worker: \S*render-worker-[0-9a-f]{12}\/render-worker/);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });
});
