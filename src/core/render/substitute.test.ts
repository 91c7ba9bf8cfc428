/// <reference types="vite/types/importMeta.d.ts" />
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { envsubst } from './envsubst.ts';
import { emitGoYamlV2 } from './goyaml-emit.ts';
import { mergeVariables, substituteObject, type Substitution } from './substitute.ts';

/**
 * Flux's own output for each case: testdata/substitute-flux-golden.json was produced by running the upstream
 * code on these inputs (sigs.k8s.io/yaml v1.6.0 JSONToYAML → github.com/fluxcd/pkg/envsubst v1.7.0 with
 * kustomize-controller's mapping → YAMLToJSON). `fluxYaml` is the text Flux substitutes in (given where the
 * input's keys are already in go-yaml's sorted order); `fluxResult` what comes back, or `fluxError`.
 */
interface GoldenRow {
  group: string;
  object: Record<string, unknown>;
  variables: Record<string, string>;
  strict?: boolean;
  fluxYaml?: string;
  fluxResult?: unknown;
  fluxError?: string;
}
const goldenFiles: Record<string, string> = import.meta.glob('./testdata/substitute-flux-golden.json', {
  query: '?raw',
  import: 'default',
  eager: true,
});
const golden = JSON.parse(goldenFiles['./testdata/substitute-flux-golden.json']!) as GoldenRow[];

const where = { path: 'apps/web/config.yaml', document: 2, items: [] };
const substitute = (obj: Record<string, unknown>, s: Partial<Substitution>) =>
  substituteObject(obj, where, { variables: {}, strict: false, ...s });

/**
 * Where we refuse what Flux accepts, on purpose, as the renderer does for files (docs/reasons.md): a custom tag
 * (Flux drops it silently) and an integer beyond 2^53 (Flux turns it into an inexact float).
 */
function deliberatelyRefused(row: GoldenRow): boolean {
  if (!['!custom x', '99999999999999999999'].includes(row.variables.U ?? '')) return false;
  const result = substitute(row.object, { variables: row.variables });
  expect(result.ok).toBe(false);
  return true;
}

const describeRow = (r: GoldenRow) => `${r.group}${r.strict ? ' (strict)' : ''}: ${JSON.stringify(r.object)}`;

describe('substitution reproduces Flux (golden output of the upstream code)', () => {
  it.each(golden.filter((r) => r.fluxYaml !== undefined).map((r) => [describeRow(r), r] as const))(
    'writes the YAML Flux writes: %s',
    (_, row) => {
      expect(emitGoYamlV2(row.object)).toBe(row.fluxYaml);
    },
  );

  it.each(golden.map((r) => [describeRow(r), r] as const))('gives what Flux gives: %s', (_, row) => {
    if (deliberatelyRefused(row)) return;
    const result = substitute(row.object, { variables: row.variables, strict: !!row.strict });
    if (row.fluxError !== undefined) {
      expect(result.ok, 'Flux fails here, so must we').toBe(false);
      if (!result.ok) expect(result.failure.reason).toBe('SubstitutionFailed');
      return;
    }
    if (!result.ok) throw new Error(result.failure.message);
    expect(result.value).toEqual(row.fluxResult);
  });

  it('covers every syntax form, strict mode, typed values, layout and keys', () => {
    const groups = new Set(golden.map((r) => r.group));
    expect([...groups].sort()).toEqual(['keys', 'layout', 'syntax', 'syntax-strict', 'value']);
    expect(golden.filter((r) => r.fluxError === 'invalid YAML').length).toBeGreaterThan(5);
    expect(golden.filter((r) => r.fluxError?.startsWith('variable not set')).length).toBeGreaterThan(0);
  });
});

describe('envsubst', () => {
  const vars: Record<string, string> = { X: 'abbc', P: 'a/b/c', E: '' };
  const lenient = (s: string) => envsubst(s, (n) => [vars[n] ?? '', true]);
  const strict = (s: string) => envsubst(s, (n) => [vars[n] ?? '', n in vars]);

  it.each([
    ['${X}', 'abbc'],
    ['$${X}', '${X}'],
    ['$X and $HOME', '$X and $HOME'],
    ['$$5', '$5'],
    ['${MISSING}', ''],
    ['${MISSING:=dflt}', 'dflt'],
    ['${E:=dflt}', 'dflt'],
    ['${MISSING=a b}', 'a b'],
    ['${MISSING:-${X}}', 'abbc'],
    ['${#X}', '4'],
    ['${X^^}', 'ABBC'],
    ['${X:1:2}', 'bb'],
    ['${X//b/Z}', 'aZZc'],
    ['${P##*/}', 'c'],
    ['${P%/*}', 'a/b'],
    ['${P//\\//-}', 'a-b-c'],
  ])('%s → %s', (input, output) => {
    expect(lenient(input)).toBe(output);
  });

  it.each(['${', '${X', '${X-d}', '${X }', '${#ARR[@]}'])('refuses %s', (input) => {
    expect(() => lenient(input)).toThrow();
  });

  it('strict: an unset variable fails unless an operator supplies a default', () => {
    expect(() => strict('${MISSING}')).toThrow(/MISSING/);
    expect(() => strict('${#MISSING}')).toThrow(/MISSING/);
    expect(strict('${MISSING:=d}')).toBe('d');
    expect(strict('${E}')).toBe('');
  });
});

