import { describe, expect, it } from 'vitest';
import { isLoopback, parseArtifactTarget, parseOciRepository } from './reference.ts';

describe('parseOciRepository', () => {
  it.each([
    ['oci://ghcr.io/team/app', 'ghcr.io', 'team/app', false],
    ['oci://127.0.0.1:5000/apps/web', '127.0.0.1:5000', 'apps/web', true],
    ['oci://LocalHost:5000/a', 'localhost:5000', 'a', true],
    ['oci://[::1]:5000/a/b-c.d_e', '[::1]:5000', 'a/b-c.d_e', true],
  ])('%s → host %s, repository %s', (url, host, repository, loopback) => {
    expect(parseOciRepository(url)).toEqual({
      ok: true,
      value: { host, repository, loopback, url: `oci://${host}/${repository}` },
    });
  });

  it.each([
    ['https://ghcr.io/team/app', 'does not start with oci://'],
    ['oci://ghcr.io', 'names no repository path'],
    ['oci://ghcr.io/team/app:v1', 'repository path'],
    ['oci://ghcr.io/team/app@sha256:00', '@'],
    ['oci://user:pw@ghcr.io/team/app', '@'],
    ['oci://ghcr.io/Team/App', 'repository path'],
    ['oci://ghcr.io/team//app', 'repository path'],
    ['oci://gh cr.io/app', 'whitespace'],
    ['oci://ghcr.io:99999/app', 'invalid port'],
  ])('refuses %s (InvalidURL: %s)', (url, why) => {
    const r = parseOciRepository(url);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.failure.reason).toBe('InvalidURL');
      expect(r.failure.message).toContain(why);
      expect(r.failure.terminal).toBe(true);
    }
  });
});

describe('isLoopback', () => {
  it.each([
    ['localhost', true],
    ['127.0.0.1:5000', true],
    ['127.8.9.10', true],
    ['[::1]:443', true],
    ['128.0.0.1', false],
    ['localhost.example.com', false],
    ['10.0.0.1:5000', false],
  ])('%s → %s', (host, expected) => expect(isLoopback(host)).toBe(expected));
});

describe('parseArtifactTarget', () => {
  it('takes the tag after the last colon of the last path segment', () => {
    const r = parseArtifactTarget('oci://127.0.0.1:5000/apps/web:v1.2.3');
    expect(r.ok && r.value).toMatchObject({ host: '127.0.0.1:5000', repository: 'apps/web', tag: 'v1.2.3' });
  });
  it.each(['oci://127.0.0.1:5000/apps/web', 'oci://ghcr.io/app:bad tag', 'oci://ghcr.io/app:'])('refuses %s', (t) => {
    expect(parseArtifactTarget(t).ok).toBe(false);
  });
});
