/**
 * Commit statuses on the revision's commit, per forge's documented API:
 * - GitHub: POST /repos/{owner}/{repo}/statuses/{sha} on api.github.com (GitHub Enterprise: https://host/api/v3),
 *   `Authorization: Bearer`, state error | failure | pending | success, description at most 140 characters.
 * - GitLab: POST /api/v4/projects/{url-encoded path}/statuses/{sha}, `PRIVATE-TOKEN`, state pending | running |
 *   success | failed | canceled, the context is `name`.
 * - Gitea and Forgejo: POST /api/v1/repos/{owner}/{repo}/statuses/{sha}, `Authorization: token`, state pending |
 *   success | error | failure | warning.
 */
import type { RecordMessage } from './record.ts';
import { json, type Built, type ProviderConfig } from './request.ts';
import { renderTemplate, type TemplateFields } from './template.ts';

export const DEFAULT_CONTEXT = 'packagesync/{{ .namespace }}/{{ .name }}';

type Kind = RecordMessage['kind'];
const GITHUB_STATE: Record<Kind, string> = {
  started: 'pending',
  applied: 'pending',
  healthy: 'success',
  resolved: 'success',
  failed: 'failure',
  superseded: 'error',
};
const GITLAB_STATE: Record<Kind, string> = {
  started: 'pending',
  applied: 'running',
  healthy: 'success',
  resolved: 'success',
  failed: 'failed',
  superseded: 'canceled',
};

/** A repository URL split into the forge's origin, any path prefix before it, and the repository path. */
export function repositoryOf(address: string): { origin: string; prefix: string; path: string } | undefined {
  let u: URL;
  try {
    u = new URL(address);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
  const parts = u.pathname
    .replace(/\.git$/, '')
    .split('/')
    .filter(Boolean);
  if (parts.length < 2) return undefined;
  return { origin: u.origin, prefix: '', path: parts.join('/') };
}

export function commitStatusRequest(cfg: ProviderConfig, msg: RecordMessage, f: TemplateFields, text: string): Built {
  if (!f.commit) return { skip: `revision ${f.revision || '(none)'} names no git commit` };
  const repo = repositoryOf(cfg.address);
  if (!repo) return { skip: 'spec.address is not a repository URL such as https://host/owner/repo' };
  const context = renderTemplate(cfg.context ?? DEFAULT_CONTEXT, f);
  const description = text.length > 140 ? `${text.slice(0, 139)}…` : text;
  const targetUrl = f.url ? { target_url: f.url } : {};
  const sha = f.commit;
  const token = cfg.token ?? '';
  const parts = repo.path.split('/');
  switch (cfg.type) {
    case 'github': {
      const host = new URL(repo.origin).hostname;
      const api = host === 'github.com' ? 'https://api.github.com' : `${repo.origin}/api/v3`;
      const [owner, name] = parts.slice(-2);
      return {
        request: json(
          `${api}/repos/${enc(owner!)}/${enc(name!)}/statuses/${sha}`,
          { state: GITHUB_STATE[msg.kind], context, description, ...targetUrl },
          {
            authorization: `Bearer ${token}`,
            accept: 'application/vnd.github+json',
            'x-github-api-version': '2022-11-28',
            'user-agent': 'packagesync',
          },
        ),
      };
    }
    case 'gitlab':
      return {
        request: json(
          `${repo.origin}/api/v4/projects/${encodeURIComponent(repo.path)}/statuses/${sha}`,
          { state: GITLAB_STATE[msg.kind], name: context, description, ...targetUrl },
          { 'private-token': token },
        ),
      };
    case 'gitea': {
      // a Gitea served under a path (https://host/git/owner/repo): the API is under the same prefix
      const prefix = parts.slice(0, -2).map(enc).join('/');
      const [owner, name] = parts.slice(-2);
      return {
        request: json(
          `${repo.origin}${prefix ? `/${prefix}` : ''}/api/v1/repos/${enc(owner!)}/${enc(name!)}/statuses/${sha}`,
          { state: GITHUB_STATE[msg.kind], context, description, ...targetUrl },
          { authorization: `token ${token}` },
        ),
      };
    }
    default:
      return { skip: `${cfg.type} sets no commit status` };
  }
}

const enc = encodeURIComponent;
