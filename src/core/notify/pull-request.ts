/**
 * A comment on the pull request whose head is the revision's commit (docs/adr/0043), per forge's documented API:
 * - GitHub: GET /repos/{owner}/{repo}/commits/{sha}/pulls (the pull requests a commit belongs to), then
 *   POST /repos/{owner}/{repo}/issues/{number}/comments `{body}` (a pull request is an issue for comments).
 * - GitLab: GET /api/v4/projects/{id}/repository/commits/{sha}/merge_requests, then
 *   POST /api/v4/projects/{id}/merge_requests/{iid}/notes `{body}`.
 * - Gitea and Forgejo: GET /api/v1/repos/{owner}/{repo}/commits/{sha}/pull (404: none), then
 *   POST /api/v1/repos/{owner}/{repo}/issues/{index}/comments `{body}`.
 * Only an open pull request whose head is exactly this commit is commented on: a commit that was the head once and
 * has moved on, or a merged one, is not the change the reviewers look at now.
 */
import type { RecordMessage } from './record.ts';
import { planActionsMarkdown, type PlanActions } from './plan-actions.ts';
import { repositoryOf } from './commit-status.ts';
import { json, type Built, type OutboundRequest, type ProviderConfig } from './request.ts';
import type { TemplateFields } from './template.ts';

type Kind = RecordMessage['kind'];
/** A comment says how a revision ended; its progress is the commit status's job. */
export const COMMENT_KINDS: ReadonlySet<Kind> = new Set<Kind>(['healthy', 'failed', 'resolved']);

/**
 * The comment messages a record's messages add when the Notifier comments: same record, its own id, and what the
 * apply did (`planOf`: the list, or why there is none).
 */
export function withPullRequestComments(
  msgs: readonly RecordMessage[],
  planOf: (m: RecordMessage) => { plan: PlanActions } | { missing: string } = () => ({ missing: 'not recorded' }),
): RecordMessage[] {
  return msgs.flatMap((m) => {
    if (!COMMENT_KINDS.has(m.kind)) return [m];
    const p = planOf(m);
    const comment: RecordMessage = {
      ...m,
      id: `${m.id}/comment`,
      channel: 'pull-request',
      ...('plan' in p ? { plan: p.plan } : { planMissing: p.missing }),
    };
    return [m, comment];
  });
}

const HEADING: Record<Kind, string> = {
  started: '🚀 deploying',
  applied: '⏳ applied, waiting for health',
  healthy: '✅ healthy',
  failed: '❌ failed',
  superseded: '⏭️ superseded',
  resolved: '✅ healthy again',
};

/** Markdown cells and inline code: a pipe ends a cell, a backtick ends code, a newline ends both. */
const inline = (s: string) => s.replace(/[|`]/g, (c) => `\\${c}`).replace(/\s*\n\s*/g, ' ');

/**
 * The comment: the `plan` markdown's layout (heading, revision, a table of counts) for what the reconcile did. The
 * hidden first line names the message, so a person (or a later cleanup) can tell which record wrote it.
 */
export function commentMarkdown(msg: RecordMessage, f: TemplateFields): string {
  const lines = [
    `<!-- packagesync:${msg.id} -->`,
    `### PackageSync \`${inline(f.namespace)}/${inline(f.name)}\`: ${HEADING[msg.kind]}`,
    '',
    `Revision \`${inline(f.revision)}\``,
    '',
    '| created | configured | pruned |',
    '|---:|---:|---:|',
    `| ${f.created} | ${f.configured} | ${f.pruned} |`,
    '',
  ];
  if (msg.kind === 'failed') {
    lines.push(`> **${inline(f.reason)}**: ${inline(f.message)}`, '');
    if (f.cause) lines.push(`> Why: ${inline(f.cause)}`, '');
  }
  lines.push(...planActionsMarkdown(msg.plan, msg.planMissing));
  if (f.url) lines.push(`[Open in PackageSync](${f.url})`, '');
  return lines.join('\n');
}

interface GithubPull {
  number: number;
  state: string;
  head: { sha: string };
}
interface GitlabMergeRequest {
  iid: number;
  state: string;
  sha: string;
}

/** The lookup of the pull request, then the comment on it; a skip when the forge or the revision allows none. */
export function pullRequestCommentRequest(cfg: ProviderConfig, msg: RecordMessage, f: TemplateFields): Built {
  if (!f.commit) return { skip: `revision ${f.revision || '(none)'} names no git commit` };
  const repo = repositoryOf(cfg.address);
  if (!repo) return { skip: 'spec.address is not a repository URL such as https://host/owner/repo' };
  const body = { body: commentMarkdown(msg, f) };
  const token = cfg.token ?? '';
  const sha = f.commit;
  const parts = repo.path.split('/');
  const [owner, name] = parts.slice(-2).map(enc);
  const none: Built = { skip: `no open pull request has ${sha.slice(0, 12)} as its head` };
  switch (cfg.type) {
    case 'github': {
      const host = new URL(repo.origin).hostname;
      const api = host === 'github.com' ? 'https://api.github.com' : `${repo.origin}/api/v3`;
      const headers = {
        authorization: `Bearer ${token}`,
        accept: 'application/vnd.github+json',
        'x-github-api-version': '2022-11-28',
        'user-agent': 'packagesync',
      };
      return {
        lookup: get(`${api}/repos/${owner}/${name}/commits/${sha}/pulls`, headers),
        then: (answer) => {
          const pr = asArray<GithubPull>(answer).find(
            (p) => p.state === 'open' && p.head?.sha === sha && isIndex(p.number),
          );
          if (!pr) return none;
          return { request: json(`${api}/repos/${owner}/${name}/issues/${pr.number}/comments`, body, headers) };
        },
      };
    }
    case 'gitlab': {
      const project = `${repo.origin}/api/v4/projects/${encodeURIComponent(repo.path)}`;
      const headers = { 'private-token': token };
      return {
        lookup: get(`${project}/repository/commits/${sha}/merge_requests`, headers),
        then: (answer) => {
          const mr = asArray<GitlabMergeRequest>(answer).find(
            (m) => m.state === 'opened' && m.sha === sha && isIndex(m.iid),
          );
          if (!mr) return none;
          return { request: json(`${project}/merge_requests/${mr.iid}/notes`, body, headers) };
        },
      };
    }
    case 'gitea': {
      const prefix = parts.slice(0, -2).map(enc).join('/');
      const api = `${repo.origin}${prefix ? `/${prefix}` : ''}/api/v1/repos/${owner}/${name}`;
      const headers = { authorization: `token ${token}` };
      return {
        lookup: get(`${api}/commits/${sha}/pull`, headers),
        then: (answer) => {
          const pr = answer as GithubPull | undefined;
          if (!pr || pr.state !== 'open' || pr.head?.sha !== sha || !isIndex(pr.number)) return none;
          return { request: json(`${api}/issues/${pr.number}/comments`, body, headers) };
        },
      };
    }
    default:
      return { skip: `${cfg.type} has no pull requests` };
  }
}

const enc = encodeURIComponent;
const get = (url: string, headers: Record<string, string>): OutboundRequest => ({
  method: 'GET',
  url,
  headers,
  body: '',
});
/** The forge's answer lands in a URL path: only a positive integer does. */
const isIndex = (n: unknown) => Number.isSafeInteger(n) && (n as number) > 0;
const asArray = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
