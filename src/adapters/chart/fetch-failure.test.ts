import { describe, expect, it } from 'vitest';
import { describeHelmFetchFailure } from './fetch-failure.ts';

const what = 'fetching chart app 1.x from http://127.0.0.1:1';

describe('a failed helm fetch as a condition', () => {
  // found by e2e/chart-source: helm repo update says "401" on stdout, and only a summary on stderr
  it('a refused login reported on stdout is AuthenticationFailed, without the server text', () => {
    const r = describeHelmFetchFailure(
      what,
      {
        ok: false,
        kind: 'exit',
        exitCode: 1,
        stderr: 'Error: failed to update the following repositories: [http://127.0.0.1:1]',
        stdout:
          '...Unable to get an update from the "source" chart repository (http://127.0.0.1:1): failed to fetch http://127.0.0.1:1/index.yaml : 401 Unauthorized',
      },
      '/bin/helm',
    );
    expect(r).toMatchObject({ ok: false, failure: { reason: 'AuthenticationFailed' } });
    expect(!r.ok && r.failure.message).toContain('spec.source.chart.secretRef');
  });

  it('no matching version is RefNotFound; anything else FetchFailed with what helm said', () => {
    expect(
      describeHelmFetchFailure(
        what,
        {
          ok: false,
          kind: 'exit',
          exitCode: 1,
          stderr: 'Error: chart "app" version "9.x" not found in http://127.0.0.1:1 repository',
        },
        '/bin/helm',
      ),
    ).toMatchObject({ ok: false, failure: { reason: 'RefNotFound' } });
    const other = describeHelmFetchFailure(
      what,
      { ok: false, kind: 'exit', exitCode: 1, stderr: 'Error: connection refused' },
      '/bin/helm',
    );
    expect(other).toMatchObject({ ok: false, failure: { reason: 'FetchFailed' } });
    expect(!other.ok && other.failure.message).toContain('connection refused');
    expect(describeHelmFetchFailure(what, { ok: false, kind: 'timeout', stderr: '' }, '/bin/helm')).toMatchObject({
      ok: false,
      failure: { reason: 'SourceTimeout' },
    });
  });

  // what the pinned helm says for OCI charts (seen running helm v4 against the test registry)
  it.each([
    'Error: could not locate a version matching provided version string >=3.0.0',
    'Error: GET "https://127.0.0.1:1/v2/charts/nope/tags/list": response status code 404: name unknown: repository name not known to registry',
  ])('an OCI chart with no matching tag is RefNotFound: %s', (stderr) => {
    expect(describeHelmFetchFailure(what, { ok: false, kind: 'exit', exitCode: 1, stderr }, '/bin/helm')).toMatchObject(
      {
        ok: false,
        failure: { reason: 'RefNotFound' },
      },
    );
  });

  it('an OCI registry refusing the login is AuthenticationFailed', () => {
    const stderr =
      'Error: failed to perform "FetchReference" on source: GET "https://127.0.0.1:1/v2/charts/app/tags/list": response status code 401: unauthorized: authentication required';
    expect(describeHelmFetchFailure(what, { ok: false, kind: 'exit', exitCode: 1, stderr }, '/bin/helm')).toMatchObject(
      {
        ok: false,
        failure: { reason: 'AuthenticationFailed' },
      },
    );
  });
});
