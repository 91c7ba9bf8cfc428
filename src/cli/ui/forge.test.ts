import { describe, expect, it } from 'vitest';
import { commitOf, commitUrl } from './forge.ts';

const sha = '3f2a9c01b7de5a4c2d1e0f9a8b7c6d5e4f3a2b1c';

describe('a revision linked to its commit on a known forge', () => {
  it.each([
    ['https://github.com/acme/apps.git', `https://github.com/acme/apps/commit/${sha}`],
    ['git@github.com:acme/apps.git', `https://github.com/acme/apps/commit/${sha}`],
    ['ssh://git@github.com/acme/apps', `https://github.com/acme/apps/commit/${sha}`],
    ['https://gitlab.com/group/sub/apps.git', `https://gitlab.com/group/sub/apps/-/commit/${sha}`],
    ['https://gitlab.example.com/g/apps', `https://gitlab.example.com/g/apps/-/commit/${sha}`],
    ['https://bitbucket.org/acme/apps.git', `https://bitbucket.org/acme/apps/commits/${sha}`],
    ['https://codeberg.org/acme/apps.git', `https://codeberg.org/acme/apps/commit/${sha}`],
  ])('%s', (url, link) => {
    expect(commitUrl(url, `main@sha1:${sha}`)).toBe(link);
  });

  it('links nothing for an unknown forge, a revision without a full SHA, or a hostile URL', () => {
    expect(commitUrl('https://git.example.com/acme/apps.git', `main@sha1:${sha}`)).toBeUndefined();
    expect(commitUrl('https://github.com/acme/apps.git', 'main@sha1:3f2a9c')).toBeUndefined();
    expect(commitUrl('javascript:alert(1)//github.com/a/b', `main@sha1:${sha}`)).toBeUndefined();
    expect(commitUrl('https://github.com/a/b"><img src=x>', `main@sha1:${sha}`)).toBeUndefined();
    expect(commitUrl('https://github.com/a/../b', `main@sha1:${sha}`)).toBeUndefined();
    expect(commitUrl('oci://ghcr.io/a/b', `main@sha1:${sha}`)).toBeUndefined();
  });

  it('reads the commit of a branch, tag or bare revision', () => {
    expect(commitOf(`v1.2.0@sha1:${sha}`)).toBe(sha);
    expect(commitOf(sha)).toBe(sha);
    expect(commitOf('latest@sha256:abc')).toBeUndefined();
  });
});
