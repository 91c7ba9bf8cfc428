import { describe, expect, it } from 'vitest';
import { Reason } from '../../api/reasons.ts';
import { gitFailure, scrubGitOutput } from './errors.ts';

const ctx = {
  action: 'fetching',
  url: 'https://git.example.com/r.git',
  secrets: ['hunter2-pw', 'tok_abc123'],
  timedOut: false,
  timeoutMs: 60_000,
};

describe('gitFailure', () => {
  it.each([
    ["fatal: Authentication failed for 'https://git.example.com/r.git/'", Reason.AuthenticationFailed],
    [
      "fatal: could not read Username for 'https://git.example.com': terminal prompts disabled",
      Reason.AuthenticationFailed,
    ],
    ['fatal: unable to access: The requested URL returned error: 403', Reason.AuthenticationFailed],
    [
      'git@host: Permission denied (publickey).\nfatal: Could not read from remote repository.',
      Reason.AuthenticationFailed,
    ],
    ['Host key verification failed.\nfatal: Could not read from remote repository.', Reason.AuthenticationFailed],
    ['Load key "/tmp/x/identity": invalid format', Reason.InvalidAuthSecret],
    ['fatal: remote error: upload-pack: not our ref ' + 'a'.repeat(40), Reason.RefNotFound],
    ["fatal: couldn't find remote ref refs/heads/nope", Reason.RefNotFound],
    ["fatal: repository 'https://x/r.git/' not found", Reason.FetchFailed],
    ['fatal: unable to access: Could not resolve host: nowhere', Reason.FetchFailed],
  ])('%s → %s', (stderr, reason) => {
    expect(gitFailure(new Error(stderr), ctx).reason).toBe(reason);
  });

  it('a redirect (never followed with credentials) → FetchFailed saying so', () => {
    const f = gitFailure(
      new Error("fatal: unable to access 'https://git.example.com/r.git/': The requested URL returned error: 301"),
      ctx,
    );
    expect(f.reason).toBe(Reason.FetchFailed);
    expect(f.message).toContain('redirect');
    expect(f.message).toContain("the repository's final URL");
  });

  it('a deadline is SourceTimeout', () => {
    expect(gitFailure(new Error('killed'), { ...ctx, timedOut: true }).reason).toBe(Reason.SourceTimeout);
  });

  it('never carries a secret, in clear, URL-encoded or base64', () => {
    const b64 = Buffer.from('hunter2-pw').toString('base64');
    const stderr = [
      'fatal: something odd hunter2-pw happened',
      'error: https://alice:hunter2-pw@git.example.com/r.git rejected',
      `debug: Authorization: Basic ${b64}`,
      `trace: token=${encodeURIComponent('tok_abc123')} and ${b64}`,
    ].join('\n');
    const message = gitFailure(new Error(stderr), ctx).message;
    for (const form of ['hunter2-pw', 'tok_abc123', b64, 'alice:']) expect(message).not.toContain(form);
  });
});

describe('scrubGitOutput', () => {
  it('drops lines with userinfo URLs and auth headers, keeps the rest short', () => {
    const out = scrubGitOutput('fatal: x https://u:p@h/r\nAuthorization: Bearer zzz\nremote: plain problem\n', []);
    expect(out).toBe('plain problem');
    expect(scrubGitOutput('x'.repeat(1000), []).length).toBeLessThanOrEqual(301);
  });
});
