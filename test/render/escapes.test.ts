// The five escapes of issue 34, each refused by the checks before any tool runs (the tool paths below do not
// exist: a check that let one through would fail as "binary missing", not RenderRefused). The kernel
// sandbox denies them too (docs/adr/0033); these are the named, explained refusals.
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRenderer, type BuildRequest } from '../../src/adapters/render/build.ts';

const renderer = createRenderer({
  kustomizePath: '/nonexistent/kustomize',
  helmPath: '/nonexistent/helm',
  limits: { timeoutMs: 10_000, maxOutputBytes: 1 << 20, maxFiles: 1000 },
  cacheEntries: 0,
});
let base: string;
let n = 0;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'render-escapes-'));
});
afterAll(() => rm(base, { recursive: true, force: true }));

/** <base>/case-N/repo with `files` (text, or {link}); <base>/case-N/outside holds a canary and a kustomization. */
async function repo(files: Record<string, string | { link: string }>): Promise<string> {
  const dir = join(base, `case-${++n}`);
  const root = join(dir, 'repo');
  await mkdir(join(dir, 'outside'), { recursive: true });
  await writeFile(join(dir, 'outside', 'canary.txt'), 'CANARY-outside\n');
  await writeFile(join(dir, 'outside', 'kustomization.yaml'), 'configMapGenerator: [{name: x, files: [canary.txt]}]\n');
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    if (typeof content === 'string') await writeFile(join(root, path), content);
    else await symlink(content.link, join(root, path));
  }
  return root;
}

async function refusal(root: string, packagePath = 'app', extra: Partial<BuildRequest> = {}) {
  const built = await renderer.build({
    checkoutRoot: root,
    packagePath,
    files: [],
    spec: {},
    releaseName: 'web',
    releaseNamespace: 'team-a',
    ...extra,
  });
  if (built.ok) throw new Error('expected a refusal');
  expect(built.failure.message).not.toContain('CANARY');
  expect(built.failure.message).not.toContain(base);
  return built.failure;
}

const chart = 'apiVersion: v2\nname: web\nversion: 0.1.0\n';

describe('(1) containment compares path segments, not string prefixes', () => {
  it('a chart symlink app/extra → ../app-files is walked, and its link out of the checkout refused', async () => {
    const root = await repo({
      'app/Chart.yaml': chart,
      'app/extra': { link: '../app-files' },
      'app-files/leak.txt': { link: '../../outside/canary.txt' },
    });
    const f = await refusal(root);
    expect(f.reason).toBe('RenderRefused');
    expect(f.message).toContain('app-files/leak.txt is a symlink that points outside the repository');
  });
});

describe('(2) values.schema.json references must stay inside the chart', () => {
  it.each([
    ['http', 'http://127.0.0.1:9/schema.json', 'points outside the chart'],
    ['file://', 'file:///etc/passwd', 'points outside the chart'],
    ['an absolute path', '/etc/passwd', 'points outside the chart'],
    ['a relative path leaving the chart', '../../outside/canary.txt', 'resolves outside the chart'],
    ['a relative path inside the checkout but outside the chart', '../other.json', 'resolves outside the chart'],
  ])('%s', async (_, ref, said) => {
    const root = await repo({
      'app/Chart.yaml': chart,
      'app/values.schema.json': JSON.stringify({ properties: { a: { $ref: ref } } }),
      'other.json': '{}',
    });
    const f = await refusal(root);
    expect(f.reason).toBe('RenderRefused');
    expect(f.message).toContain(`app/values.schema.json: $ref ${JSON.stringify(ref)}`);
    expect(f.message).toContain(said);
  });

  it('a relative reference to a chart file is followed and checked in turn; a subchart schema too', async () => {
    const root = await repo({
      'app/Chart.yaml': chart,
      'app/values.schema.json': JSON.stringify({
        $ref: 'defs/a.json',
        definitions: { x: { $ref: '#/definitions/y' } },
      }),
      'app/defs/a.json': JSON.stringify({ $ref: 'https://h/b.json' }),
    });
    expect((await refusal(root)).message).toContain('app/defs/a.json: $ref "https://h/b.json"');
    const sub = await repo({
      'app/Chart.yaml': chart,
      'app/charts/db/Chart.yaml': chart,
      'app/charts/db/values.schema.json': JSON.stringify({ $schema: 'http://127.0.0.1:9/meta' }),
    });
    expect((await refusal(sub)).message).toContain('app/charts/db/values.schema.json: $schema');
  });

  it('a relative reference under an absolute $id would be fetched: refused', async () => {
    const root = await repo({
      'app/Chart.yaml': chart,
      'app/values.schema.json': JSON.stringify({ $id: 'http://127.0.0.1:9/', $ref: 'b.json' }),
      'app/b.json': '{}',
    });
    expect((await refusal(root)).message).toContain('relative to an absolute $id');
  });
});

