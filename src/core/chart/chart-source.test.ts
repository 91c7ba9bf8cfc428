import { describe, expect, it } from 'vitest';
import {
  chartAuthFromSecret,
  checkChartSource,
  formatChartRevision,
  indexDigestFor,
  manifestDigestFromPull,
  registryConfigFile,
  repositoriesFile,
  versionFromArchive,
} from './chart-source.ts';

describe('checkChartSource', () => {
  it('accepts https and loopback http with insecure, defaulting the version to *', () => {
    expect(checkChartSource({ repository: 'https://Charts.Example.com/stable/', name: 'podinfo' })).toEqual({
      ok: true,
      value: {
        kind: 'http',
        repository: 'https://charts.example.com/stable',
        host: 'charts.example.com',
        port: 443,
        name: 'podinfo',
        version: '*',
      },
    });
    const local = checkChartSource({
      repository: 'http://127.0.0.1:8080',
      name: 'app',
      version: '>=1.0.0 <2',
      insecure: true,
    });
    expect(local).toMatchObject({
      ok: true,
      value: { port: 8080, version: '>=1.0.0 <2', repository: 'http://127.0.0.1:8080' },
    });
  });

  it.each([
    [{ repository: 'oci://ghcr.io/X', name: 'app' }, 'InvalidURL', 'is not an OCI repository'],
    [{ repository: 'oci://ghcr.io', name: 'app:1.0' }, 'InvalidSpec', 'spec.source.chart.name'],
    [{ repository: 'oci://u:p@ghcr.io/x', name: 'app' }, 'InvalidURL', 'no credentials'],
    [{ repository: 'oci://ghcr.io/x', name: 'app', insecure: true }, 'InvalidURL', 'only for a loopback registry'],
    [{ repository: 'http://charts.example.com', name: 'app' }, 'InvalidURL', 'is plain http'],
    [{ repository: 'http://charts.example.com', name: 'app', insecure: true }, 'InvalidURL', 'only for a loopback'],
    [{ repository: 'https://u:p@charts.example.com', name: 'app' }, 'InvalidURL', 'carries credentials'],
    [{ repository: 'ftp://x/y', name: 'app' }, 'InvalidURL', 'neither https'],
    [{ repository: 'https://x', name: '../app' }, 'InvalidSpec', 'spec.source.chart.name'],
    [{ repository: 'https://x', name: 'a/b' }, 'InvalidSpec', "no '/'"],
    [{ repository: 'https://x', name: 'app', version: '1.0; rm -rf' }, 'InvalidRef', 'spec.source.chart.version'],
    [{ repository: 'https://x', name: 'app', version: '--devel' }, 'InvalidRef', 'spec.source.chart.version'],
  ])('refuses %j with %s naming the field', (chart, reason, message) => {
    const r = checkChartSource(chart);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.failure).toMatchObject({ reason, terminal: true });
    expect(!r.ok && r.failure.message).toContain(message);
  });
});

describe('OCI chart repositories', () => {
  it('appends the chart name to oci://host/path (Flux HelmRepository type oci), https on 443 by default', () => {
    expect(
      checkChartSource({ repository: 'oci://GHCR.io/stefanprodan/charts/', name: 'podinfo', version: '6.x' }),
    ).toEqual({
      ok: true,
      value: {
        kind: 'oci',
        repository: 'oci://ghcr.io/stefanprodan/charts',
        host: 'ghcr.io',
        port: 443,
        name: 'podinfo',
        version: '6.x',
        chartRef: 'oci://ghcr.io/stefanprodan/charts/podinfo',
      },
    });
    expect(checkChartSource({ repository: 'oci://127.0.0.1:5000/charts', name: 'app', insecure: true })).toMatchObject({
      ok: true,
      value: { port: 5000, plainHttp: true, chartRef: 'oci://127.0.0.1:5000/charts/app' },
    });
  });

  it('reads the manifest digest helm pull reports, and nothing else', () => {
    const hex = 'ab'.repeat(32);
    expect(manifestDigestFromPull(`Pulled: 127.0.0.1:5000/charts/app:1.1.0\nDigest: sha256:${hex}\n`)).toBe(hex);
    expect(manifestDigestFromPull('Pulled: x\n')).toBeUndefined();
  });

  it('writes credentials for the registry host alone, as a docker config helm reads', () => {
    const file = JSON.parse(registryConfigFile('reg.example.com:5000', { username: 'u', password: 'p:w' })) as {
      auths: Record<string, { auth: string }>;
    };
    expect(Object.keys(file.auths)).toEqual(['reg.example.com:5000']);
    expect(Buffer.from(file.auths['reg.example.com:5000']!.auth, 'base64').toString()).toBe('u:p:w');
    expect(JSON.parse(registryConfigFile('h', { identityToken: 't' }))).toEqual({
      auths: { h: { identitytoken: 't' } },
    });
    expect(JSON.parse(registryConfigFile('h', undefined))).toEqual({ auths: {} });
  });
});

