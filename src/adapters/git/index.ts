/** The git source adapter: validation, ref resolution, a shared read-only checkout cache, package reading. */
export { createGitSource } from './source-port.ts';
export type { GitSourceConfig } from './source-port.ts';
export { createGitFetcher } from './source.ts';
export type { Checkout, GitCallOptions, GitFetcher, GitFetcherOptions, GitFetchStats } from './source.ts';
export { authFromSecret } from './auth.ts';
export type { GitAuth } from './auth.ts';
export { formatRevision } from './refs.ts';
export type { ResolvedRef } from './refs.ts';
export { readPackageFiles } from './read-package.ts';
export type { PackageFile, ReadLimits } from './read-package.ts';
export { sweepStaleTemp } from './sweep.ts';
export { redactURL, refNameProblem, validatePackagePath, validateRef, validateSourceURL } from './validate.ts';
export type { RefSpec, SourceRef, SourceURL, Transport } from './validate.ts';
