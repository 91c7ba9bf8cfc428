import { describe, expect, it } from 'vitest';
import { chooseSemverTag, formatOciRevision, validateOciRef } from './ref.ts';

const D = `sha256:${'a'.repeat(64)}`;

describe('validateOciRef', () => {
  it.each([
    [undefined, { kind: 'tag', tag: 'latest' }],
    [{}, { kind: 'tag', tag: 'latest' }],
    [{ tag: 'v1' }, { kind: 'tag', tag: 'v1' }],
    [
      { tag: 'stable', digest: D },
      { kind: 'tag', tag: 'stable', digest: D },
    ],
    [{ digest: D }, { kind: 'digest', digest: D }],
    [{ semver: '>=1.0.0 <2' }, { kind: 'semver', range: '>=1.0.0 <2' }],
  ])('%j → %j', (ref, expected) => expect(validateOciRef(ref)).toEqual({ ok: true, value: expected }));

  it.each([
    [{ semver: '1.x', tag: 'v1' }, 'semver together with tag or digest'],
    [{ semver: '1.x', digest: D }, 'semver together with tag or digest'],
    [{ semver: 'not a range' }, 'is not a semver range'],
    [{ tag: '-bad' }, 'is not a valid tag'],
    [{ tag: 'a/b' }, 'is not a valid tag'],
    [{ digest: 'sha256:abc' }, 'is not sha256:'],
    [{ digest: `sha512:${'a'.repeat(128)}` }, 'is not sha256:'],
  ])('refuses %j (InvalidRef)', (ref, why) => {
    const r = validateOciRef(ref);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.failure.reason).toBe('InvalidRef');
      expect(r.failure.message).toContain(why);
    }
  });
});

describe('chooseSemverTag', () => {
  const tags = ['latest', 'v1.0.0', '1.2.0', 'v1.10.0', 'v2.0.0', 'v1.11.0-rc.1', 'stable', '1.9'];
  it.each([
    ['^1.0.0', 'v1.10.0'],
    ['>=1.0.0', 'v2.0.0'],
    ['~1.2', '1.2.0'],
    ['>=1.11.0-rc.0 <2', 'v1.11.0-rc.1'],
    ['^3', undefined],
  ])('%s → %s (non-semver tags ignored, pre-releases only when asked for)', (range, expected) => {
    expect(chooseSemverTag(tags, range)).toBe(expected);
  });
});

describe('formatOciRevision', () => {
  it('writes tag@digest as Flux does, or the digest alone', () => {
    expect(formatOciRevision('v1', D)).toBe(`v1@${D}`);
    expect(formatOciRevision(undefined, D)).toBe(D);
  });
});
