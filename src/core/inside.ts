/**
 * Whether `path` is `root` or lies under it, compared path segment by segment. Both are absolute real
 * paths (symlinks already resolved by the caller). A string prefix is not containment: `/repo/app-files`
 * starts with `/repo/app` but is not inside it (issue 34). The one containment test every check uses.
 */
export function isInside(root: string, path: string): boolean {
  const rootParts = segments(root);
  const parts = segments(path);
  if (rootParts === undefined || parts === undefined || parts.length < rootParts.length) return false;
  return rootParts.every((part, i) => parts[i] === part);
}

/** The segments of an absolute path; undefined for a relative one or one holding `.`/`..` (not a real path). */
function segments(path: string): string[] | undefined {
  if (!path.startsWith('/')) return undefined;
  const parts = path.split('/').filter((p) => p !== '');
  return parts.some((p) => p === '.' || p === '..') ? undefined : parts;
}
