// The scratch view a kustomize build runs in holds only what the kustomization tree reaches: a package among
// many sibling directories (the bench's kfleet/ has 1,000) once got a symlink for every sibling of every
// directory on its path, ~1,000 per build. It still renders as `kustomize build` renders the checkout.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { createRenderer } from '../../src/adapters/render/build.ts';
import { checkKustomizationTree, repoPath } from '../../src/adapters/render/kustomize-check.ts';
import { materializedView } from '../../src/adapters/render/scratch-view.ts';
import { defaultToolPaths } from '../../src/config/tool-paths.ts';

const tools = defaultToolPaths();
const SIBLINGS = 300;
let base: string;
let root: string;

const deployment =
  'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers: [{name: web, image: nginx}]\n';
const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {k: v}\n`;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'scratch-view-'));
  root = join(base, 'repo');
  const files: Record<string, string> = {
    'README.md': 'not read\n',
    'bases/web/kustomization.yaml':
      'resources: [deployment.yaml]\nconfigMapGenerator:\n- name: settings\n  files: [app.properties=settings.properties]\n',
    'bases/web/deployment.yaml': deployment,
    'bases/web/settings.properties': 'a=b\n',
    'bases/web/unused.yaml': cm('unused'),
    'bases/linked/kustomization.yaml': 'resources: [cm.yaml]\n',
    'bases/linked/cm.yaml': cm('linked'),
    'bases/other/kustomization.yaml': 'resources: []\n',
    'components/mon/kustomization.yaml':
      'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- path: patch.yaml\n',
    'components/mon/patch.yaml':
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, annotations: {mon: "on"}}\n',
    'components/unused/kustomization.yaml': 'kind: Component\n',
    'fleet/unit-0007/kustomization.yaml': [
      'namePrefix: u7-',
      'resources: [../../bases/web, cm.yaml, link]',
      'components: [../../components/mon]',
      'generators: [gen.yaml]',
      '',
    ].join('\n'),
    'fleet/unit-0007/cm.yaml': cm('own'),
    'fleet/unit-0007/gen.yaml':
      'apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {name: generated}\nfiles: [gen.txt]\n',
    'fleet/unit-0007/gen.txt': 'generated\n',
    'fleet/unit-0007/unused.yaml': cm('unused'),
  };
  for (let i = 0; i < SIBLINGS; i++) {
    const unit = `fleet/unit-${String(i).padStart(4, '0')}`;
    files[`${unit}/kustomization.yaml`] ??= `namePrefix: u${i}-\nresources: [../../bases/web]\n`;
  }
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
  await symlink('../../bases/linked', join(root, 'fleet/unit-0007/link'));
});
afterAll(() => rm(base, { recursive: true, force: true }));

/** Every entry of the view, repo-relative: directories end in "/", symlinks show their target text. */
async function listing(dir: string, under = dir): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    const rel = relative(under, path);
    if (e.isDirectory()) out.push(`${rel}/`, ...(await listing(path, under)));
    else if (e.isSymbolicLink()) out.push(rel);
    else out.push(`${rel} (written)`);
  }
  return out.sort();
}

describe('the scratch view of a kustomize build', () => {
  it(`holds only what the kustomization tree reaches, not the package's ${SIBLINGS - 1} siblings`, async () => {
    const pkg = join(root, 'fleet/unit-0007');
    const file = join(pkg, 'kustomization.yaml');
    const tree = await checkKustomizationTree(root, pkg, { file, text: await readFile(file, 'utf8') });
    if (!tree.ok) throw new Error(tree.failure.message);
    const view = join(base, 'view');
    await materializedView(root, view, {
      reached: tree.value.reached.map((p) => repoPath(root, p)),
      files: new Map([['fleet/unit-0007/kustomization.yaml', 'edited\n']]),
    });
    expect(await listing(view)).toEqual(
      [
        'bases/',
        'bases/linked', // the link's target: made anew, as every kustomization directory
        'bases/linked/',
        'bases/linked/cm.yaml',
        'bases/linked/kustomization.yaml',
        'bases/web/',
        'bases/web/deployment.yaml',
        'bases/web/kustomization.yaml',
        'bases/web/settings.properties',
        'components/',
        'components/mon/',
        'components/mon/kustomization.yaml',
        'components/mon/patch.yaml',
        'fleet/',
        'fleet/unit-0007/',
        'fleet/unit-0007/cm.yaml',
        'fleet/unit-0007/gen.txt', // named by the generator's config
        'fleet/unit-0007/gen.yaml',
        'fleet/unit-0007/kustomization.yaml (written)',
        'fleet/unit-0007/link', // recreated with its own text, so it lands on the view's bases/linked
      ].filter((e) => e !== 'bases/linked'),
    );
    expect(await readFile(join(view, 'fleet/unit-0007/link/cm.yaml'), 'utf8')).toBe(cm('linked'));
  });

  it('renders as kustomize build renders the checkout', async () => {
    const upstream = execFileSync(
      tools.kustomize,
      ['build', '--load-restrictor', 'LoadRestrictionsNone', join(root, 'fleet/unit-0007')],
      { encoding: 'utf8' },
    );
    const scratchDir = join(base, 'scratch');
    await mkdir(scratchDir);
    const renderer = createRenderer({
      kustomizePath: tools.kustomize,
      helmPath: tools.helm,
      limits: { timeoutMs: 60_000, maxOutputBytes: 16 << 20, maxFiles: 10_000 },
      scratchDir,
    });
    const built = await renderer.build({
      checkoutRoot: root,
      packagePath: 'fleet/unit-0007',
      files: [],
      spec: {},
      releaseName: 'web',
      releaseNamespace: 'team-a',
    });
    if (!built.ok) throw new Error(built.failure.message);
    const documents = parseAllDocuments(upstream).map((d) => d.toJS() as unknown);
    expect(documents.length).toBe(5);
    expect(stringify(built.value.objects.map((o) => o.object))).toBe(stringify(documents));
    expect(await readdir(scratchDir)).toEqual([]);
  });
});

describe('the files a builtin generator or transformer config names', () => {
  // kustomize reads them relative to the kustomization: the view needs them, and the tree check now sees them,
  // so one naming a file outside the repository is refused like any other entry (before, kustomize read it)
  it.each([
    [
      'a generators file',
      { 'gen.yaml': 'apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {name: g}\nfiles: [/etc/hostname]\n' },
      'generators: [gen.yaml]',
    ],
    [
      'an inline transformer',
      {},
      'transformers:\n- |\n  apiVersion: builtin\n  kind: PatchTransformer\n  metadata: {name: p}\n  path: ../../outside.yaml\n',
    ],
  ])('%s naming a file outside the repository is refused', async (_, extra: Record<string, string>, field) => {
    const pkg = join(base, `outside-${Object.keys(extra).length}`, 'repo', 'app');
    await mkdir(pkg, { recursive: true });
    await writeFile(join(pkg, '..', '..', 'outside.yaml'), cm('stolen'));
    for (const [name, content] of Object.entries(extra)) await writeFile(join(pkg, name), content);
    const text = `resources: []\n${field}\n`;
    await writeFile(join(pkg, 'kustomization.yaml'), text);
    const tree = await checkKustomizationTree(dirname(pkg), pkg);
    expect(tree.ok).toBe(false);
    if (!tree.ok) {
      expect(tree.failure.reason).toBe('RenderRefused');
      expect(tree.failure.message).toMatch(/^app\/kustomization\.yaml: .*outside the repository/);
    }
  });
});