describe('chart revisions and archives', () => {
  it('shows the version with the archive digest, as Flux shows tag@sha256', () => {
    expect(formatChartRevision('1.2.3', 'ab'.repeat(32))).toBe(`1.2.3@sha256:${'ab'.repeat(32)}`);
  });
  it('reads the version helm pulled off the archive name', () => {
    expect(versionFromArchive('app-1.2.3.tgz', 'app')).toBe('1.2.3');
    expect(versionFromArchive('app-1.2.3-rc.1+b2.tgz', 'app')).toBe('1.2.3-rc.1+b2');
    expect(versionFromArchive('other-1.2.3.tgz', 'app')).toBeUndefined();
    expect(versionFromArchive('app-latest.tgz', 'app')).toBeUndefined();
  });
});

describe('credentials', () => {
  it('puts them only in the repositories file, for the repository host only', () => {
    const file = JSON.parse(repositoriesFile('source', 'http://127.0.0.1:1', { username: 'u', password: 'p' })) as {
      repositories: Record<string, unknown>[];
    };
    expect(file.repositories).toEqual([
      {
        name: 'source',
        url: 'http://127.0.0.1:1',
        pass_credentials_all: false,
        insecure_skip_tls_verify: false,
        username: 'u',
        password: 'p',
      },
    ]);
  });
  it('takes basic auth and a CA; refuses half a pair and bearer tokens without leaking them', () => {
    expect(chartAuthFromSecret({ username: 'u', password: 'p', 'ca.crt': 'PEM' }, 's')).toEqual({
      ok: true,
      value: { username: 'u', password: 'p', ca: 'PEM' },
    });
    expect(chartAuthFromSecret(undefined, 's')).toEqual({ ok: true, value: {} });
    const halves: Record<string, string>[] = [
      { username: 'u' },
      { password: 'secret-pw' },
      { bearerToken: 'secret-tok' },
    ];
    for (const data of halves) {
      const r = chartAuthFromSecret(data, 's');
      expect(r).toMatchObject({ ok: false, failure: { reason: 'InvalidAuthSecret' } });
      expect(JSON.stringify(r)).not.toMatch(/secret-/);
    }
  });
});

describe('indexDigestFor', () => {
  const hex = 'ab'.repeat(32);
  const index = {
    entries: {
      app: [
        { name: 'app', version: '1.1.0', digest: hex },
        { name: 'app', version: 'v1.0.0', digest: 'cd'.repeat(32) },
        { name: 'app', version: '0.9.0' },
      ],
    },
  };
  it('finds the digest of the version helm pulled, with or without a leading v', () => {
    expect(indexDigestFor(index, 'app', '1.1.0')).toBe(hex);
    expect(indexDigestFor(index, 'app', '1.0.0')).toBe('cd'.repeat(32));
  });
  it('is undefined without an entry or a well-formed digest', () => {
    expect(indexDigestFor(index, 'app', '0.9.0')).toBeUndefined();
    expect(indexDigestFor(index, 'other', '1.1.0')).toBeUndefined();
    expect(indexDigestFor({ entries: { app: [{ version: '1.1.0', digest: 'x' }] } }, 'app', '1.1.0')).toBeUndefined();
    expect(indexDigestFor(null, 'app', '1.1.0')).toBeUndefined();
  });
});
