/**
 * Forge Notifiers (github, gitlab, gitea) against a loopback forge that checks each request against the forge's
 * documented API (paths, headers, JSON fields, states): commit statuses (docs/adr/0040) and comments on the pull
 * request whose head is the revision (docs/adr/0043).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LatestPlans } from './latest-plans.ts';
import { PLANS_IN_OUTBOX_MAX } from '../../core/notify/plan-actions.ts';
import type { NotifierState } from '../../core/notify/outbox.ts';
import {
  startNotifyReceiver,
  type NotifyReceiver,
  type ReceivedRequest,
} from '../../../test/support/notify-receiver.ts';
import {
  current,
  failedStatus,
  healthy,
  progressing,
  ps,
  SHA1,
  SHA2,
  start,
  stopAll,
  until,
} from '../../../test/support/notifier-runtime.ts';

let receiver: NotifyReceiver;
afterEach(stopAll);

/**
 * A forge that checks each request against its documented API (paths, headers, JSON fields, states) and answers
 * 201 only to a conforming one, 422 otherwise, as the forges do.
 */
const FORGES = {
  gitea: {
    path: new RegExp(`^/api/v1/repos/org/repo/statuses/[0-9a-f]{40}$`),
    auth: (h: ReceivedRequest['headers']) => h.authorization === 'token forge-token-123456',
    states: ['pending', 'success', 'error', 'failure', 'warning'],
    fields: ['state', 'context', 'description', 'target_url'],
  },
  github: {
    path: new RegExp(`^/api/v3/repos/org/repo/statuses/[0-9a-f]{40}$`),
    auth: (h: ReceivedRequest['headers']) =>
      h.authorization === 'Bearer forge-token-123456' &&
      h.accept === 'application/vnd.github+json' &&
      !!h['user-agent'],
    states: ['error', 'failure', 'pending', 'success'],
    fields: ['state', 'context', 'description', 'target_url'],
  },
  gitlab: {
    path: new RegExp(`^/api/v4/projects/org%2Frepo/statuses/[0-9a-f]{40}$`),
    auth: (h: ReceivedRequest['headers']) => h['private-token'] === 'forge-token-123456',
    states: ['pending', 'running', 'success', 'failed', 'canceled'],
    fields: ['state', 'name', 'description', 'target_url'],
  },
} as const;

describe('commit status Notifiers against each forge’s documented API', () => {
  for (const [type, api] of Object.entries(FORGES)) {
    it(`${type}: pending then success on the revision's commit, every request conforming`, async () => {
      receiver = current.receiver = await startNotifyReceiver();
      const problems: string[] = [];
      receiver.answer = (r) => {
        const why = [
          r.method !== 'POST' && 'method',
          !api.path.test(r.path) && `path ${r.path}`,
          !api.auth(r.headers) && 'auth headers',
          !String(r.headers['content-type']).startsWith('application/json') && 'content-type',
          !(api.states as readonly string[]).includes(r.json.state) && `state ${r.json.state}`,
          Object.keys(r.json).some((k) => !(api.fields as readonly string[]).includes(k)) &&
            `fields ${Object.keys(r.json)}`,
        ].filter(Boolean);
        problems.push(...(why as string[]));
        return { status: why.length ? 422 : 201 };
      };
      const { runtime, results } = start(
        {
          type: type as 'gitea',
          address: `${receiver.url}/org/repo.git`,
          secretRef: { name: 's' },
          targetURL: 'https://ui.example/{{ .namespace }}/{{ .name }}',
        },
        { secret: { token: 'forge-token-123456', 'ca.crt': receiver.ca } },
      );
      runtime.packageSync(ps('web', progressing(SHA1)));
      runtime.packageSync(ps('web', healthy(SHA1)));
      await until('two statuses', () => results.filter((r) => r === 'delivered').length === 2);
      expect(problems).toEqual([]);
      expect(receiver.requests.map((r) => r.path.endsWith(SHA1))).toEqual([true, true]);
      expect(receiver.requests.map((r) => r.json.state)).toEqual(['pending', 'success']);
      expect(receiver.requests[1]!.json.target_url).toBe('https://ui.example/team-a/web');
    });
  }
});

const TOKEN = 'forge-token-123456';
/**
 * Each forge's pull-request lookup and comment, as its API documents them: the lookup's path and the answer's shape
 * (GitHub and GitLab a list, Gitea one pull request or 404), the comment's path and its only field, `body`.
 */
