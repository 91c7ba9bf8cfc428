/**
 * `render`, `diff` and `apply` read a directory the way the controller reads a checkout. The CLI used to
 * walk the directory itself: it skipped `.YAML` files the controller applies, printed objects in file
 * order without the digest annotation the applier stamps, and followed symlinks out of the package.
 */
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { desiredDigest } from '../core/plan/index.ts';
import { CliError } from './exit-codes.ts';
import { renderDir } from './local-package.ts';

const owner = { name: 'web', namespace: 'team-a' };
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function dir(files: Record<string, string>): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'psync-cli-unit-'));
  dirs.push(d);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(d, path, '..'), { recursive: true });
    await writeFile(join(d, path), content);
  }
  return d;
}

describe('renderDir', () => {
  it('reads what the controller reads and returns the objects as the applier sends them, in apply order', async () => {
    const d = await dir({
      'a/CM.YAML': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {k: v}\n',
      'z-ns.yml': 'apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n',
      'README.md': '# not a manifest',
    });
    const r = await renderDir(d, { owner, allowEmpty: false });
    const sent = r.ordered;
    expect(sent.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['Namespace/team-a', 'ConfigMap/settings']);
    for (const obj of sent) {
      const desired = r.desired.find((o) => o.kind === obj.kind)!;
      expect(obj.metadata.annotations?.['packagesync.io/digest']).toBe(desiredDigest(desired));
      expect(obj.metadata.labels).toEqual({ 'packagesync.io/name': 'web', 'packagesync.io/namespace': 'team-a' });
    }
    expect(sent[1]!.metadata.namespace).toBe('team-a');
  });

  it('orders by the dependency graph (depends-on first); a cycle falls back to kind order', async () => {
    const cm = (name: string, dep: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "${name}"\n  annotations: {config.kubernetes.io/depends-on: "${dep}"}\n`;
    const graph = await dir({
      'a.yaml': cm('cfg', 'apps/namespaces/team-a/Deployment/db'),
      'db.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: db}\nspec: {}\n',
    });
    const label = (o: { kind: string; metadata: { name: string } }) => `${o.kind}/${o.metadata.name}`;
    expect((await renderDir(graph, { owner, allowEmpty: false })).ordered.map(label)).toEqual([
      'Deployment/db',
      'ConfigMap/cfg',
    ]);
    const cycle = await dir({
      'x.yaml': cm('x', '/namespaces/team-a/ConfigMap/y'),
      'y.yaml': cm('y', '/namespaces/team-a/ConfigMap/x'),
    });
    expect((await renderDir(cycle, { owner, allowEmpty: false })).ordered.map(label)).toEqual([
      'ConfigMap/x',
      'ConfigMap/y',
    ]);
  });

  it('refuses a symlink that leaves the package, an unreadable directory and an empty package', async () => {
    const outside = await dir({ 'secret.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n' });
    const d = await dir({});
    await symlink(join(outside, 'secret.yaml'), join(d, 'link.yaml'));
    await expect(renderDir(d, { owner, allowEmpty: false })).rejects.toThrow(/PathEscape/);
    await expect(renderDir(join(d, 'missing'), { owner, allowEmpty: false })).rejects.toBeInstanceOf(CliError);
    const empty = await dir({ 'README.md': 'x' });
    await expect(renderDir(empty, { owner, allowEmpty: false })).rejects.toThrow(/EmptyRender/);
    expect((await renderDir(empty, { owner, allowEmpty: true })).desired).toEqual([]);
  });
});
