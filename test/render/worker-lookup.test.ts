// spec.helm.lookup through the render worker (docs/adr/0038): mid-render the worker asks over its frames and
// the render's HelmLookup answers (in the controller: the cluster as the PackageSync's identity,
// engine/helm-lookup.ts, e2e/render-helm-lookup.test.ts). Here the answers are given, to pin the protocol and
// Helm's own rules: a name gets an object, none a list; not found is nothing; forbidden fails the template with
// the API server's message, as Helm's lookup fails; lookup off answers nothing; such a render is never cached;
// the subprocess engine refuses it.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRenderer, type BuildRequest } from '../../src/adapters/render/build.ts';
import type { HelmLookup, LookupAnswer, LookupQuery } from '../../src/adapters/render/worker-lookup.ts';
import { defaultToolPaths } from '../../src/config/tool-paths.ts';

const tools = defaultToolPaths();
const limits = { timeoutMs: 60_000, maxOutputBytes: 16 << 20, maxFiles: 10_000 };
let root: string;

const files: Record<string, string> = {
  'Chart.yaml': 'apiVersion: v2\nname: looks\nversion: 0.1.0\n',
  'values.yaml': 'secretNamespace: ""\nlist: false\n',
  'templates/cm.yaml': [
    '{{- $src := lookup "v1" "ConfigMap" .Release.Namespace "source" }}',
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata: {name: looked-up}',
    'data:',
    '  colour: {{ dig "data" "colour" "none" $src | quote }}',
    '  {{- if .Values.secretNamespace }}',
    '  secret: {{ lookup "v1" "Secret" .Values.secretNamespace "hidden" | toJson | quote }}',
    '  {{- end }}',
    '  {{- if .Values.list }}',
    '  names: {{ range (lookup "v1" "ConfigMap" "shop" "").items }}{{ .metadata.name }},{{ end }}',
    '  {{- end }}',
    '',
  ].join('\n'),
};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'worker-lookup-'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, 'chart', path)), { recursive: true });
    await writeFile(join(root, 'chart', path), text);
  }
});
afterAll(() => rm(root, { recursive: true, force: true }));

const workers = () =>
  createRenderer({
    kustomizePath: tools.kustomize,
    helmPath: tools.helm,
    limits,
    engine: 'worker',
    worker: { bin: tools.worker, size: 1, readRoots: [root] },
  });

const request = (extra: Partial<BuildRequest>): BuildRequest => ({
  checkoutRoot: root,
  packagePath: 'chart',
  commit: 'c0ffee',
  files: [],
  spec: { helm: { includeCRDs: true } },
  releaseName: 'web',
  releaseNamespace: 'shop',
  ...extra,
});

/** A HelmLookup answering from a table, recording what it was asked. */
function answering(table: (q: LookupQuery) => LookupAnswer): { lookup: HelmLookup; asked: LookupQuery[] } {
  const asked: LookupQuery[] = [];
  return { asked, lookup: async (q) => (asked.push(q), table(q)) };
}

const source = (colour: string) => ({
  object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'source' }, data: { colour } },
});

describe('Helm lookup through the render worker', () => {
  it('answers from the HelmLookup, asked with the template’s own arguments; a render that looks up is never cached', async () => {
    const renderer = workers();
    try {
      let colour = 'teal';
      const { lookup, asked } = answering(() => source(colour));
      const first = await renderer.build(request({ lookup }));
      if (!first.ok) throw new Error(first.failure.message);
      expect(first.value.objects[0]?.object.data).toEqual({ colour: 'teal' });
      expect(asked).toEqual([{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'source' }]);
      colour = 'ochre'; // the cluster changed; the commit did not
      const second = await renderer.build(request({ lookup }));
      if (!second.ok) throw new Error(second.failure.message);
      expect(second.value.objects[0]?.object.data).toEqual({ colour: 'ochre' });
      expect(renderer.stats()).toMatchObject({ toolRuns: 2, cacheHits: 0 });
    } finally {
      renderer.close();
    }
  });

  it('not found is nothing; a list is asked with no name; forbidden fails the template with the server’s message', async () => {
    const renderer = workers();
    try {
      const forbidden = `secrets "hidden" is forbidden: User "system:serviceaccount:shop:deployer" cannot get resource "secrets" in API group "" in the namespace "vault"`;
      const { lookup, asked } = answering((q) =>
        q.kind === 'Secret'
          ? { code: 403, reason: 'Forbidden', message: forbidden }
          : q.name === ''
            ? {
                object: {
                  apiVersion: 'v1',
                  kind: 'ConfigMapList',
                  items: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }],
                },
              }
            : { code: 404, reason: 'NotFound', message: 'configmaps "source" not found' },
      );
      const listed = await renderer.build(
        request({ lookup, spec: { helm: { includeCRDs: true, values: { list: true } } } }),
      );
      if (!listed.ok) throw new Error(listed.failure.message);
      expect(listed.value.objects[0]?.object.data).toEqual({ colour: 'none', names: 'a,b,' });
      expect(asked.at(-1)).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: '' });
      const refused = await renderer.build(
        request({ lookup, spec: { helm: { includeCRDs: true, values: { secretNamespace: 'vault' } } } }),
      );
      if (refused.ok) throw new Error('expected the forbidden lookup to fail the render');
      expect(refused.failure.reason).toBe('RenderFailed');
      expect(refused.failure.message).toContain('error calling lookup');
      expect(refused.failure.message).toContain(forbidden);
      expect(refused.failure.message).toContain('looks/templates/cm.yaml');
    } finally {
      renderer.close();
    }
  });

  it('off, lookup answers nothing and nothing is asked (as helm template); the subprocess engine refuses it on', async () => {
    const renderer = workers();
    try {
      const off = await renderer.build(request({}));
      if (!off.ok) throw new Error(off.failure.message);
      expect(off.value.objects[0]?.object.data).toEqual({ colour: 'none' });
    } finally {
      renderer.close();
    }
    const subprocess = createRenderer({ kustomizePath: tools.kustomize, helmPath: tools.helm, limits });
    const refused = await subprocess.build(request({ lookup: answering(() => ({})).lookup }));
    if (refused.ok) throw new Error('expected the subprocess engine to refuse lookup');
    expect(refused.failure.message).toContain('spec.helm.lookup needs the render worker');
  });
});
