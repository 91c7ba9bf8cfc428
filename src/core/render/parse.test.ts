import { describe, expect, it } from 'vitest';
import { parseManifestFile } from './parse.ts';

const parse = (content: string, path = 'app/deploy.yaml') => parseManifestFile({ path, content });

function failure(content: string) {
  const result = parse(content);
  if (result.ok) throw new Error('expected a failure');
  return result.failure;
}

/** 9 levels of 9 aliases each: 9^9 strings if expanded. */
function billionLaughs(): string {
  let text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
  let previous = 'a';
  for (const name of 'bcdefghi') {
    text += `${name}: &${name} [${Array(9).fill(`*${previous}`).join(',')}]\n`;
    previous = name;
  }
  return text;
}

describe('parseManifestFile: accepted input', () => {
  it.each([
    ['one document', 'a: 1\n', [{ index: 1, value: { a: 1 } }]],
    [
      'documents keep their 1-based index; empty ones are skipped',
      'a: 1\n---\n---\nnull\n---\nb: 2\n',
      [
        { index: 1, value: { a: 1 } },
        { index: 4, value: { b: 2 } },
      ],
    ],
    ['empty file', '', []],
    ['comments only', '# nothing here\n', []],
    ['JSON', '{"a": [1, 2], "b": {"c": "d"}}', [{ index: 1, value: { a: [1, 2], b: { c: 'd' } } }]],
    ['JSON indented with tabs', '{\n\t"a": 1,\n\t"b": [\n\t\t2\n\t]\n}\n', [{ index: 1, value: { a: 1, b: [2] } }]],
    ['standard tags', 'a: !!str 123\nb: !!int "5"\n', [{ index: 1, value: { a: '123', b: 5 } }]],
    ['a few aliases', 'x: &x {a: 1}\nz: *x\n', [{ index: 1, value: { x: { a: 1 }, z: { a: 1 } } }]],
    ['merge keys', 'x: &x {a: 1}\nz: {<<: *x, b: 2}\n', [{ index: 1, value: { x: { a: 1 }, z: { a: 1, b: 2 } } }]],
    ['YAML 1.1 booleans, as kubectl reads them', 'a: yes\nb: "yes"\n', [{ index: 1, value: { a: true, b: 'yes' } }]],
    ['octal file modes, as kubectl reads them', 'mode: 0440\n', [{ index: 1, value: { mode: 288 } }]],
    ['dates stay strings', 'a: 2001-12-14\n', [{ index: 1, value: { a: '2001-12-14' } }]],
    ['scalar keys become strings (y is a boolean)', '1: x\ny: y\n', [{ index: 1, value: { '1': 'x', true: true } }]],
    ['!!binary holding text', 'a: !!binary aGVsbG8=\n', [{ index: 1, value: { a: 'hello' } }]],
    ['!!timestamp stays its text', 'a: !!timestamp 2001-12-14\n', [{ index: 1, value: { a: '2001-12-14' } }]],
  ])('%s', (_name, content, expected) => {
    const parsed = parse(content);
    expect(parsed.ok && parsed.value.map(({ index, value }) => ({ index, value }))).toEqual(expected);
  });

  it.each([
    ['the first line', 'a: 1\n', [1], [[]]],
    ['past leading comments and the separator', '# head\n---\n# c\na: 1\n---\nb: 2\n', [4, 6], [[], []]],
    [
      'each item of a List',
      'apiVersion: v1\nkind: List\nitems:\n  - kind: A\n    x: 1\n  # c\n  - kind: B\n',
      [1],
      [[4, 7]],
    ],
    ['JSON', '\n\n{"items": [\n {"a": 1},\n {"b": 2}]}', [3], [[4, 5]]],
  ])('records where each document and List item starts: %s', (_name, content, lines, itemLines) => {
    const parsed = parse(content);
    expect(parsed.ok && parsed.value.map((d) => d.line)).toEqual(lines);
    expect(parsed.ok && parsed.value.map((d) => d.itemLines)).toEqual(itemLines);
  });
});

