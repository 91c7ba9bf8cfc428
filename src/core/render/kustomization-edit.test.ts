import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { editKustomization } from './kustomization-edit.ts';

const edit = (text: string, spec?: Parameters<typeof editKustomization>[2]) => {
  const r = editKustomization(text, 'app/kustomization.yaml', spec);
  if (!r.ok) throw new Error(r.failure.message);
  return parse(r.value) as Record<string, unknown>;
};

describe('editKustomization', () => {
  // Session 17: the edit re-emitted the file, and `count: 010` (8 to kustomize, which reads go-yaml v2 rules)
  // came out `count: 10`: PackageSync applied 10 replicas where `kustomize build` gives 8.
  it('keeps what the file says as written: values go-yaml v2 reads otherwise than YAML 1.2 are not rewritten', () => {
    const file =
      'resources: [a.yaml]\nreplicas:\n  - name: web\n    count: 010\ngeneratorOptions: {disableNameSuffixHash: yes}\n';
    for (const spec of [undefined, { namePrefix: 'p-' }, { images: [{ name: 'x', newTag: '1' }] }]) {
      const r = editKustomization(file, 'k.yaml', spec);
      if (!r.ok) throw new Error(r.failure.message);
      expect(r.value).toContain('count: 010');
      expect(r.value).toMatch(/disableNameSuffixHash: yes/);
    }
  });

  it('without spec.kustomize, appends the one line to a block mapping; anything else is parsed', () => {
    const appended = (text: string) => editKustomization(text, 'k.yaml', undefined);
    expect(appended('# c\nresources: [a.yaml]\n')).toEqual({
      ok: true,
      value: '# c\nresources: [a.yaml]\nbuildMetadata: [originAnnotations]\n',
    });
    expect(appended('resources:\n- a.yaml')).toEqual({
      ok: true,
      value: 'resources:\n- a.yaml\nbuildMetadata: [originAnnotations]\n',
    });
    for (const text of [
      '{resources: [a.yaml]}\n',
      '---\nresources: []\n',
      '  resources: []\n',
      '# buildMetadata: []\nresources: []\n',
      '"resources": []\n',
    ])
      expect(edit(text).buildMetadata).toEqual(['originAnnotations']);
  });

  it('a value spec.kustomize adds is a string, whatever it spells (as Flux writes it)', () => {
    const k = edit('resources: []\n', { namePrefix: 'yes', images: [{ name: 'x', newTag: '010' }] });
    expect(k.namePrefix).toBe('yes');
    expect(k.images).toEqual([{ name: 'x', newTag: '010' }]);
  });

  it('adds originAnnotations, keeping what the file has', () => {
    expect(edit('resources: [a.yaml]\n')).toEqual({ resources: ['a.yaml'], buildMetadata: ['originAnnotations'] });
    expect(edit('buildMetadata: [managedByLabel]\n').buildMetadata).toEqual(['managedByLabel', 'originAnnotations']);
    expect(edit('buildMetadata: [originAnnotations]\n').buildMetadata).toEqual(['originAnnotations']);
    expect(edit('').buildMetadata).toEqual(['originAnnotations']);
  });

  it("applies spec.kustomize as Flux's generator: prefix/suffix replace, patches and components append, images replace by name", () => {
    const k = edit(
      [
        'namePrefix: old-',
        'resources: [a.yaml]',
        'components: [../c1]',
        'patches:',
        '  - path: p.yaml',
        'images:',
        '  - {name: nginx, newTag: "1.0"}',
        '  - {name: redis, newTag: "7"}',
      ].join('\n'),
      {
        namePrefix: 'new-',
        nameSuffix: '-x',
        components: ['../c2'],
        patches: [{ patch: 'p', target: { kind: 'Deployment', name: '' } }],
        images: [
          { name: 'nginx', newName: 'mirror/nginx' },
          { name: 'busybox', digest: 'sha256:abc' },
        ],
      },
    );
    expect(k.namePrefix).toBe('new-');
    expect(k.nameSuffix).toBe('-x');
    expect(k.components).toEqual(['../c1', '../c2']);
    expect(k.patches).toEqual([{ path: 'p.yaml' }, { patch: 'p', target: { kind: 'Deployment' } }]);
    expect(k.images).toEqual([
      { name: 'nginx', newName: 'mirror/nginx' },
      { name: 'redis', newTag: '7' },
      { name: 'busybox', digest: 'sha256:abc' },
    ]);
  });

  it.each([
    ['a component given as a URL', { components: ['https://example.com/c'] }, 'must be a relative path'],
    ['an absolute component', { components: ['/etc'] }, 'must be a relative path'],
  ])('refuses %s', (_name, spec, phrase) => {
    const r = editKustomization('resources: []\n', 'k.yaml', spec);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.failure.reason).toBe('RenderRefused');
      expect(r.failure.message).toContain(phrase);
    }
  });

  it('a YAML error names the file, line and column, never the text (spec.kustomize set: the file is parsed)', () => {
    const r = editKustomization('resources:\n  - a\n bad: [secret-ish\n', 'app/kustomization.yaml', {
      namePrefix: 'p-',
    });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.failure.message).toMatch(/^app\/kustomization\.yaml: .* at line \d+, column \d+/);
      expect(r.failure.message).not.toContain('secret-ish');
    }
  });
});
