import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../failure.ts';

/**
 * An OCI repository as spec.source.oci.url names it: `oci://host[:port]/path`, as Flux's OCIRepository
 * takes it. The tag or digest lives in spec.source.oci.ref, never in the URL (so a PackageSync says once
 * which version it follows). `packagesync push artifact` takes `oci://host/repo:tag` (parseArtifactTarget).
 */
export interface OciRepository {
  /** host or host:port, lower-cased (registries are case-insensitive on the host only). */
  host: string;
  /** The repository path inside the registry: `team/app` in `oci://ghcr.io/team/app`. */
  repository: string;
  /** True for localhost, 127.0.0.0/8 and ::1: the only hosts `insecure: true` (plain http) may name. */
  loopback: boolean;
  /** `oci://host/repository`, normalised: what messages and the cache key use. */
  url: string;
}

// The distribution spec's repository name grammar: lower-case path components separated by / .
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const HOST =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(?::[0-9]{1,5})?$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^sha256:[a-f0-9]{64}$/;

const invalid = (url: string, why: string) =>
  fail<never>(
    Reason.InvalidURL,
    `spec.source.oci.url ${JSON.stringify(url.slice(0, 200))} ${why}: write oci://host/repository (no tag, no credentials)`,
    { terminal: true },
  );

export function parseOciRepository(raw: string): Result<OciRepository> {
  if (!raw.startsWith('oci://')) return invalid(raw, 'does not start with oci://');
  const rest = raw.slice('oci://'.length);
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\s\u0000-\u001f\u007f@?#]/.test(rest)) return invalid(raw, 'has whitespace, control characters, @, ? or #');
  const slash = rest.indexOf('/');
  if (slash <= 0) return invalid(raw, 'names no repository path');
  const host = rest.slice(0, slash).toLowerCase();
  const repository = rest.slice(slash + 1);
  if (!HOST.test(host)) return invalid(raw, `has an invalid host ${JSON.stringify(host)}`);
  const port = /:([0-9]+)$/.exec(host)?.[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return invalid(raw, 'has an invalid port');
  if (repository.length > 255 || !repository.split('/').every((c) => COMPONENT.test(c))) {
    return invalid(
      raw,
      'has a repository path that is not lower-case components separated by / (a tag goes in ref.tag)',
    );
  }
  return ok({ host, repository, loopback: isLoopback(host), url: `oci://${host}/${repository}` });
}

export function isLoopback(hostPort: string): boolean {
  const host = hostPort.startsWith('[') ? hostPort.slice(1, hostPort.indexOf(']')) : hostPort.replace(/:[0-9]+$/, '');
  return host === 'localhost' || host === '::1' || /^127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$/.test(host);
}

export const isTag = (tag: string): boolean => TAG.test(tag);
export const isDigest = (digest: string): boolean => DIGEST.test(digest);

/** `oci://host/repo:tag` (push's target): the repository and the tag, which is required. */
export function parseArtifactTarget(raw: string): Result<OciRepository & { tag: string }> {
  const lastSlash = raw.lastIndexOf('/');
  const colon = raw.lastIndexOf(':');
  if (colon <= lastSlash) return invalid(raw, 'names no tag (oci://host/repository:tag)');
  const tag = raw.slice(colon + 1);
  if (!isTag(tag)) return invalid(raw, `has an invalid tag ${JSON.stringify(tag.slice(0, 130))}`);
  const repo = parseOciRepository(raw.slice(0, colon));
  if (!repo.ok) return repo;
  return ok({ ...repo.value, tag });
}
