// A requested resync of an unchanged kustomize fleet runs no build: the controller's renderer, configured by
// the flags it runs with by default (src/main.ts → src/controller/run.ts), keeps every unit's build. With
// --render-cache-entries defaulting to 256 on the command line, a resync of the bench's 1,000 units ran
// 1,000 builds and hit the cache 0 times; this fleet is larger than that old bound.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuildRequest } from '../../src/adapters/render/build.ts';
import { controllerRenderer } from '../../src/controller/run.ts';
import { parseControllerArgs } from '../../src/main.ts';

const UNITS = 300;
let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'fleet-resync-'));
  const files: Record<string, string> = {
    'base/kustomization.yaml': 'resources: [cm.yaml]\n',
    'base/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {k: v}\n',
  };
  for (let i = 0; i < UNITS; i++)
    files[`fleet/unit-${i}/kustomization.yaml`] = `namePrefix: u${i}-\nresources: [../../base]\n`;
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
});
afterAll(() => rm(root, { recursive: true, force: true }));

const unit = (i: number): BuildRequest => ({
  checkoutRoot: root,
  packagePath: `fleet/unit-${i}`,
  commit: 'c'.repeat(40),
  files: [],
  spec: {},
  releaseName: `u${i}`,
  releaseNamespace: 'fleet',
});

/** Every unit once, a few at a time (the machine is shared); each must build. */
async function syncAll(render: (req: BuildRequest) => Promise<{ ok: boolean }>): Promise<void> {
  const next = { i: 0 };
  const worker = async () => {
    while (next.i < UNITS) {
      const i = next.i++;
      const r = await render(unit(i));
      expect(r.ok, `unit-${i}: ${JSON.stringify(r)}`.slice(0, 600)).toBe(true);
    }
  };
  await Promise.all([worker(), worker(), worker()]);
}

describe(`a requested resync of an unchanged fleet of ${UNITS} kustomize units`, () => {
  it('runs no build with the controller as configured by default', { timeout: 300_000 }, async () => {
    const renderer = controllerRenderer(parseControllerArgs([]));
    await syncAll((req) => renderer.build(req));
    const cold = renderer.stats();
    expect(cold.toolRuns).toBeGreaterThanOrEqual(UNITS);
    expect(cold.cacheHits).toBe(0);
    await syncAll((req) => renderer.build(req)); // the resync
    expect(renderer.stats()).toMatchObject({ toolRuns: cold.toolRuns, cacheHits: UNITS });
  });
});
