import { describe, expect, it } from 'vitest';
import { render, rendered } from '../../../test/support/render.ts';
import type { Failure } from '../failure.ts';
import type { RenderOptions } from './types.ts';

function failed(files: Record<string, string>, options: Partial<RenderOptions> = {}): Failure {
  const result = render(files, options);
  if (result.ok) throw new Error('expected render to fail');
  return result.failure;
}

const cm = (name: string, namespace?: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${namespace ? `  namespace: ${namespace}\n` : ''}data:\n  k: v\n`;

describe('renderPackage: failures', () => {
  it.each([
    [
      'a scalar document',
      { 'a.yaml': 'just text\n' },
      'a.yaml:1: not a mapping; each document must be one Kubernetes object',
    ],
    ['a list document', { 'a.yaml': cm('x') + '---\n- a\n- b\n' }, 'a.yaml:8: not a mapping'],
    [
      'no apiVersion',
      { 'a.yaml': 'kind: ConfigMap\nmetadata: {name: x}\n' },
      'a.yaml:1: no apiVersion; set apiVersion',
    ],
    ['no kind', { 'a.yaml': 'apiVersion: v1\nmetadata: {name: x}\n' }, 'a.yaml:1: no kind; set kind'],
    [
      'no metadata',
      { 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\n' },
      'a.yaml:1: ConfigMap has no metadata; set metadata.name',
    ],
    [
      'no name',
      { 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: n}\n' },
      'a.yaml:1: ConfigMap has no metadata.name; set metadata.name',
    ],
    [
      'generateName',
      { 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: x-}\n' },
      'generateName cannot be applied declaratively',
    ],
    ['empty name', { 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ""}\n' }, 'has no metadata.name'],
    [
      'a name that is a dot segment',
      { 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ".."}\n' },
      'a.yaml:1: ConfigMap has metadata.name "..": a name may not be "." or "..", nor contain "/" or "%"',
    ],
    ['a name that is "."', { 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: .}\n' }, 'metadata.name "."'],
    [
      'a name with a slash',
      { 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a/../../x}\n' },
      'metadata.name "a/../../x"',
    ],
    ['a name with a %', { 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "%2e%2e"}\n' }, '"%2e%2e"'],
    [
      'a namespace that is a dot segment',
      { 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: ".."}\n' },
      'ConfigMap x has metadata.namespace "..": a namespace is a DNS label',
    ],
    [
      'a namespace with a slash',
      { 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: "a/b"}\n' },
      'metadata.namespace "a/b"',
    ],
    ['a number as kind', { 'a.yaml': 'apiVersion: v1\nkind: 3\nmetadata: {name: x}\n' }, 'no kind'],
    [
      'a non-string namespace',
      { 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: [a]}\n' },
      'metadata.namespace that is not a string',
    ],
    [
      'an unquoted boolean label',
      { 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {enabled: true}\n' },
      'a.yaml:1: ConfigMap x: metadata.labels has a non-string value for "enabled"; quote the value',
    ],
    [
      'labels as a list',
      { 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: [a]\n' },
      'metadata.labels must be a mapping of strings',
    ],
    [
      'a bad List item',
      {
        'l.yaml': `apiVersion: v1\nkind: List\nitems:\n- ${JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } })}\n- 42\n`,
      },
      'l.yaml:5: not a mapping',
    ],
    ['a List without items', { 'l.yaml': 'apiVersion: v1\nkind: List\n' }, 'l.yaml:1: List without an items list'],
  ])('InvalidManifest: %s', (_name, files, message) => {
    const f = failed(files);
    expect(f).toMatchObject({ reason: 'InvalidManifest', terminal: true });
    expect(f.message).toContain(message);
  });

  it('RenderFailed in one file fails the whole package, naming the file, line, column and document', () => {
    const f = failed({ 'a.yaml': cm('a'), 'b.yaml': cm('b') + '---\nx: 1\nx: 2\n', 'c.yaml': cm('c') });
    expect(f).toEqual({
      reason: 'RenderFailed',
      message: 'b.yaml:9:1 (document 2): duplicate mapping key "x"; remove one of them',
      terminal: true,
    });
  });

  it('does not quote Secret data in messages', () => {
    const f = failed({
      's.yaml': 'apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  password: "p4ss\\w0rd"\n',
    });
    expect(f.reason).toBe('RenderFailed');
    expect(f.message).not.toMatch(/p4ss|w0rd/);
  });

  it.each([
    ['a duplicate key', 'stringData:\n  password: hunter2\n  password: hunter3\n', 'RenderFailed'],
    ['a !!binary value', 'data:\n  password: !!binary aHVudGVy/w==\n', 'RenderFailed'],
    ['an unterminated string', 'stringData:\n  password: "hunter2\n', 'RenderFailed'],
    ['a non-JSON value next to it', 'stringData: {password: hunter2, x: .inf}\n', 'RenderFailed'],
    ['a label that is not a string', 'stringData: {password: hunter2}\nmetadata: {name: s, labels: {a: 1}}\n', ''],
  ])('names the file and document of a bad Secret, never its data (%s)', (_name, body, reason) => {
    const head = 'apiVersion: v1\nkind: Secret\n' + (body.includes('metadata:') ? '' : 'metadata: {name: s}\n');
    const f = failed({ 'ok.yaml': cm('a'), 'secret.yaml': cm('b') + '---\n' + head + body });
    if (reason) expect(f.reason).toBe(reason);
    // a YAML error names its own line and column; a bad object the line it starts on
    expect(f.message).toMatch(/secret\.yaml:\d+/);
    for (const form of ['hunter', 'aHVudGVy']) expect(f.message).not.toContain(form);
  });

  it.each<[string, Record<string, string>, Partial<RenderOptions>, string, string]>([
    [
      'in two files',
      { 'a.yaml': cm('x'), 'b.yaml': cm('x') },
      {},
      'x',
      'ConfigMap/team-a/x is defined twice, in a.yaml:1 and b.yaml:1; keep one definition',
    ],
    ['in one file', { 'a.yaml': cm('x') + '---\n' + cm('x', 'team-a') }, {}, 'x', 'in a.yaml:1 and a.yaml:8'],
    [
      'once defaulted, once named',
      { 'a.yaml': cm('x'), 'b.yaml': cm('x', 'team-a') },
      {},
      'x',
      'ConfigMap/team-a/x is defined twice',
    ],
    [
      'once named, once given targetNamespace',
      { 'a.yaml': cm('x', 'tgt'), 'b.yaml': cm('x') },
      { targetNamespace: 'tgt' },
      'x',
      'ConfigMap/tgt/x is defined twice',
    ],
    [
      'in two versions of one group',
      {
        'a.yaml': 'apiVersion: example.com/v1\nkind: W\nmetadata: {name: w}\n',
        'b.yaml': 'apiVersion: example.com/v2\nkind: W\nmetadata: {name: w}\n',
      },
      {},
      'w',
      'W.example.com/team-a/w is defined twice',
    ],
  ])('DuplicateObject %s', (_name, files, options, name, message) => {
    const f = failed(files, options);
    expect(f).toMatchObject({ reason: 'DuplicateObject', terminal: true, object: { name } });
    expect(f.message).toContain(message);
  });

  it('same name, different kind or namespace is not a duplicate', () => {
    const pkg = rendered({
      'a.yaml':
        cm('x', 'one') +
        '---\n' +
        cm('x', 'two') +
        '---\napiVersion: v1\nkind: Secret\nmetadata: {name: x, namespace: one}\n',
    });
    expect(pkg.objects).toHaveLength(3);
  });

  it.each([
    ['no files', {}],
    ['empty files', { 'a.yaml': '', 'b.yaml': '---\n---\n# nothing\n' }],
    ['local config only', { Kptfile: 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: {name: p}\n' }],
    ['empty Lists', { 'l.yaml': 'apiVersion: v1\nkind: List\nitems: []\n' }],
  ])('EmptyRender: %s, unless allowEmpty', (_name, files) => {
    const f = failed(files);
    expect(f.reason).toBe('EmptyRender');
    expect(f.message).toMatch(/renders no objects; commit manifests or set spec.allowEmpty: true$/);
    const pkg = rendered(files, { allowEmpty: true });
    expect(pkg.objects).toEqual([]);
    expect(pkg.digest).toMatch(/^[0-9a-f]{64}$/);
  });
});