describe('(3) a kustomization file that is itself a symlink out of the checkout', () => {
  it('at the package path', async () => {
    const root = await repo({ 'app/kustomization.yaml': { link: '../../outside/kustomization.yaml' } });
    const f = await refusal(root);
    expect(f.reason).toBe('RenderRefused');
    expect(f.message).toContain('app/kustomization.yaml is a symlink that resolves outside the repository');
  });

  it('in a base', async () => {
    const root = await repo({
      'app/kustomization.yaml': 'resources: [../base]\n',
      'base/kustomization.yaml': { link: '../../outside/kustomization.yaml' },
    });
    const f = await refusal(root);
    expect(f.reason).toBe('RenderRefused');
    expect(f.message).toContain('base/kustomization.yaml is a symlink that resolves outside the repository');
  });
});

describe('(4) merge keys, anchors and aliases in kustomization files are refused', () => {
  it.each([
    [
      'a merge key hiding a generator',
      '<<: {configMapGenerator: [{name: x, files: [/etc/passwd]}]}\n',
      'a merge key (<<)',
    ],
    ['a merge key hiding a remote base', '<<: {resources: ["http://127.0.0.1:9/x"]}\n', 'a merge key (<<)'],
    ['an anchor and alias', 'x: &a [/etc/passwd]\nresources: *a\n', 'an anchor (&a)'],
  ])('%s', async (_, text, said) => {
    const root = await repo({ 'app/kustomization.yaml': text });
    const f = await refusal(root);
    expect(f.reason).toBe('RenderRefused');
    expect(f.message).toContain(`app/kustomization.yaml uses ${said}`);
  });

  it('in a plugin config a kustomization names', async () => {
    const root = await repo({
      'app/kustomization.yaml': 'transformers: [t.yaml]\n',
      'app/t.yaml': 'kind: LabelTransformer\nmetadata: &m {name: t}\nx: *m\n',
    });
    expect((await refusal(root)).message).toContain('uses an anchor (&m)');
  });
});

describe('(5) URL-shaped entries are refused in every field, even when a path of that name exists', () => {
  // join(dir, "http://h/x") is http:/h/x: the checks once found it on disk and let kustomize fetch the URL
  const onDisk = { 'app/http:/127.0.0.1:9/x.yaml': 'a: b\n', 'app/git::http:/127.0.0.1:9/r/kustomization.yaml': '' };
  it.each([
    ['resources', 'resources: ["git::http://127.0.0.1:9/r"]', 'remote bases are refused'],
    ['resources (scp form)', 'resources: ["git@127.0.0.1:r"]', 'remote bases are refused'],
    ['components', 'components: ["https://127.0.0.1:9/c"]', 'remote bases are refused'],
    [
      'configMapGenerator files',
      'configMapGenerator: [{name: c, files: ["k=http://127.0.0.1:9/x.yaml"]}]',
      'remote files are refused',
    ],
    [
      'secretGenerator envs',
      'secretGenerator: [{name: c, envs: ["http://127.0.0.1:9/x.yaml"]}]',
      'remote files are refused',
    ],
    ['patches', 'patches: [{path: "http://127.0.0.1:9/x.yaml"}]', 'remote files are refused'],
    ['crds', 'crds: ["http://127.0.0.1:9/x.yaml"]', 'remote files are refused'],
    ['configurations', 'configurations: ["//127.0.0.1/x.yaml"]', 'remote files are refused'],
    ['openapi', 'openapi: {path: "http://127.0.0.1:9/x.yaml"}', 'remote files are refused'],
    ['transformers', 'transformers: ["http://127.0.0.1:9/x.yaml"]', 'remote files are refused'],
    ['replacements', 'replacements: [{path: "file:///etc/passwd"}]', 'remote files are refused'],
  ])('%s', async (field, text, said) => {
    const root = await repo({ ...onDisk, 'app/kustomization.yaml': `${text}\n` });
    const f = await refusal(root);
    expect(f.reason).toBe('RenderRefused');
    expect(f.message).toContain('app/kustomization.yaml');
    expect(f.message).toContain(said);
  });

  it.each(['github.com/org/repo//deploy?ref=v1', 'git::https://127.0.0.1:9/r.git//deploy'])(
    'a remote base %s that does not exist says RenderRefused … remote bases are refused (docs/reasons.md)',
    async (value) => {
      const root = await repo({ 'app/kustomization.yaml': `resources: [${JSON.stringify(value)}]\n` });
      const f = await refusal(root);
      expect(f.reason).toBe('RenderRefused');
      expect(f.message).toMatch(/remote bases are refused/);
      expect(f.message).not.toContain('does not exist');
    },
  );
});
