import { describe, expect, it } from 'vitest';
import { combinedRevision, splitCredentials } from './values-source.ts';

describe('values beside a chart', () => {
  it('splits the credential record: the chart repository keeps its keys, the values repository gets its own', () => {
    expect(
      splitCredentials({ username: 'u', password: 'p', 'values/bearerToken': 't', 'values/ca.crt': 'pem' }),
    ).toEqual({ chart: { username: 'u', password: 'p' }, values: { bearerToken: 't', 'ca.crt': 'pem' } });
    expect(splitCredentials({ 'values/username': 'g', 'values/password': 'h' })).toEqual({
      chart: undefined,
      values: { username: 'g', password: 'h' },
    });
    expect(splitCredentials({ username: 'u', password: 'p' })).toEqual({
      chart: { username: 'u', password: 'p' },
      values: undefined,
    });
    expect(splitCredentials(undefined)).toEqual({ chart: undefined, values: undefined });
  });

  it('names both sources in the revision, so a change to either is a new one', () => {
    const chart = `1.0.0@sha256:${'ab'.repeat(32)}`;
    expect(combinedRevision(chart, `main@sha1:${'c'.repeat(40)}`)).toBe(`${chart}+main@sha1:${'c'.repeat(40)}`);
    expect(combinedRevision(chart, 'main@sha1:1')).not.toBe(combinedRevision(chart, 'main@sha1:2'));
  });
});
