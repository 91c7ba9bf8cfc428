import { Reason } from '../../api/reasons.ts';
import { fail } from '../../core/failure.ts';
import type { SourcePort } from '../git/source-port.ts';

/**
 * One SourcePort over both kinds of source: spec.source.oci goes to the OCI source, spec.source.url to git
 * (the schema admits exactly one of them). `forget` and `resolve` are git's: OCI tags are asked for on every fetch.
 * `verify` (spec.source.verify: commit and tag signatures) is git's too: an OCI artifact's signatures
 * (cosign, notation) are not verified yet, so asking for it there fails instead of passing unchecked.
 */
export function sourceBySpec(git: SourcePort, oci: SourcePort, chart?: SourcePort): SourcePort {
  // spec.source.chart (docs/adr/0041): like OCI, resolved by fetching and never verified by git's verify
  const notGit = (source: Parameters<SourcePort['fetch']>[0]) => source.oci !== undefined || source.chart !== undefined;
  return {
    fetch: (source, credentials, signal, opts) =>
      source.oci !== undefined
        ? oci.fetch(source, credentials, signal, opts)
        : source.chart !== undefined
          ? chart
            ? chart.fetch(source, credentials, signal, opts)
            : Promise.resolve(
                fail(Reason.InvalidSpec, 'spec.source.chart is not supported by this command', { terminal: true }),
              )
          : git.fetch(source, credentials, signal, opts),
    ...(git.forget ? { forget: (url: string, since?: number) => git.forget!(url, since) } : {}),
    // the ref's commit without a fetch (engine/unchanged-check.ts): git's; an OCI tag is asked for on every fetch
    ...(git.resolve
      ? {
          resolve: async (source, credentials, signal) =>
            notGit(source)
              ? fail<string>(Reason.FetchFailed, 'an OCI or chart source is resolved by fetching it')
              : git.resolve!(source, credentials, signal),
        }
      : {}),
    ...(oci.resolveArtifact
      ? {
          resolveArtifact: async (source, credentials, signal) =>
            source.oci !== undefined
              ? oci.resolveArtifact!(source, credentials, signal)
              : fail<string>(Reason.InvalidSpec, 'only an OCI source is resolved to an artifact digest'),
        }
      : {}),
    verify: async (source, fetched, keys, credentials, signal) => {
      if (notGit(source) || !git.verify)
        return {
          ok: false,
          failure: {
            reason: Reason.VerificationFailed,
            message:
              'spec.source.verify checks git commit and tag signatures; OCI artifact signatures are not verified yet, and chart provenance is spec.source.chart.verify: remove spec.source.verify from an oci or chart source',
            terminal: true,
          },
        };
      return git.verify(source, fetched, keys, credentials, signal);
    },
  };
}
