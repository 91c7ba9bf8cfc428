// `packagesync render` goes through the controller's chooser: a kustomize overlay or a chart in a directory
// renders with owner labels and namespaces as the controller would apply it.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderDir } from '../../src/cli/local-package.ts';

const testdata = join(import.meta.dirname, 'testdata');
const owner = { name: 'web', namespace: 'team-a' };

describe('renderDir (render, diff, apply)', () => {
  it('builds a kustomize overlay whose base lies elsewhere in the same directory tree', async () => {
    const r = await renderDir(join(testdata, 'kustomize-repo/overlays/prod'), { owner, allowEmpty: false });
    const names = r.desired.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`);
    expect(names).toContain('Deployment/web-prod/prod-web');
    expect(r.desired.every((o) => o.metadata.labels?.['packagesync.io/name'] === 'web')).toBe(true);
    expect(JSON.stringify(r.desired)).not.toContain('config.kubernetes.io/origin');
  });

  it('templates a chart through helm (here failing on its own required value, which helm names)', async () => {
    await expect(renderDir(join(testdata, 'helm-repo/charts/web'), { owner, allowEmpty: false })).rejects.toThrow(
      /helm template .* failed .*database\.password is required/,
    );
  });
});