describe('substituteObject', () => {
  const cm = (data: Record<string, unknown>, metadata: Record<string, unknown> = {}) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'app', ...metadata },
    data,
  });

  it('substitutes every field, keys and names included, and returns plain data', () => {
    const r = substitute(cm({ '${K}': 'v-${V}' }, { name: 'app-${V}' }), { variables: { K: 'key', V: 'x' } });
    expect(r).toEqual({ ok: true, value: cm({ key: 'v-x' }, { name: 'app-x' }) });
  });

  it.each([
    ['packagesync.io/substitute', 'annotations'],
    ['packagesync.io/substitute', 'labels'],
    ['kustomize.toolkit.fluxcd.io/substitute', 'annotations'],
    ['kustomize.toolkit.fluxcd.io/substitute', 'labels'],
  ])('leaves an object marked %s: disabled (%s) untouched', (key, field) => {
    const obj = cm({ script: 'echo ${HOME} ${#ARR[@]}' }, { [field]: { [key]: 'disabled' } });
    expect(substitute(obj, { variables: { V: 'x' }, strict: true })).toEqual({ ok: true, value: obj });
  });

  it('substitutes when the mark has another value', () => {
    const obj = cm({ a: '${V}' }, { annotations: { 'packagesync.io/substitute': 'enabled' } });
    expect(substitute(obj, { variables: { V: 'x' } })).toMatchObject({ ok: true, value: { data: { a: 'x' } } });
  });

  it('WithVariables (default): no variable at all leaves the object as written, defaults unexpanded', () => {
    const obj = cm({ a: '${V:=dflt}', b: '$${V}' });
    expect(substitute(obj, {})).toEqual({ ok: true, value: obj });
  });

  it('Always: substitutes with no variable, so defaults apply', () => {
    expect(substitute(cm({ a: '${V:=dflt}', b: '$${V}' }), { always: true })).toMatchObject({
      ok: true,
      value: { data: { a: 'dflt', b: '${V}' } },
    });
  });

  it('an object with no "$" anywhere comes back as it is (the same data Flux reads back)', () => {
    const obj = cm({ yes: 'on', n: '0755', t: '2026-01-01', long: 'word '.repeat(40) });
    const r = substitute(obj, { variables: { V: 'x' }, strict: true });
    expect(r.ok && r.value).toBe(obj);
  });

  it('non-strict: an undefined variable becomes empty', () => {
    expect(substitute(cm({ a: '[${UNDEFINED}]' }), { variables: { V: 'x' } })).toMatchObject({
      ok: true,
      value: { data: { a: '[]' } },
    });
  });

  it('strict: an undefined variable fails, naming the object, its file, the field and the variable, no value', () => {
    const r = substitute(cm({ a: 'ok ${V}', b: 'needs ${DB_PASSWORD}' }), {
      variables: { V: 's3cr3t-value' },
      strict: true,
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.failure).toMatchObject({ reason: 'SubstitutionFailed', terminal: true });
    expect(r.failure.message).toContain('ConfigMap app in apps/web/config.yaml (document 2)');
    expect(r.failure.message).toContain('variable DB_PASSWORD (at data.b)');
    expect(r.failure.message).not.toContain('s3cr3t');
  });

  it('a value with YAML syntax is inserted raw, as in Flux: a plain scalar reads it as YAML', () => {
    expect(substitute(cm({ n: '${V}' }), { variables: { V: '[1, 2]' } })).toMatchObject({
      ok: true,
      value: { data: { n: [1, 2] } },
    });
    expect(substitute(cm({ n: '${V}', s: 'x ${V}' }), { variables: { V: '0755' } })).toMatchObject({
      ok: true,
      value: { data: { n: 493, s: 'x 0755' } },
    });
    // a quoted manifest value is written plain by Flux's serialiser: quotes in the file do not keep a string
    expect(substitute(cm({ q: '${V}' }), { variables: { V: 'on' } })).toMatchObject({ value: { data: { q: true } } });
    // a value with ': ' that stays inside a quoted scalar (the template needed quoting) is kept as text
    expect(substitute(cm({ q: 'k: ${V}' }), { variables: { V: 'a: b' } })).toMatchObject({
      value: { data: { q: 'k: a: b' } },
    });
  });

  it('a substitution that breaks the YAML fails naming the object and file, never the value', () => {
    const r = substitute(cm({ a: '${V}' }), { variables: { V: 'user: hunter2' } });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.failure.reason).toBe('SubstitutionFailed');
    expect(r.failure.message).toMatch(/^ConfigMap app in apps\/web\/config.yaml \(document 2\) is not valid YAML/);
    expect(r.failure.message).not.toContain('hunter2');
  });

  it('a key substituted into one already there: the later value counts, as Flux reads it (go-yaml v2)', () => {
    // written `${K}: first` then `b: second` (go-yaml sorts keys); after substitution `b` appears twice
    const result = substitute({ '${K}': 'first', b: 'second' }, { variables: { K: 'b' } });
    expect(result).toEqual({ ok: true, value: { b: 'second' } });
  });

  it('a ${...} that cannot be parsed names the field', () => {
    const r = substitute(cm({ ok: 'x', script: 'n=${#ARR[@]}' }), { variables: { V: 'x' } });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.failure.message).toContain('(at data.script): bad substitution');
  });

  it('a value cannot smuggle a new document or a key through a newline: newlines are removed', () => {
    const merged = mergeVariables([{ describe: 'Secret team-a/vars', data: { V: 'a\nkind: Secret' } }]);
    expect(merged).toEqual({ ok: true, value: { V: 'akind: Secret' } });
  });
});

