import semver from 'semver';
import { Reason } from '../../api/reasons.ts';
import { fail, ok } from '../../core/failure.ts';
import type { Result } from '../../core/failure.ts';

/**
 * Validation of everything the user-controlled spec hands to git: the URL, the ref and the package path.
 * Pure (no I/O). These checks run before any git process starts, so nothing from the spec can reach git as an
 * option, a transport helper, a local path or a config value (architecture invariant 4).
 */

export type SourceRef = { branch: string } | { tag: string } | { semver: string } | { commit: string };

/** The ref as the spec carries it (every field optional); validateRef turns it into a SourceRef. */
export interface RefSpec {
  branch?: string | undefined;
  tag?: string | undefined;
  semver?: string | undefined;
  commit?: string | undefined;
}

export type Transport = 'https' | 'http' | 'ssh';

export interface SourceURL {
  /** The URL exactly as the user wrote it (it carries no password: those are rejected). */
  url: string;
  transport: Transport;
  host: string;
}

const MAX_URL_LENGTH = 2048;
const MAX_REF_LENGTH = 255;
const MAX_PATH_LENGTH = 4096;

/** Control, format (bidi, zero-width), unassigned and private-use characters, plus any whitespace. */
const INVISIBLE_OR_SPACE = /[\p{C}\s]/u;
/** A percent-encoded control character: git would decode it into the same thing we refuse in clear. */
const ENCODED_CONTROL = /%(?:[01][0-9a-f]|7f)/i;
/** Decoded, these are refused too: C1 controls, bidi and zero-width format characters, line separators. */
const DECODED_INVISIBLE = /[\p{C}\u2028\u2029]/u;
/** `foo::address` makes git run the remote helper git-remote-foo (ext:: runs arbitrary commands). */
const REMOTE_HELPER = /^[a-z][a-z0-9+.-]*::/i;
/** scp-like syntax as git reads it: user@host:path, no slash before the colon. */
const SCP_LIKE = /^([^@/:]+)@([^@/:[\]]+|\[[^\]/]+\]):(.+)$/;

const invalidURL = (why: string): Result<never> => fail(Reason.InvalidURL, `source URL ${why}`, { terminal: true });

/**
 * Accepts https://, ssh://, scp form user@host:path, and http:// only when allowInsecureHttp. Messages never
 * repeat a password the URL might carry.
 */
