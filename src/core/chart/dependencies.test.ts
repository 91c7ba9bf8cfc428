import { describe, expect, it } from 'vitest';
import { absentDependencies, dependencyNeeds } from './dependencies.ts';

describe('dependencyNeeds', () => {
  it('names the ports of the repositories a Chart.yaml depends on; bundled and file:// ones need none', () => {
    expect(dependencyNeeds({ name: 'a' }, 'a')).toEqual({
      ok: true,
      value: { remote: false, ports: [], repositories: [] },
    });
    expect(
      dependencyNeeds(
        {
          dependencies: [
            { name: 'local', repository: 'file://../local' },
            { name: 'bundled' },
            { name: 'redis', repository: 'https://charts.bitnami.com/bitnami' },
            { name: 'sub', repository: 'http://127.0.0.1:8081' },
            { name: 'podinfo', repository: 'oci://ghcr.io/stefanprodan/charts' },
            { name: 'app', repository: 'oci://127.0.0.1:5000/charts' },
          ],
        },
        'umbrella',
      ),
    ).toEqual({
      ok: true,
      value: {
        remote: true,
        ports: [443, 5000, 8081],
        repositories: [
          'https://charts.bitnami.com/bitnami',
          'http://127.0.0.1:8081',
          'oci://ghcr.io/stefanprodan/charts',
          'oci://127.0.0.1:5000/charts',
        ],
      },
    });
  });

  it.each([
    [{ dependencies: 'x' }, 'not a list'],
    [{ dependencies: [{ repository: 'https://x' }] }, 'dependencies[0] has no name'],
    [{ dependencies: [{ name: 'a', repository: '@stable' }] }, 'by alias'],
    [{ dependencies: [{ name: 'a', repository: 'alias:stable' }] }, 'write the repository URL'],
    [{ dependencies: [{ name: 'a', repository: 'http://charts.example.com' }] }, 'plain http'],
    [{ dependencies: [{ name: 'a', repository: 'https://u:p@charts.example.com' }] }, 'credentials in its URL'],
    [{ dependencies: [{ name: 'a', repository: 'ftp://x' }] }, 'neither https'],
    [{ dependencies: [{ name: 'a', repository: 'oci://Bad Host/x' }] }, 'not oci://host/path'],
  ])('refuses %j naming the chart and the dependency', (chartYaml, message) => {
    const r = dependencyNeeds(chartYaml, 'umbrella');
    expect(r).toMatchObject({ ok: false, failure: { reason: 'RenderFailed', terminal: true } });
    expect(!r.ok && r.failure.message).toContain('chart umbrella: Chart.yaml');
    expect(!r.ok && r.failure.message).toContain(message);
  });
});

describe('absentDependencies', () => {
  it('reads the STATUS column of helm dependency list', () => {
    const listing = [
      'NAME\tVERSION\tREPOSITORY\tSTATUS',
      'dep \t0.x     \thttp://127.0.0.1:1\tok     ',
      'app \t>=1.0.0 <2.0.0\toci://127.0.0.1:2/charts\tmissing',
      'old \t1.x\thttps://x\twrong version',
      'dir \t1.x\thttps://x\tunpacked',
      '',
    ].join('\n');
    expect(absentDependencies(listing)).toEqual(['app (missing)', 'old (wrong version)']);
    expect(absentDependencies('NAME\tVERSION\tREPOSITORY\tSTATUS\n')).toEqual([]);
  });
});
