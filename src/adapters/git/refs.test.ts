import { describe, expect, it } from 'vitest';
import { Reason } from '../../api/reasons.ts';
import { formatRevision, highestTagInRange, lsRemoteArgs, parseLsRemote, selectRef } from './refs.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const D = 'd'.repeat(40);

const listing = parseLsRemote(
  [
    `ref: refs/heads/trunk\tHEAD`,
    `${A}\tHEAD`,
    `${A}\trefs/heads/trunk`,
    `${B}\trefs/heads/feature/x`,
    `${C}\trefs/tags/v1.0.0`,
    `${D}\trefs/tags/v1.0.0^{}`,
    `${B}\trefs/tags/1.2.0`,
    `${A}\trefs/tags/v1.2.0`,
    `${A}\trefs/tags/v2.0.0-rc.1`,
    `${C}\trefs/tags/not-a-version`,
    '',
  ].join('\n'),
);

describe('selectRef', () => {
  it.each([
    [undefined, A, 'trunk'],
    [{ branch: 'trunk' }, A, 'trunk'],
    [{ branch: 'feature/x' }, B, 'feature/x'],
    [{ tag: 'v1.0.0' }, D, 'v1.0.0'], // annotated: the peeled commit, not the tag object
    [{ tag: 'not-a-version' }, C, 'not-a-version'],
    [{ semver: '^1.0.0' }, B, '1.2.0'], // 1.2.0 and v1.2.0: the name sorting first wins
    [{ semver: '~1.0.0' }, D, 'v1.0.0'],
    [{ semver: '>=2.0.0-rc.0' }, A, 'v2.0.0-rc.1'],
  ])('%j → %s', (ref, commit, label) => {
    expect(selectRef(listing, ref, 'repo')).toEqual({
      ok: true,
      value: { commit, refLabel: label, revision: `${label}@sha1:${commit}` },
    });
  });

  it.each([[{ branch: 'main' }], [{ tag: 'v9' }], [{ semver: '^3.0.0' }], [{ semver: '^2.0.0' }]])(
    '%j → RefNotFound',
    (ref) => {
      const r = selectRef(listing, ref, 'repo');
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.failure.reason).toBe(Reason.RefNotFound);
    },
  );

  it('labels HEAD "HEAD" when the remote does not say what it points at', () => {
    const r = selectRef(parseLsRemote(`${A}\tHEAD\n`), undefined, 'repo');
    expect(r.ok && r.value.revision).toBe(`HEAD@sha1:${A}`);
  });

  it('reports an empty repository', () => {
    const r = selectRef(parseLsRemote(''), undefined, 'repo');
    expect(!r.ok && r.failure.reason).toBe(Reason.RefNotFound);
  });
});

describe('helpers', () => {
  it('formats revisions like Flux', () => {
    expect(formatRevision(A, 'main')).toBe(`main@sha1:${A}`);
    expect(formatRevision(A, undefined)).toBe(`sha1:${A}`);
    expect(formatRevision('e'.repeat(64), 'v1')).toBe(`v1@sha256:${'e'.repeat(64)}`);
  });

  it('puts the URL after -- and prefixes ref patterns', () => {
    expect(lsRemoteArgs('u', { branch: 'main' })).toEqual(['ls-remote', '--', 'u', 'refs/heads/main']);
    expect(lsRemoteArgs('u', { tag: 'v1' })).toEqual(['ls-remote', '--', 'u', 'refs/tags/v1', 'refs/tags/v1^{}']);
    expect(lsRemoteArgs('u', undefined)).toEqual(['ls-remote', '--symref', '--', 'u', 'HEAD']);
  });

  it('ignores non-version tags and garbage lines', () => {
    expect(highestTagInRange(parseLsRemote(`junk\n${A}\trefs/tags/latest\n`), '*')).toBeUndefined();
  });
});
