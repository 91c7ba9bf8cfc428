import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildRequest, signature, SIGNATURE_HEADER, type ProviderConfig } from './payloads.ts';
import type { RecordMessage } from './record.ts';
import { redactSecrets } from './redact.ts';
import { teamsWebhookProblems } from '../../../test/support/teams-card.ts';
import { commitOf, renderTemplate, templateProblem, fieldsOf } from './template.ts';

const SHA = '3f2a'.padEnd(40, '0');
const msg = (over: Partial<RecordMessage> = {}): RecordMessage => ({
  id: `uid-1/main@sha1:${SHA}#2`,
  kind: 'failed',
  namespace: 'team-a',
  name: 'web',
  uid: 'uid-1',
  revision: `main@sha1:${SHA}`,
  reason: 'HealthCheckFailed',
  message: 'Deployment/web not ready',
  cause: 'Pod/web-1: ImagePullBackOff',
  counts: { created: 1, configured: 2, pruned: 3 },
  at: '2026-11-27T10:00:00.000Z',
  ...over,
});
const TOKEN = 'hmac-key-s3cret-value';

function send(cfg: ProviderConfig, m = msg()) {
  const built = buildRequest(cfg, m);
  if (!('request' in built)) throw new Error('skip' in built ? built.skip : 'a lookup');
  return { ...built.request, json: JSON.parse(built.request.body) as Json };
}

/** The fields the tests read across providers' bodies. */
interface Json {
  text: string;
  state: string;
  target_url?: string;
  description: string;
  type: string;
  blocks: { text: { text: string } }[];
  attachments: {
    contentType: string;
    content: {
      type: string;
      actions?: unknown[];
      body?: { text?: string; color?: string; facts?: { title: string }[] }[];
    };
  }[];
  [field: string]: unknown;
}

describe('templates', () => {
  it('place fields and nothing else; an unknown field is refused naming it', () => {
    const f = fieldsOf(msg(), 'https://ui/x', []);
    expect(renderTemplate('{{ .name }}@{{.commit}} {{ .phase }}', f)).toBe(`web@${SHA} failed`);
    expect(templateProblem('{{ .name }} {{ .Secret }}', 'spec.template.text')).toMatch(
      /spec.template.text: "\{\{ \.Secret \}\}" is not a field/,
    );
    expect(templateProblem('{{ printf "%s" .name }}', 'spec.template.text')).toMatch(/is not a field/);
    expect(templateProblem('{{ .name }} {{ .revision }}', 'x')).toBeUndefined();
  });

  it('commit of git revisions only', () => {
    expect(commitOf(`main@sha1:${SHA}`)).toBe(SHA);
    expect(commitOf(SHA)).toBe(SHA);
    expect(commitOf('v1.2.3@sha256:' + 'c'.repeat(64))).toBe('c'.repeat(64));
    expect(commitOf('latest')).toBe('');
  });
});

describe('nothing secret in any message', () => {
  const dirty = msg({
    message:
      'fetch https://deploy:ghp_abcdefghijklmnopqrstuvwxyz0123@git.example.com/a.git failed; ' +
      `Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig; token ${TOKEN}; ` +
      'see https://s3.example/x?X-Amz-Signature=zzz&sig=abc123&token=tok-123456 and glpat-abcdefghijklmnop1234',
    cause: 'posted to https://hooks.slack.com/services/T000/B000/XXXXSECRET',
  });
  const secrets = [
    'ghp_abcdefghijklmnopqrstuvwxyz0123',
    'eyJhbGciOiJIUzI1NiJ9.payload.sig',
    TOKEN,
    'abc123',
    'tok-123456',
    'glpat-abcdefghijklmnop1234',
    'XXXXSECRET',
    'deploy:',
  ];
  const configs: ProviderConfig[] = [
    { type: 'generic', address: 'https://hooks.example/in', token: TOKEN },
    { type: 'slack', address: 'https://hooks.slack.com/services/T1/B1/WEBHOOKSECRET' },
    { type: 'msteams', address: 'https://x.webhook.office.com/webhookb2/TEAMSSECRET' },
    { type: 'github', address: 'https://github.com/org/repo', token: 'ghp_forgetokenforgetoken0000' },
    { type: 'gitlab', address: 'https://gitlab.example/group/repo', token: 'glpat-forgetokenforge00' },
    { type: 'gitea', address: 'https://gitea.example/org/repo', token: 'gitea-token-123456' },
  ];
  for (const cfg of configs) {
    it(`${cfg.type}: no URL credential, token or Secret value in the body`, () => {
      const out = send({ ...cfg, text: '{{ .message }} | {{ .cause }} | {{ .revision }}' }, dirty);
      for (const s of [...secrets, 'WEBHOOKSECRET', 'TEAMSSECRET', cfg.token ?? 'none-none'])
        expect(out.body).not.toContain(s);
      // the address is where it goes, never what it says
      expect(out.body).not.toContain(cfg.address);
    });
  }

  it("the Notifier's own Secret values are masked wherever they occur", () => {
    expect(redactSecrets(`the key is ${TOKEN}!`, [TOKEN])).toBe('the key is ***!');
    expect(redactSecrets('https://user:pw@host/x')).toBe('https://***@host/x');
  });
});