export function validateSourceURL(url: string, opts: { allowInsecureHttp?: boolean } = {}): Result<SourceURL> {
  if (typeof url !== 'string' || url.length === 0) return invalidURL('is empty');
  if (url.length > MAX_URL_LENGTH) return invalidURL(`is longer than ${MAX_URL_LENGTH} characters`);
  if (INVISIBLE_OR_SPACE.test(url)) return invalidURL('contains whitespace or control characters');
  if (ENCODED_CONTROL.test(url)) return invalidURL('contains a percent-encoded control character');
  const decoded = percentDecode(url);
  if (decoded === undefined) return invalidURL('has a malformed percent-encoding');
  if (DECODED_INVISIBLE.test(decoded)) return invalidURL('contains a percent-encoded control or invisible character');
  // Never valid raw in a URL (RFC 3986); refusing them also keeps the URL inert where git uses it as a
  // config subsection (the bearer token's http.<url>.extraHeader).
  if (/["<>\\^`{|}]/.test(url)) return invalidURL('contains a character that must be percent-encoded ("<>\\^`{|})');
  if (url.startsWith('-')) return invalidURL('must not start with "-"');
  if (REMOTE_HELPER.test(url)) return invalidURL('uses remote-helper syntax "<transport>::", which is not allowed');

  const schemeMatch = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url);
  if (schemeMatch?.[1]) return validateSchemeURL(url, schemeMatch[1].toLowerCase(), opts.allowInsecureHttp === true);

  const scp = SCP_LIKE.exec(url);
  if (scp) {
    const [, user = '', host = '', path = ''] = scp;
    if (user.startsWith('-') || host.replace(/^\[/, '').startsWith('-')) {
      return invalidURL('has a user or host starting with "-"');
    }
    if (!isAsciiHost(host)) return invalidURL(NON_ASCII_HOST);
    if (path.startsWith('-')) return invalidURL('has a repository path starting with "-"');
    if (user.includes('%') || host.includes('%')) return invalidURL('has a percent-encoded user or host');
    return ok({ url, transport: 'ssh', host });
  }
  if (url.includes(':') && !url.includes('/')) {
    return invalidURL('looks like host:path; write user@host:path or ssh://user@host/path');
  }
  return invalidURL('is a local path or an unknown form; use https://, ssh:// or user@host:path');
}

function validateSchemeURL(url: string, scheme: string, allowHttp: boolean): Result<SourceURL> {
  if (scheme === 'http' && !allowHttp) {
    return invalidURL('uses plain http, which this operator does not allow (use https)');
  }
  if (scheme !== 'https' && scheme !== 'http' && scheme !== 'ssh') {
    return invalidURL(
      `uses the "${scheme}" scheme; only https, ssh${allowHttp ? ', http' : ''} and user@host:path are allowed`,
    );
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return invalidURL('cannot be parsed');
  }
  // Any password, even an empty one, is refused: credentials belong in the secret, never in a URL git may print.
  if (parsed.password !== '' || /^[^/]*\/\/[^/@]*:[^/@]*@/.test(url)) {
    return invalidURL('must not contain a password; put credentials in the secret named by secretRef');
  }
  const host = parsed.hostname;
  if (host === '') return invalidURL('has no host');
  // The host as written, not as WHATWG URL normalises it (fullwidth letters, IDN): git connects to what is written.
  if (!isAsciiHost(/^[^/]*\/\/(?:[^/@]*@)?([^/?#]*)/.exec(url)?.[1] ?? '')) return invalidURL(NON_ASCII_HOST);
  // A user name that decodes to user:password is a password in the URL all the same.
  if (percentDecode(parsed.username)?.includes(':')) {
    return invalidURL('must not contain a password; put credentials in the secret named by secretRef');
  }
  // An https user name is either useless (the secret carries the user name for basic auth) or a token
  // (https://<token>@host is a common way to write one), which would then be shown wherever the URL is.
  if (scheme !== 'ssh' && (parsed.username !== '' || /^[^/]*\/\/[^/]*@/.test(url))) {
    return invalidURL('must not contain a user name; put credentials in the secret named by secretRef');
  }
  if (host.startsWith('-') || parsed.username.startsWith('-'))
    return invalidURL('has a user or host starting with "-"');
  if (scheme === 'ssh' && (host.includes('%') || parsed.username.includes('%'))) {
    return invalidURL('has a percent-encoded user or host');
  }
  if (parsed.hash !== '' || url.includes('#')) return invalidURL('must not contain a fragment ("#")');
  if (parsed.pathname === '' || parsed.pathname === '/') return invalidURL('names no repository path');
  return ok({ url, transport: scheme as Transport, host });
}

const NON_ASCII_HOST =
  'has a host with non-ASCII characters; write an internationalised host in its xn-- (punycode) form';

function isAsciiHost(host: string): boolean {
  return /^[\x21-\x7e]*$/.test(host);
}

/** decodeURIComponent, or undefined when a % is not followed by two hex digits or the bytes are not UTF-8. */
function percentDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

/** The URL with any userinfo replaced by "***", for messages about URLs that failed validation. */
export function redactURL(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1***@');
}

const invalidRef = (why: string): Result<never> => fail(Reason.InvalidRef, why, { terminal: true });

/**
 * At most one of branch | tag | semver | commit; none means the remote's HEAD. Branch and tag names follow
 * `git check-ref-format`; a commit is a full 40 (sha1) or 64 (sha256) hex id, returned lower-cased.
 */
export function validateRef(ref: RefSpec | SourceRef | undefined): Result<SourceRef | undefined> {
  if (ref === undefined || ref === null) return ok(undefined);
  if (typeof ref !== 'object') return invalidRef('ref must be an object with one of branch, tag, semver, commit');
  const entries = Object.entries(ref).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return ok(undefined);
  if (entries.length > 1) return invalidRef(`ref sets ${entries.map(([k]) => k).join(' and ')}; set exactly one`);
  const [kind, value] = entries[0] as [string, unknown];
  if (typeof value !== 'string') return invalidRef(`ref.${kind} must be a string`);
  switch (kind) {
    case 'branch':
    case 'tag': {
      const why = refNameProblem(value);
      if (why) return invalidRef(`ref.${kind} ${JSON.stringify(value)} is not a valid git ref name: ${why}`);
      if (kind === 'branch' && value === 'HEAD')
        return invalidRef('ref.branch must not be "HEAD"; omit ref to follow HEAD');
      return ok(kind === 'branch' ? { branch: value } : { tag: value });
    }
    case 'semver': {
      if (value.trim() === '' || value.length > MAX_REF_LENGTH || INVISIBLE_OR_SPACE.test(value.replace(/ /g, ''))) {
        return invalidRef('ref.semver must be a non-empty semver range');
      }
      if (semver.validRange(value) === null)
        return invalidRef(`ref.semver ${JSON.stringify(value)} is not a valid semver range`);
      return ok({ semver: value });
    }
    case 'commit': {
      if (!/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i.test(value)) {
        return invalidRef('ref.commit must be a full commit id (40 or 64 hex characters)');
      }
      return ok({ commit: value.toLowerCase() });
    }
    default:
      return invalidRef(`ref.${kind} is not one of branch, tag, semver, commit`);
  }
}

/** Why `name` fails git check-ref-format (as a one-level name, which git allows for branches), or undefined. */
export function refNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'empty';
  if (name.length > MAX_REF_LENGTH) return `longer than ${MAX_REF_LENGTH} characters`;
  if (name.startsWith('-')) return 'starts with "-"';
  if (name === '@') return 'is "@"';
  if (INVISIBLE_OR_SPACE.test(name)) return 'contains whitespace or control characters';
  if (/[~^:?*[\\]/.test(name)) return 'contains one of ~ ^ : ? * [ \\';
  if (name.includes('..')) return 'contains ".."';
  if (name.includes('@{')) return 'contains "@{"';
  if (name.startsWith('/') || name.endsWith('/') || name.includes('//')) return 'has an empty path component';
  if (name.endsWith('.')) return 'ends with "."';
  for (const part of name.split('/')) {
    if (part.startsWith('.')) return 'has a component starting with "."';
    if (part.endsWith('.lock')) return 'has a component ending with ".lock"';
  }
  return undefined;
}

/** Normalises `./apps/web/` to `apps/web` ("." for the repository root); refuses anything that could leave it. */
export function validatePackagePath(path: string | undefined): Result<string> {
  if (path === undefined || path === '') return ok('.');
  const invalid = (why: string): Result<never> =>
    fail(Reason.InvalidPath, `path ${JSON.stringify(path)} ${why}`, { terminal: true });
  if (typeof path !== 'string') return fail(Reason.InvalidPath, 'path must be a string', { terminal: true });
  if (path.length > MAX_PATH_LENGTH) return invalid(`is longer than ${MAX_PATH_LENGTH} characters`);
  if (/\p{C}/u.test(path)) return invalid('contains control characters');
  if (path.includes('\\')) return invalid('contains "\\"; use "/" as the separator');
  if (path.startsWith('/')) return invalid('must be relative to the repository root');
  const segments = path.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) return invalid('must not contain ".." segments');
  if (segments.some((s) => s.toLowerCase() === '.git')) return invalid('must not point into .git');
  return ok(segments.length === 0 ? '.' : segments.join('/'));
}
