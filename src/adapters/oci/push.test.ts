import { mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { list } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packDirectory } from './push.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'psync-pack-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function tree(name: string, when: Date): Promise<string> {
  const dir = join(root, name);
  await mkdir(join(dir, 'deploy'), { recursive: true });
  await mkdir(join(dir, '.git'), { recursive: true });
  await writeFile(join(dir, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  // written in another order each time: the tarball must not depend on it
  const files = ['deploy/b.yaml', 'deploy/a.yaml', 'c.yaml'];
  for (const f of name.endsWith('2') ? files.reverse() : files) {
    await writeFile(join(dir, f), `# ${f}\n`);
    await utimes(join(dir, f), when, when);
  }
  await symlink('deploy/a.yaml', join(dir, 'link.yaml'));
  return dir;
}

describe('packDirectory', () => {
  it('is reproducible: the same tree at other times and write orders gives the same bytes, without .git', async () => {
    const a = await packDirectory(await tree('one', new Date(1_000_000)), 'oci://r/x:v1');
    const b = await packDirectory(await tree('two2', new Date(2_000_000_000_000)), 'oci://r/x:v1');
    expect(a.ok && b.ok).toBe(true);
    if (!a.ok || !b.ok) return;

    expect(a.value.equals(b.value)).toBe(true);
    const file = join(root, 'one.tgz');
    await writeFile(file, a.value);
    const entries: { path: string; mtime?: Date | undefined; uid?: number | undefined }[] = [];
    await list({ file, onReadEntry: (e) => entries.push({ path: e.path, mtime: e.mtime, uid: e.uid }) });
    expect(entries.map((e) => e.path)).toEqual(['c.yaml', 'deploy/', 'deploy/a.yaml', 'deploy/b.yaml', 'link.yaml']);
    // directories carry no mtime at all (node-tar portable mode); files and links carry 0
    expect(entries.every((e) => (e.mtime?.getTime() ?? 0) === 0 && (e.uid ?? 0) === 0)).toBe(true);
  });

  it('refuses a symbolic link out of the directory before packing', async () => {
    const dir = join(root, 'escape');
    await mkdir(dir);
    await symlink('/etc/passwd', join(dir, 'passwd.yaml'));
    const r = await packDirectory(dir, 'oci://r/x:v1');
    expect(!r.ok && r.failure.reason).toBe('ArtifactUnsafeEntry');
  });
});