describe('providers', () => {
  it('generic: a CloudEvent in structured mode, signed with HMAC-SHA256 over the exact body', () => {
    const out = send({ type: 'generic', address: 'https://hooks.example/in', token: TOKEN });
    expect(out.headers['content-type']).toBe('application/cloudevents+json; charset=utf-8');
    expect(out.headers[SIGNATURE_HEADER]).toBe(`sha256=${createHmac('sha256', TOKEN).update(out.body).digest('hex')}`);
    expect(out.json).toMatchObject({
      specversion: '1.0',
      id: `uid-1/main@sha1:${SHA}#2`,
      type: 'io.packagesync.deployment.failed',
      source: '/apis/packagesync.io/v1alpha1/namespaces/team-a/packagesyncs/web',
      time: '2026-11-27T10:00:00.000Z',
      datacontenttype: 'application/json',
      data: {
        name: 'web',
        commit: SHA,
        phase: 'failed',
        reason: 'HealthCheckFailed',
        counts: { created: 1, configured: 2, pruned: 3 },
      },
    });
    expect(signature('x', 'k')).toBe(`sha256=${createHmac('sha256', 'k').update('x').digest('hex')}`);
    // unsigned without a token
    expect(send({ type: 'generic', address: 'https://h/' }).headers[SIGNATURE_HEADER]).toBeUndefined();
  });

  it('slack: text and a mrkdwn block, control characters escaped, the link when configured', () => {
    const out = send(
      {
        type: 'slack',
        address: 'https://hooks.slack.com/services/a',
        targetURL: 'https://ui.example/ps/{{ .namespace }}/{{ .name }}',
      },
      msg({ message: '<!channel> & friends' }),
    );
    expect(out.json.text).toContain('team-a/web failed');
    const block = out.json.blocks[0]!.text.text;
    expect(block).toContain('&lt;!channel&gt; &amp; friends');
    expect(block).toContain('<https://ui.example/ps/team-a/web|Open>');
  });

  it('msteams: one Adaptive Card in a message, as Teams webhooks and Workflows accept it (and Flux sends it)', () => {
    const out = send({
      type: 'msteams',
      address: 'https://x.webhook.office.com/a',
      targetURL: 'https://ui/{{ .name }}',
    });
    expect(teamsWebhookProblems(out)).toEqual([]);
    const att = out.json.attachments[0]!;
    expect(out.json.type).toBe('message');
    expect(att.contentType).toBe('application/vnd.microsoft.card.adaptive');
    expect(att.content).toMatchObject({ type: 'AdaptiveCard', version: '1.4', msteams: { width: 'Full' } });
    expect(att.content.actions?.[0]).toEqual({ type: 'Action.OpenUrl', title: 'Open', url: 'https://ui/web' });
    // a failure reads in the attention colour, with the record's fields as facts
    const [title, text, facts] = att.content.body!;
    expect(title).toMatchObject({ type: 'TextBlock', text: `team-a/web failed: main@sha1:${SHA}`, weight: 'Bolder' });
    expect(text).toMatchObject({ type: 'TextBlock', color: 'attention' });
    expect(text!.text).toContain('HealthCheckFailed: Deployment/web not ready');
    expect(facts).toEqual({
      type: 'FactSet',
      facts: [
        { title: 'PackageSync', value: 'team-a/web' },
        { title: 'Revision', value: `main@sha1:${SHA}` },
        { title: 'Phase', value: 'failed' },
        { title: 'Reason', value: 'HealthCheckFailed' },
      ],
    });
    // every kind is a card Teams takes; progress has no reason fact and no colour
    const progress = (kind: RecordMessage['kind']) => {
      const m = msg({ kind });
      delete m.reason;
      return send({ type: 'msteams', address: 'https://x/a' }, m);
    };
    for (const kind of ['started', 'applied', 'healthy', 'superseded', 'resolved'] as const) {
      expect(teamsWebhookProblems(progress(kind))).toEqual([]);
    }
    const started = progress('started').json.attachments[0]!.content.body!;
    expect(started[1]!.color).toBeUndefined();
    expect(started[2]!.facts!.map((f) => f.title)).toEqual(['PackageSync', 'Revision', 'Phase']);
  });

  it('the Teams check refuses what Teams would not post', () => {
    const ok = send({ type: 'msteams', address: 'https://x/a' });
    const broken = JSON.parse(ok.body) as { attachments: { content: Record<string, unknown> }[] };
    broken.attachments[0]!.content.version = '1.6';
    broken.attachments[0]!.content.body = [{ type: 'TextBlock', text: '' }];
    expect(teamsWebhookProblems({ ...ok, body: JSON.stringify(broken) })).toEqual([
      'attachments[0].content.version 1.6 is not 1.0–1.4',
      'attachments[0].content.body[0].text is empty',
    ]);
    expect(teamsWebhookProblems({ ...ok, body: '{"text":"hi"}' })).toEqual(['type is not "message"', 'no attachments']);
  });

  it('a target URL that is not http(s) is left out', () => {
    const out = send({ type: 'msteams', address: 'https://x/a', targetURL: 'javascript:alert({{ .name }})' });
    expect(out.json.attachments[0]!.content.actions).toBeUndefined();
  });

  const forge = {
    address: 'https://forge.example/org/repo.git',
    token: 'tok-forge-123456',
    targetURL: 'https://ui/{{ .name }}',
  };
  it('github: POST /repos/{owner}/{repo}/statuses/{sha} on the API host, Bearer token, state per phase', () => {
    const out = send({ type: 'github', ...forge }, msg({ kind: 'started' }));
    expect(out.url).toBe(`https://forge.example/api/v3/repos/org/repo/statuses/${SHA}`);
    expect(out.headers).toMatchObject({
      authorization: 'Bearer tok-forge-123456',
      accept: 'application/vnd.github+json',
    });
    expect(out.json).toEqual({
      state: 'pending',
      context: 'packagesync/team-a/web',
      description: expect.any(String),
      target_url: 'https://ui/web',
    });
    expect(send({ type: 'github', ...forge, address: 'https://github.com/org/repo' }).url).toBe(
      `https://api.github.com/repos/org/repo/statuses/${SHA}`,
    );
    const states = (['started', 'applied', 'healthy', 'failed', 'superseded', 'resolved'] as const).map(
      (kind) => send({ type: 'github', ...forge }, msg({ kind })).json.state,
    );
    expect(states).toEqual(['pending', 'pending', 'success', 'failure', 'error', 'success']);
    expect(
      send({ type: 'github', ...forge }, msg({ message: 'x'.repeat(500), kind: 'failed' })).json.description.length,
    ).toBeLessThanOrEqual(140);
  });

  it('gitlab: POST /api/v4/projects/{encoded path}/statuses/{sha}, PRIVATE-TOKEN, name = context', () => {
    const out = send(
      { type: 'gitlab', ...forge, address: 'https://gl.example/group/sub/repo' },
      msg({ kind: 'applied' }),
    );
    expect(out.url).toBe(`https://gl.example/api/v4/projects/group%2Fsub%2Frepo/statuses/${SHA}`);
    expect(out.headers['private-token']).toBe('tok-forge-123456');
    expect(out.json).toMatchObject({ state: 'running', name: 'packagesync/team-a/web', target_url: 'https://ui/web' });
    expect(send({ type: 'gitlab', ...forge }, msg({ kind: 'failed' })).json.state).toBe('failed');
    expect(send({ type: 'gitlab', ...forge }, msg({ kind: 'superseded' })).json.state).toBe('canceled');
  });

  it('gitea / Forgejo: POST /api/v1/repos/{owner}/{repo}/statuses/{sha}, token auth, a custom context', () => {
    const out = send({ type: 'gitea', ...forge, context: 'deploy/prod/{{ .name }}' }, msg({ kind: 'healthy' }));
    expect(out.url).toBe(`https://forge.example/api/v1/repos/org/repo/statuses/${SHA}`);
    expect(out.headers.authorization).toBe('token tok-forge-123456');
    expect(out.json).toMatchObject({ state: 'success', context: 'deploy/prod/web' });
    expect(send({ type: 'gitea', ...forge, address: 'https://h.example/git/org/repo' }).url).toBe(
      `https://h.example/git/api/v1/repos/org/repo/statuses/${SHA}`,
    );
  });

  it('a revision that is no git commit (an OCI tag) gets no commit status, and says why', () => {
    const built = buildRequest({ type: 'gitea', ...forge }, msg({ revision: 'latest' }));
    expect(built).toEqual({ skip: 'revision latest names no git commit' });
  });
});
