// Every YAML 1.1 case of testdata/goyaml-cases.yaml reads here as kubectl read it when
// hack/goyaml-cases.ts last ran (testdata/goyaml-cases.json): the expected values come from go-yaml itself.
// e2e/yaml-kubectl.test.ts asks kubectl again, so the stored answers cannot go stale.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { float32Text } from './goyaml-decode.ts';
import { parseManifestFile } from './parse.ts';

// read as text through vite (src/core imports no fs)
const files: Record<string, string> = import.meta.glob('./testdata/goyaml-cases.{yaml,json}', {
  query: '?raw',
  import: 'default',
  eager: true,
});
const cases = parse(files['./testdata/goyaml-cases.yaml']!) as Record<string, string>;
const answers = (
  JSON.parse(files['./testdata/goyaml-cases.json']!) as {
    cases: Record<string, { value: Record<string, unknown> } | { error: string }>;
  }
).cases;
const head = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: goyaml-case\n';

/** kubectl keeps these, JSON numbers in JavaScript cannot: refused with "quote it", never rounded. */
const tooBigForJavaScript = new Set(['int64 max', 'int beyond 2^53', 'uint64', 'beyond uint64']);

function ours(body: string, duplicateKeys: 'refuse' | 'lastWins' = 'lastWins') {
  const parsed = parseManifestFile({ path: 'case.yaml', content: head + body }, { duplicateKeys });
  if (!parsed.ok) return { error: parsed.failure.message };
  const { apiVersion: _a, kind: _k, metadata: _m, ...value } = parsed.value[0]!.value as Record<string, unknown>;
  return { value };
}

describe('YAML 1.1 scalars, tags, merge keys and keys read as kubectl reads them', () => {
  it('has an answer from kubectl for every case', () => {
    expect(Object.keys(answers).sort()).toEqual(Object.keys(cases).sort());
  });

  it.each(Object.entries(cases))('%s', (name, body) => {
    const answer = answers[name]!;
    const result = ours(body);
    if (tooBigForJavaScript.has(name)) {
      expect(result).toMatchObject({ error: expect.stringContaining('quote it') });
    } else if ('error' in answer) {
      // kubectl refuses it too (a value JSON has no form for, a broken merge or tag)
      expect(result).toMatchObject({ error: expect.stringContaining('case.yaml:') });
    } else {
      expect(result).toEqual(answer);
    }
  });

  it('the cases kubectl accepts are nearly all accepted here', () => {
    const accepted = Object.entries(answers).filter(([, a]) => 'value' in a).length;
    expect(accepted).toBeGreaterThan(Object.keys(answers).length * 0.8);
  });
});

describe('repeated keys in a file a person wrote', () => {
  it('fail with the file, line and column, where kubectl would keep the last', () => {
    const result = ours('m:\n  a: 1\n  a: 2\n', 'refuse');
    expect(result).toEqual({
      error: 'case.yaml:7:3 (document 1): duplicate mapping key "a" (in m); remove one of them',
    });
  });

  it('are reported with their line when the last one wins', () => {
    const parsed = parseManifestFile(
      { path: 'out', content: 'a: 1\nm:\n  b: 1\n  b: 2\n' },
      { duplicateKeys: 'lastWins' },
    );
    expect(parsed.ok && parsed.value[0]).toMatchObject({
      value: { a: 1, m: { b: 2 } },
      duplicateKeys: [{ path: 'm', key: 'b', line: 4 }],
    });
  });

  it('an anchored mapping with a repeat counts once however often it is aliased', () => {
    const parsed = parseManifestFile(
      { path: 'out', content: 'x: &x {b: 1, b: 2}\nz1: *x\nz2: *x\n' },
      { duplicateKeys: 'lastWins' },
    );
    expect(parsed.ok && parsed.value[0]?.duplicateKeys).toEqual([{ path: 'x', key: 'b', line: 1 }]);
  });
});

describe('float32Text (Go FormatFloat(f, g, -1, 32), float keys)', () => {
  it.each([
    [1.5, '1.5'],
    [1000, '1000'],
    [0.1, '0.1'],
    [1e6, '1e+06'],
    [1234567, '1.234567e+06'],
    [123456, '123456'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [-2.5, '-2.5'],
    [16777217, '1.6777216e+07'],
  ])('%s → %s', (f, text) => {
    expect(float32Text(f)).toBe(text);
  });
});
