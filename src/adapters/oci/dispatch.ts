import { Reason } from '../../api/reasons.ts';
import type { SourcePort } from '../git/source-port.ts';

/**
 * One SourcePort over both kinds of source: spec.source.oci goes to the OCI source, spec.source.url to git
 * (the schema admits exactly one of them). `forget` is git's: OCI tags are asked for on every fetch.
 * `verify` (spec.source.verify: commit and tag signatures) is git's too: an OCI artifact's signatures
 * (cosign, notation) are not verified yet, so asking for it there fails instead of passing unchecked.
 */
export function sourceBySpec(git: SourcePort, oci: SourcePort): SourcePort {
  return {
    fetch: (source, credentials, signal, opts) =>
      source.oci !== undefined
        ? oci.fetch(source, credentials, signal, opts)
        : git.fetch(source, credentials, signal, opts),
    ...(git.forget ? { forget: (url: string) => git.forget!(url) } : {}),
    verify: async (source, fetched, keys, credentials, signal) => {
      if (source.oci !== undefined || !git.verify)
        return {
          ok: false,
          failure: {
            reason: Reason.VerificationFailed,
            message:
              'spec.source.verify checks git commit and tag signatures; OCI artifact signatures are not verified yet: remove verify from an oci source',
            terminal: true,
          },
        };
      return git.verify(source, fetched, keys, credentials, signal);
    },
  };
}