describe('parseManifestFile: rejected input', () => {
  it.each([
    ['duplicate key', 'a: 1\nb: 2\na: 3\n', 'app/deploy.yaml:3:1 (document 1): duplicate mapping key "a"; remove one'],
    [
      'duplicate key in a later document',
      'a: 1\n---\nb:\n  c: 1\n  c: 2\n',
      'app/deploy.yaml:5:3 (document 2): duplicate mapping key "c" (in b)',
    ],
    ['duplicate key, yes and true', 'yes: 1\ntrue: 2\n', ':2:1 (document 1): duplicate mapping key "true"'],
    ['!!binary that is not text', 'a: !!binary //79\n', 'not UTF-8 text'],
    ['!!int that is not one', 'a: !!int abc\n', 'tagged !!int is not one'],
    ['null key', '~: 1\n', 'a mapping key is null'],
    ['custom tag', 'a: !vault secret/db\n', 'unknown or custom tag'],
    ['!!js/function', "a: !!js/function 'function () { return 1 }'\n", 'unknown or custom tag'],
    ['!!python/object', 'a: !!python/object/apply:os.system [id]\n', 'unknown or custom tag'],
    ['verbatim js tag', 'a: !<tag:yaml.org,2002:js/undefined> x\n', 'unknown or custom tag'],
    ['%TAG shorthand', '%TAG !e! tag:example.com,2000:\n---\na: !e!foo x\n', 'unknown or custom tag'],
    ['!!omap', 'a: !!omap [b: 1]\n', 'unknown or custom tag'],
    ['duplicate key, quoted and plain', "a: 1\n'a': 2\n", ':2:1 (document 1): duplicate mapping key'],
    ['duplicate key, number and string', '1: x\n"1": y\n', ':2:1 (document 1): duplicate mapping key'],
    ['duplicate key, explicit form', '? a\n: 1\na: 2\n', ':3:1 (document 1): duplicate mapping key'],
    ['!!set', 'a: !!set {x: null}\n', 'unknown or custom tag'],
    ['collection key', '? [a, b]\n: 1\n', 'mapping key must be a scalar'],
    ['unterminated string', 'a: "abc\n', 'missing closing quote'],
    ['tab indentation', 'a:\n\tb: 1\n', 'tab used for indentation'],
    ['compact nested mapping', 'a: b: c\n', 'app/deploy.yaml:1:4 (document 1): '],
    ['undefined alias', 'a: *nope\n', 'alias used before its anchor is defined'],
    ['.inf', 'a: .inf\n', 'value at a is not a finite number'],
    ['integer beyond 2^53', 'spec:\n  big: 12345678901234567890\n', 'value at spec.big is an integer too large'],
    ['deep nesting', `a: ${'['.repeat(5000)}${']'.repeat(5000)}\n`, 'nested'],
  ])('%s', (_name, content, expected) => {
    const f = failure(content);
    expect(f.reason).toBe('RenderFailed');
    expect(f.terminal).toBe(true);
    expect(f.message).toContain('app/deploy.yaml');
    expect(f.message).toContain(expected);
  });

  it('fails fast on billion laughs', () => {
    const started = performance.now();
    const f = failure(billionLaughs());
    expect(performance.now() - started).toBeLessThan(1000);
    expect(f.message).toBe(
      'app/deploy.yaml:1 (document 1): aliases expand to too much data (more than 10000 values through aliases); fix the YAML',
    );
  });

  it.each([
    ['escape sequence', 'password: "hunter2\\qsecret"\n'],
    ['alias name', 'token: *s3cr3t-value\n'],
    ['tag', 'token: !s3cr3t-value x\n'],
    ['bad indentation', 'data:\n  token: s3cr3t-value\n extra: s3cr3t-value\n'],
  ])('never quotes the file (%s)', (_name, content) => {
    const f = failure(content);
    expect(f.message).not.toContain('s3cr3t');
    expect(f.message).not.toContain('hunter2');
  });
});

describe('parseManifestFile: __proto__', () => {
  it('keeps a __proto__ key as plain data and pollutes nothing', () => {
    const result = parse('__proto__:\n  polluted: true\nmetadata:\n  __proto__: {polluted: true}\n');
    expect(result.ok).toBe(true);
    const value = result.ok ? (result.value[0]?.value as Record<string, unknown>) : {};
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect(JSON.parse(JSON.stringify(value))).toEqual(
      JSON.parse('{"__proto__":{"polluted":true},"metadata":{"__proto__":{"polluted":true}}}'),
    );
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect((value as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('keeps constructor and prototype keys as plain data', () => {
    const result = parse('constructor:\n  prototype: {polluted: true}\nprototype: {polluted: true}\n');
    expect(result.ok).toBe(true);
    const value = result.ok ? (result.value[0]?.value as Record<string, unknown>) : {};
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(value))).toEqual({
      constructor: { prototype: { polluted: true } },
      prototype: { polluted: true },
    });
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('does not pollute through merge keys either', () => {
    const result = parse('x: &x {__proto__: {polluted: true}}\ny: {<<: *x}\n');
    expect(result.ok).toBe(true);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
