import { describe, expect, it } from 'vitest';
import {
  checkEntries,
  dependencyCredentialsKey,
  entryFor,
  splitDependencyCredentials,
} from './dependency-credentials.ts';

describe('dependency repository credentials', () => {
  const entries = [
    { url: 'https://charts.example.com' },
    { url: 'https://charts.example.com/private/' },
    { url: 'oci://registry.example.com' },
    { url: 'oci://registry.example.com/team-a' },
  ];

  it('gives a dependency the longest prefix of its URL on the same origin, cut at a path segment', () => {
    expect(entryFor('https://charts.example.com/stable', entries)).toBe(0);
    expect(entryFor('https://charts.example.com/private/x', entries)).toBe(1);
    expect(entryFor('https://charts.example.com/private', entries)).toBe(1);
    // /privateer is not under /private
    expect(entryFor('https://charts.example.com/privateer', entries)).toBe(0);
    expect(entryFor('oci://registry.example.com/team-a/charts', entries)).toBe(3);
    expect(entryFor('oci://registry.example.com/team-b', entries)).toBe(2);
  });

  it('never gives one host, port or scheme the credentials of another', () => {
    expect(entryFor('https://charts.example.com.evil.test/stable', entries)).toBeUndefined();
    expect(entryFor('https://charts.example.com:8443/stable', entries)).toBeUndefined();
    expect(entryFor('http://charts.example.com/stable', entries)).toBeUndefined();
    expect(entryFor('https://other.example.com', entries)).toBeUndefined();
    expect(entryFor('oci://charts.example.com/x', entries)).toBeUndefined();
    expect(entryFor('https://charts.example.com:443/a', entries)).toBe(0);
  });

  it('splits the record into the source’s own keys and each entry’s Secret', () => {
    const record = {
      username: 'own',
      [dependencyCredentialsKey(0, 'username')]: 'u0',
      [dependencyCredentialsKey(0, 'password')]: 'p0',
      [dependencyCredentialsKey(12, '.dockerconfigjson')]: '{}',
    };
    const split = splitDependencyCredentials(record);
    expect(split.own).toEqual({ username: 'own' });
    expect(split.byEntry.get(0)).toEqual({ username: 'u0', password: 'p0' });
    expect(split.byEntry.get(12)).toEqual({ '.dockerconfigjson': '{}' });
    expect(splitDependencyCredentials({ [dependencyCredentialsKey(0, 'a')]: 'b' }).own).toBeUndefined();
  });

  it('refuses an entry that is not a repository URL, or carries credentials', () => {
    expect(checkEntries(entries).ok).toBe(true);
    const bad = checkEntries([{ url: 'https://a.example' }, { url: 'ftp://x' }]);
    expect(!bad.ok && bad.failure.message).toContain('dependencyRepositories[1].url');
    const creds = checkEntries([{ url: 'https://user:pw@a.example/x' }]);
    expect(!creds.ok && creds.failure.message).toContain('credentials in the URL');
    expect(!creds.ok && creds.failure.message).not.toContain('pw');
  });
});
