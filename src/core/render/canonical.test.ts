import { describe, expect, it } from 'vitest';
import { canonicalJson, compareUtf8, objectDigest } from './canonical.ts';

describe('canonicalJson', () => {
  it.each<[string, unknown, string]>([
    ['scalars', [1, 'a', true, null], '[1,"a",true,null]'],
    [
      'keys sorted at every level',
      { b: 1, a: { d: [{ z: 1, y: 2 }], c: 3 } },
      '{"a":{"c":3,"d":[{"y":2,"z":1}]},"b":1}',
    ],
    ['keys sorted by code point, not locale', { b: 1, B: 2, _: 3, a: 4 }, '{"B":2,"_":3,"a":4,"b":1}'],
    ['undefined fields dropped, undefined items null', { a: undefined, b: [undefined] }, '{"b":[null]}'],
    ['strings escaped as JSON', { 'k"': 'line\nbreak' }, '{"k\\"":"line\\nbreak"}'],
    ['empty collections', { a: {}, b: [] }, '{"a":{},"b":[]}'],
    ['top-level undefined', undefined, 'null'],
  ])('%s', (_name, value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it('keeps a __proto__ key as data', () => {
    expect(canonicalJson(JSON.parse('{"b":1,"__proto__":{"x":1}}'))).toBe('{"__proto__":{"x":1},"b":1}');
  });

  it('does not depend on key insertion order', () => {
    expect(canonicalJson({ x: 1, y: { p: 1, q: 2 } })).toBe(canonicalJson({ y: { q: 2, p: 1 }, x: 1 }));
  });
});

describe('compareUtf8', () => {
  it.each<[string, string, number]>([
    ['a', 'b', -1],
    ['b', 'a', 1],
    ['a', 'a', 0],
    ['a', 'ab', -1],
    ['Z', 'a', -1],
    // U+FF5E (BMP, 3 UTF-8 bytes) sorts before U+1F600 (4 bytes), unlike UTF-16 code unit order.
    ['\uff5e', '\u{1f600}', -1],
    ['x/\u{1f600}', 'x/\uff5e', 1],
  ])('%s vs %s', (a, b, sign) => {
    expect(Math.sign(compareUtf8(a, b))).toBe(sign);
  });

  it('matches byte order of UTF-8', () => {
    const words = ['b', '\u{1f600}', 'a/b', '\uff5e', 'A', 'a-b', 'é', 'a'];
    const byBytes = [...words].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect([...words].sort(compareUtf8)).toEqual(byBytes);
  });
});

describe('objectDigest', () => {
  const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } };

  it('is sha256 hex of the canonical JSON', () => {
    expect(objectDigest(obj)).toMatch(/^[0-9a-f]{64}$/);
    expect(objectDigest({ data: { k: 'v' }, metadata: { name: 'a' }, kind: 'ConfigMap', apiVersion: 'v1' })).toBe(
      objectDigest(obj),
    );
  });

  it('changes with any value', () => {
    expect(objectDigest({ ...obj, data: { k: 'w' } })).not.toBe(objectDigest(obj));
  });
});
