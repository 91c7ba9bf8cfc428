/**
 * A revision's commit on the forge that hosts the repository, for the known forges only (GitHub, GitLab,
 * Bitbucket, Codeberg, and gitlab.* / gitea.* / forgejo.* hosts that follow their layout). Pure and free of zod, so
 * the browser bundle takes it. The link is built from parts that are checked one by one (host, path segments of
 * letters, digits and ._-, a hex SHA): a hostile URL in a spec yields no link, never a javascript: one.
 */

type Layout = 'github' | 'gitlab' | 'bitbucket' | 'gitea';

const KNOWN: Record<string, Layout> = {
  'github.com': 'github',
  'gitlab.com': 'gitlab',
  'bitbucket.org': 'bitbucket',
  'codeberg.org': 'gitea',
};

function layoutOf(host: string): Layout | undefined {
  if (KNOWN[host]) return KNOWN[host];
  if (/^gitlab\./.test(host)) return 'gitlab';
  if (/^(gitea|forgejo)\./.test(host)) return 'gitea';
  return undefined;
}

const SEGMENT = /^[A-Za-z0-9._-]+$/;
const HOST = /^[a-z0-9.-]+$/;

/** `https://github.com/o/r.git`, `ssh://git@github.com/o/r`, `git@github.com:o/r.git` → host and repository path. */
export function repoOf(url: string): { host: string; path: string[] } | undefined {
  let host: string;
  let path: string;
  const scp = /^[A-Za-z0-9._-]+@([^:/]+):(.+)$/.exec(url);
  if (scp) [host, path] = [scp[1]!, scp[2]!];
  else {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return undefined;
    }
    if (!['https:', 'http:', 'ssh:'].includes(u.protocol)) return undefined;
    [host, path] = [u.hostname, u.pathname];
  }
  host = host.toLowerCase();
  const parts = path
    .replace(/\.git\/?$/, '')
    .split('/')
    .filter(Boolean);
  if (!HOST.test(host) || parts.length < 2 || !parts.every((p) => SEGMENT.test(p) && p !== '..' && p !== '.'))
    return undefined;
  return { host, path: parts };
}

/** The 40- or 64-hex commit of `main@sha1:…`, `v1.2.0@sha1:…`, or a bare SHA. */
export function commitOf(revision: string | undefined): string | undefined {
  const m = /(?:^|[@:])([0-9a-f]{40}|[0-9a-f]{64})$/.exec(revision ?? '');
  return m?.[1];
}

export function commitUrl(sourceUrl: string | undefined, revision: string | undefined): string | undefined {
  const sha = commitOf(revision);
  const repo = sourceUrl ? repoOf(sourceUrl) : undefined;
  const layout = repo && layoutOf(repo.host);
  if (!sha || !repo || !layout) return undefined;
  const base = `https://${repo.host}/${repo.path.join('/')}`;
  switch (layout) {
    case 'github':
    case 'gitea':
      return `${base}/commit/${sha}`;
    case 'gitlab':
      return `${base}/-/commit/${sha}`;
    case 'bitbucket':
      return `${base}/commits/${sha}`;
  }
}
