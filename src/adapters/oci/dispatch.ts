import type { SourcePort } from '../git/source-port.ts';

/**
 * One SourcePort over both kinds of source: spec.source.oci goes to the OCI source, spec.source.url to git
 * (the schema admits exactly one of them). `forget` is git's: OCI tags are asked for on every fetch.
 */
export function sourceBySpec(git: SourcePort, oci: SourcePort): SourcePort {
  return {
    fetch: (source, credentials, signal) =>
      source.oci !== undefined ? oci.fetch(source, credentials, signal) : git.fetch(source, credentials, signal),
    ...(git.forget ? { forget: (url: string) => git.forget!(url) } : {}),
  };
}