const PR_APIS = {
  github: {
    lookup: new RegExp(`^/api/v3/repos/org/repo/commits/([0-9a-f]{40})/pulls$`),
    comment: /^\/api\/v3\/repos\/org\/repo\/issues\/7\/comments$/,
    auth: FORGES.github.auth,
    // a closed pull request that once had this head, and the open one whose head it is
    answer: (sha: string) => [
      { number: 3, state: 'closed', head: { sha } },
      { number: 7, state: 'open', head: { sha } },
    ],
  },
  gitlab: {
    lookup: new RegExp(`^/api/v4/projects/org%2Frepo/repository/commits/([0-9a-f]{40})/merge_requests$`),
    comment: /^\/api\/v4\/projects\/org%2Frepo\/merge_requests\/7\/notes$/,
    auth: FORGES.gitlab.auth,
    answer: (sha: string) => [
      { iid: 3, state: 'merged', sha },
      { iid: 7, state: 'opened', sha },
    ],
  },
  gitea: {
    lookup: new RegExp(`^/api/v1/repos/org/repo/commits/([0-9a-f]{40})/pull$`),
    comment: /^\/api\/v1\/repos\/org\/repo\/issues\/7\/comments$/,
    auth: FORGES.gitea.auth,
    answer: (sha: string) => ({ number: 7, state: 'open', head: { sha } }),
  },
} as const;

