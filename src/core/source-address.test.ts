import { describe, expect, it } from 'vitest';
import { gitUrlsOf, sourceAddress } from './source-address.ts';

describe('sourceAddress: every source kind is shown, with its version', () => {
  it('git: the URL and the ref, or the remote HEAD', () => {
    expect(sourceAddress({ url: 'https://git.example/r.git', ref: { branch: 'main' } })).toEqual({
      address: 'https://git.example/r.git',
      version: 'branch main',
    });
    expect(sourceAddress({ url: 'https://git.example/r.git' }).version).toBe('remote HEAD');
  });

  it('OCI: the repository and the tag, semver or digest, or the tag latest', () => {
    expect(sourceAddress({ oci: { url: 'oci://reg.example/app', ref: { semver: '^1' } } })).toEqual({
      address: 'oci://reg.example/app',
      version: 'semver ^1',
    });
    expect(sourceAddress({ oci: { url: 'oci://reg.example/app' } }).version).toBe('tag latest');
  });

  it('a chart: the repository, the chart and the version asked for', () => {
    expect(
      sourceAddress({ chart: { repository: 'https://charts.example', name: 'web', version: '>=1.0.0 <2.0.0' } }),
    ).toEqual({ address: 'https://charts.example chart web', version: 'version >=1.0.0 <2.0.0' });
    expect(sourceAddress({ chart: { repository: 'https://charts.example', name: 'web' } }).version).toBe(
      'the newest version',
    );
  });

  it('a spec without a source (not admitted, but read defensively) shows nothing rather than failing', () => {
    expect(sourceAddress(undefined)).toEqual({ address: '', version: 'remote HEAD' });
  });

  it("gitUrlsOf: the source's repository and the values repository beside a chart, each forgotten on a request", () => {
    expect(gitUrlsOf({ url: 'https://git.example/app.git' })).toEqual(['https://git.example/app.git']);
    expect(
      gitUrlsOf({
        chart: { repository: 'https://charts.example', name: 'web', values: { url: 'https://git.example/values.git' } },
      }),
    ).toEqual(['https://git.example/values.git']);
    expect(gitUrlsOf({ oci: { url: 'oci://reg.example/app' } })).toEqual([]);
    expect(gitUrlsOf(undefined)).toEqual([]);
  });
});
