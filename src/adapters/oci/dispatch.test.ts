import { describe, expect, it } from 'vitest';
import type { SourcePort } from '../git/source-port.ts';
import { sourceBySpec } from './dispatch.ts';

const fetched = { revision: 'main@sha1:abc', commit: 'abc', files: [], checkoutRoot: '/x', packagePath: '.' };
const git: SourcePort = {
  fetch: () => Promise.resolve({ ok: true, value: fetched }),
  verify: () => Promise.resolve({ ok: true, value: undefined }),
};
const oci: SourcePort = { fetch: () => Promise.resolve({ ok: true, value: fetched }) };
const verify = { mode: 'HEAD', secretRef: { name: 'keys' } };

describe('one source port over git and OCI', () => {
  it("passes spec.source.verify to git's check", async () => {
    const source = { url: 'https://example.com/r.git', path: '.', verify } as never;
    const port = sourceBySpec(git, oci);
    expect(await port.verify!(source, fetched, {} as never, undefined, new AbortController().signal)).toEqual({
      ok: true,
      value: undefined,
    });
  });

  // found when the OCI and the commit-verification branches met: verify on an OCI source must not pass unchecked
  it('refuses spec.source.verify on an OCI source instead of passing it unchecked', async () => {
    const source = { oci: { url: 'oci://r.example/p' }, path: '.', verify } as never;
    const result = await sourceBySpec(git, oci).verify!(
      source,
      fetched,
      {} as never,
      undefined,
      new AbortController().signal,
    );
    expect(result.ok).toBe(false);
    expect(!result.ok && result.failure.reason).toBe('VerificationFailed');
    expect(!result.ok && result.failure.message).toMatch(/OCI artifact signatures are not verified/);
  });

  // issue 33: spec.source.chart goes to the chart source; a caller without one refuses it instead of asking git
  it('routes a chart source to the chart port, and refuses it (InvalidSpec) when there is none', async () => {
    const source = { chart: { repository: 'https://c', name: 'app' }, path: '.' } as never;
    const chartFetched = { ...fetched, revision: '1.0.0@sha256:00' };
    const chart: SourcePort = { fetch: () => Promise.resolve({ ok: true, value: chartFetched }) };
    const signal = new AbortController().signal;
    expect(await sourceBySpec(git, oci, chart).fetch(source, undefined, signal)).toEqual({
      ok: true,
      value: chartFetched,
    });
    expect(await sourceBySpec(git, oci).fetch(source, undefined, signal)).toMatchObject({
      ok: false,
      failure: { reason: 'InvalidSpec' },
    });
    const verified = await sourceBySpec(git, oci, chart).verify!(source, fetched, {} as never, undefined, signal);
    expect(verified).toMatchObject({ ok: false, failure: { reason: 'VerificationFailed' } });
  });
});
