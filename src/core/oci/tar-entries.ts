import { posix } from 'node:path';
import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../failure.ts';

/**
 * The rules every entry of an artifact's tarball must pass before anything is written to disk. A registry
 * is as untrusted as a git server: a tarball may try to write outside the directory it is unpacked into
 * (`../x`, `/etc/x`), or plant a link that a later entry or a render tool follows out of it. Refused, not
 * skipped (node-tar would strip such paths with a warning): a package with an unsafe entry is not the
 * package its author meant, so nothing of it is applied.
 */
export interface TarEntry {
  path: string;
  /** node-tar's entry type names: File, OldFile, ContiguousFile, Directory, SymbolicLink, Link, … */
  type: string;
  size: number;
  /** Target of a SymbolicLink or Link. */
  linkpath?: string | undefined;
}

const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);

/** The entry's path, normalised and relative; undefined when it escapes or is absolute. */
function inside(path: string): string | undefined {
  if (path.includes('\0') || path.includes('\\')) return undefined;
  if (posix.isAbsolute(path) || /^[a-zA-Z]:/.test(path)) return undefined;
  if (path.split('/').includes('..')) return undefined;
  const normal = posix.normalize(path).replace(/\/+$/, '');
  return normal === '' ? '.' : normal;
}

/**
 * Where a symbolic link at `base/…` pointing at `target` lands, walked one component at a time, so a `..`
 * after a component that is itself a link (whose real parent is elsewhere) is refused rather than resolved
 * lexically. undefined: out of the root, or through a link.
 */
function linkTarget(base: string, target: string, links: ReadonlySet<string>): string | undefined {
  if (target.includes('\0') || target.includes('\\')) return undefined;
  const stack = base === '.' ? [] : base.split('/');
  for (const c of target.split('/')) {
    if (c === '' || c === '.') continue;
    if (stack.length > 0 && links.has(stack.join('/'))) return undefined;
    if (c === '..') {
      if (stack.length === 0) return undefined;
      stack.pop();
    } else stack.push(c);
  }
  return stack.join('/') || '.';
}

/** Checks the entries in order; symlinks seen so far may not be passed through by a later entry. */
export function checkTarEntries(entries: readonly TarEntry[], artifact: string, maxTotalBytes: number): Result<void> {
  const unsafe = (entry: TarEntry, why: string) =>
    fail<void>(
      Reason.ArtifactUnsafeEntry,
      `artifact ${artifact} has an unsafe tar entry ${JSON.stringify(entry.path.slice(0, 200))}: ${why}; nothing of it was unpacked: rebuild the artifact from a plain directory (packagesync push artifact)`,
      { terminal: true },
    );
  const links = new Set<string>();
  /** Every path written so far and its parent directories: a link may not replace one of them. */
  const seen = new Set<string>();
  const throughLink = (p: string) => {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) if (links.has(parts.slice(0, i).join('/'))) return true;
    return false;
  };
  let total = 0;
  for (const entry of entries) {
    const path = inside(entry.path);
    if (path === undefined) return unsafe(entry, 'an absolute path or a .. segment');
    if (throughLink(path) || links.has(path)) return unsafe(entry, 'it is written through or over a symbolic link');
    if (entry.type === 'SymbolicLink' || entry.type === 'Link') {
      if (seen.has(path)) return unsafe(entry, 'a link that replaces an earlier entry');
      const raw = entry.linkpath ?? '';
      if (raw === '' || posix.isAbsolute(raw)) return unsafe(entry, 'a link to an absolute path');
      // a symlink's target is relative to its directory; a hard link's to the root of the archive
      const base = entry.type === 'SymbolicLink' ? posix.dirname(path) : '.';
      const target = linkTarget(base, raw, links);
      if (target === undefined || (target === '.' && entry.type === 'Link')) {
        return unsafe(entry, 'a link that points out of the artifact (or through another link)');
      }
      if (entry.type === 'SymbolicLink') links.add(path);
    } else if (!FILE_TYPES.has(entry.type) && entry.type !== 'Directory') {
      return unsafe(entry, `an entry of type ${entry.type} (only files, directories and links inside the artifact)`);
    }
    const parts = path.split('/');
    for (let i = 1; i <= parts.length; i++) seen.add(parts.slice(0, i).join('/'));
    total += entry.size;
    if (total > maxTotalBytes) {
      return fail(
        Reason.ArtifactTooLarge,
        `artifact ${artifact} unpacks to more than ${maxTotalBytes} bytes (4 × --oci-max-layer-bytes): make the package smaller or raise the flag`,
        { terminal: true },
      );
    }
  }
  return ok(undefined);
}