describe('mergeVariables', () => {
  it('later sources override earlier ones, so inline substitute (last) wins', () => {
    const merged = mergeVariables([
      { describe: 'ConfigMap team-a/base', data: { A: 'cm', B: 'cm', C: 'cm' } },
      { describe: 'Secret team-a/override', data: { B: 'secret', C: 'secret' } },
      { describe: 'spec.postBuild.substitute', data: { C: 'inline' } },
    ]);
    expect(merged).toEqual({ ok: true, value: { A: 'cm', B: 'secret', C: 'inline' } });
  });

  it.each(['tls.crt', '1ABC', 'a-b', 'é', ''])('refuses the key %j, naming its source (as Flux does)', (key) => {
    const merged = mergeVariables([{ describe: 'Secret team-a/tls', data: { [key]: 'v' } }]);
    expect(merged.ok).toBe(false);
    if (!merged.ok) {
      expect(merged.failure.reason).toBe('SubstitutionFailed');
      expect(merged.failure.message).toContain(`Secret team-a/tls has the key ${JSON.stringify(key)}`);
    }
  });

  it('keeps __proto__ as an ordinary variable', () => {
    const merged = mergeVariables([
      { describe: 'x', data: JSON.parse('{"__proto__": "v"}') as Record<string, string> },
    ]);
    expect(merged.ok && Object.keys(merged.value)).toEqual(['__proto__']);
  });
});

/**
 * A substituted value is read back as YAML the way Flux reads it (sigs.k8s.io/yaml, go-yaml v2), which is how
 * kubectl reads a file: so every one-line case of testdata/goyaml-cases.yaml, substituted in as a variable, must
 * give what kubectl gave for the same text (testdata/goyaml-cases.json, written by kubectl itself).
 */
describe('a substituted value reads back as kubectl reads the same YAML', () => {
  const caseFiles: Record<string, string> = import.meta.glob('./testdata/goyaml-cases.{yaml,json}', {
    query: '?raw',
    import: 'default',
    eager: true,
  });
  const bodies = parseYaml(caseFiles['./testdata/goyaml-cases.yaml']!) as Record<string, string>;
  const answers = (
    JSON.parse(caseFiles['./testdata/goyaml-cases.json']!) as {
      cases: Record<string, { value: Record<string, unknown> } | { error: string }>;
    }
  ).cases;
  // flat `key: value` lines whose values a variable can carry (no quotes to keep, no nesting, no tags)
  const oneLine = /^([a-z]+): ([^\n'"!&*{}[\]|>#]*)$/;
  const flat = Object.entries(bodies).filter(([, body]) =>
    body
      .trimEnd()
      .split('\n')
      .every((line) => oneLine.test(line)),
  );
  /** kubectl keeps these; JSON numbers in JavaScript cannot, so they are refused (as in files), never rounded. */
  const tooBigForJavaScript = new Set(['int64 max', 'int beyond 2^53', 'uint64', 'beyond uint64']);

  it('covers most of the cases', () => {
    expect(flat.length).toBeGreaterThan(30);
  });

  it.each(flat)('%s', (name, body) => {
    const object: Record<string, unknown> = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } };
    const variables: Record<string, string> = {};
    for (const line of body.trimEnd().split('\n')) {
      const [, key, text] = oneLine.exec(line)!;
      object[key!] = `\${V_${key}}`;
      variables[`V_${key}`] = text!;
    }
    const result = substitute(object, { variables });
    const answer = answers[name]!;
    if ('error' in answer || tooBigForJavaScript.has(name)) {
      expect(result.ok, `kubectl: ${'error' in answer ? answer.error : 'a number JavaScript cannot hold'}`).toBe(false);
      return;
    }
    expect(result.ok ? result.value : result.failure.message).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      ...answer.value,
    });
  });
});