describe('pull request comments against each forge’s documented API', () => {
  for (const [type, api] of Object.entries(PR_APIS)) {
    it(`${type}: the open pull request whose head is the revision gets one comment when it is healthy, one when it fails`, async () => {
      receiver = current.receiver = await startNotifyReceiver();
      const problems: string[] = [];
      receiver.answer = (r) => {
        if (!api.auth(r.headers)) problems.push(`auth headers of ${r.method} ${r.path}`);
        const sha = api.lookup.exec(r.path)?.[1];
        if (r.method === 'GET' && sha) {
          // SHA2 is the head of no pull request: GitHub and GitLab answer an empty list, Gitea 404
          if (sha === SHA2) return type === 'gitea' ? { status: 404 } : { status: 200, body: '[]' };
          return {
            status: 200,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(api.answer(sha)),
          };
        }
        if (r.method === 'POST' && api.comment.test(r.path)) {
          const fine = Object.keys(r.json).join() === 'body' && typeof r.json.body === 'string';
          if (!fine) problems.push(`comment fields ${Object.keys(r.json)}`);
          return { status: fine ? 201 : 422 };
        }
        if (r.method === 'POST' && /statuses/.test(r.path)) return { status: 201 };
        problems.push(`unexpected ${r.method} ${r.path}`);
        return { status: 404 };
      };
      // what SHA1's apply did: 33 ConfigMaps created (more than a comment lists), a Secret configured whose
      // change message quotes a value, 2 unchanged
      const plans = new LatestPlans();
      const cm = (i: number) => ({ group: '', kind: 'ConfigMap', namespace: 'team-a', name: `cm-${i}` });
      plans.record({ namespace: 'team-a', name: 'web', uid: 'uid-web' }, `main@sha1:${SHA1}`, [
        { ref: { ...cm(0), kind: 'Secret', name: 'db' }, action: 'configured', message: `password ${TOKEN}` },
        ...Array.from({ length: 33 }, (_, i) => ({ ref: cm(i + 1), action: 'created' as const })),
        { ref: cm(90), action: 'unchanged' },
        { ref: cm(91), action: 'unchanged' },
      ]);
      const { runtime, results } = start(
        {
          type: type as 'gitea',
          address: `${receiver.url}/org/repo.git`,
          secretRef: { name: 's' },
          pullRequestComments: true,
          targetURL: 'https://ui.example/{{ .namespace }}/{{ .name }}',
        },
        { secret: { token: TOKEN, 'ca.crt': receiver.ca }, plans },
      );
      runtime.packageSync(ps('web', progressing(SHA1)));
      runtime.packageSync(ps('web', healthy(SHA1)));
      runtime.packageSync(ps('web', progressing(SHA2)));
      runtime.packageSync(
        ps('web', {
          ...failedStatus(SHA2),
          conditions: [
            {
              type: 'Ready',
              status: 'False',
              reason: 'HealthCheckFailed',
              message: `token ${TOKEN} leaked?`,
              lastTransitionTime: '2026-11-27T10:00:00Z',
            },
          ],
        }),
      );
      // SHA1: pending, success, comment; SHA2: pending, failure, and no comment (no pull request has it)
      await until('every message settled', () => results.length === 6);
      expect(problems).toEqual([]);
      const comments = receiver.requests.filter((r) => r.method === 'POST' && api.comment.test(r.path));
      expect(comments).toHaveLength(1);
      const body = String(comments[0]!.json.body);
      expect(body).toContain('### PackageSync `team-a/web`: ✅ healthy');
      expect(body).toContain(`Revision \`main@sha1:${SHA1}\``);
      expect(body).toContain('[Open in PackageSync](https://ui.example/team-a/web)');
      // the apply's objects, in apply order, cut at 30 with a count; refs and actions only
      expect(body).toContain('<details><summary>34 objects changed</summary>');
      expect(body).toContain('| ~ | configured | `Secret/team-a/db` |');
      expect(body).toContain('| + | created | `ConfigMap/team-a/cm-29` |');
      expect(body).not.toContain('cm-30`');
      expect(body).toContain('…and 4 more not listed (34 changed in all).');
      expect(body).toContain('2 unchanged, not listed.');
      expect(results.filter((r) => r === 'skipped')).toHaveLength(1);
      // nothing secret on the wire but the token in its header
      for (const r of receiver.requests) expect(r.body).not.toContain(TOKEN);
    });
  }

  it(`at most ${PLANS_IN_OUTBOX_MAX} comments in an outbox carry their object list; the next say why they have none`, async () => {
    const plans = new LatestPlans();
    const names = Array.from({ length: PLANS_IN_OUTBOX_MAX + 1 }, (_, i) => `u${i}`);
    for (const name of names)
      plans.record({ namespace: 'team-a', name, uid: `uid-${name}` }, `main@sha1:${SHA1}`, [
        { ref: { group: '', kind: 'ConfigMap', namespace: 'team-a', name }, action: 'created' },
      ]);
    // suspended: nothing is sent, every message stays in the outbox
    const { runtime, store } = start(
      {
        type: 'gitea',
        address: 'https://forge.example/org/repo',
        secretRef: { name: 's' },
        pullRequestComments: true,
        suspend: true,
      },
      { secret: { token: TOKEN }, plans },
    );
    for (const name of names) {
      runtime.packageSync(ps(name, progressing(SHA1)));
      runtime.packageSync(ps(name, healthy(SHA1)));
    }
    const outbox = await until('every comment queued', () => {
      const o = store.text ? (JSON.parse(store.text) as NotifierState).outbox : [];
      return o.filter((e) => e.msg.channel === 'pull-request').length === names.length && o;
    });
    const comments = outbox.filter((e) => e.msg.channel === 'pull-request').map((e) => e.msg);
    expect(comments.filter((m) => m.plan)).toHaveLength(PLANS_IN_OUTBOX_MAX);
    expect(comments.at(-1)!.plan).toBeUndefined();
    expect(comments.at(-1)!.planMissing).toBe(
      `${PLANS_IN_OUTBOX_MAX} comments wait in this Notifier's outbox with theirs`,
    );
  });

  it('a forge that fails the lookup is retried like any delivery; the comment is posted once it answers', async () => {
    receiver = current.receiver = await startNotifyReceiver();
    let lookups = 0;
    receiver.answer = (r) => {
      if (r.method === 'GET') {
        lookups++;
        if (lookups === 1) return { status: 503 };
        return { status: 200, body: JSON.stringify(PR_APIS.gitea.answer(SHA1)) };
      }
      return { status: 201 };
    };
    const { runtime, results } = start(
      {
        type: 'gitea',
        address: `${receiver.url}/org/repo`,
        secretRef: { name: 's' },
        pullRequestComments: true,
        events: ['healthy'],
      },
      { secret: { token: TOKEN, 'ca.crt': receiver.ca } },
    );
    runtime.packageSync(ps('web', progressing(SHA1)));
    runtime.packageSync(ps('web', healthy(SHA1)));
    await until('status and comment delivered', () => results.filter((r) => r === 'delivered').length === 2, 20_000);
    expect(results).toEqual(['delivered', 'retried', 'delivered']);
    expect(receiver.requests.map((r) => `${r.method} ${r.path.replace(/[0-9a-f]{40}/, 'SHA')}`)).toEqual([
      'POST /api/v1/repos/org/repo/statuses/SHA',
      'GET /api/v1/repos/org/repo/commits/SHA/pull',
      'GET /api/v1/repos/org/repo/commits/SHA/pull',
      'POST /api/v1/repos/org/repo/issues/7/comments',
    ]);
  });
});
