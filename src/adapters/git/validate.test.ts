import { describe, expect, it } from 'vitest';
import { Reason } from '../../api/reasons.ts';
import { redactURL, validatePackagePath, validateRef, validateSourceURL } from './validate.ts';
import type { RefSpec } from './validate.ts';

describe('validateSourceURL', () => {
  it.each([
    ['https://github.com/org/repo.git', 'https', 'github.com'],
    ['https://git.example.com:8443/platform/packages', 'https', 'git.example.com'],
    ['ssh://git@github.com/org/repo.git', 'ssh', 'github.com'],
    ['ssh://git@127.0.0.1:2222/srv/repos/web.git', 'ssh', '127.0.0.1'],
    ['ssh://git@[::1]:22/repo.git', 'ssh', '[::1]'],
    ['git@github.com:org/repo.git', 'ssh', 'github.com'],
    ['deploy@10.0.0.5:/srv/git/repo.git', 'ssh', '10.0.0.5'],
    ['https://xn--exmple-cua.com/org/repo.git', 'https', 'xn--exmple-cua.com'],
    ['https://git.example.com/My%20Project/_git/repo', 'https', 'git.example.com'],
    ['https://git.example.com/org/r%C3%A9po.git', 'https', 'git.example.com'],
  ])('accepts %s', (url, transport, host) => {
    expect(validateSourceURL(url)).toEqual({ ok: true, value: { url, transport, host } });
  });

  it('accepts http only when allowed', () => {
    expect(validateSourceURL('http://git.local/repo.git').ok).toBe(false);
    expect(validateSourceURL('http://git.local/repo.git', { allowInsecureHttp: true }).ok).toBe(true);
  });

  it.each([
    ['', 'empty'],
    ['file:///etc/passwd', 'file scheme'],
    ['FILE:///srv/repo.git', 'file scheme, upper case'],
    ['/srv/git/repo.git', 'absolute local path'],
    ['./repo', 'relative local path'],
    ['../../repo.git', 'relative local path up'],
    ['~/repo.git', 'home path'],
    ['repo.git', 'bare name'],
    ['ext::sh -c touch% /tmp/pwned', 'ext transport'],
    ['ext::ssh -o ProxyCommand=x', 'ext transport without spaces after'],
    ['fd::17', 'fd transport'],
    ['foo::https://example.com/x', 'arbitrary remote helper'],
    ['git::https://example.com/x', 'helper named like a scheme'],
    ['-uploadpack=touch /tmp/x', 'leading dash'],
    ['--upload-pack=evil', 'leading double dash'],
    ['ssh://-oProxyCommand=touch%20pwned/x', 'ssh host that is an option'],
    ['ssh://-oProxyCommand=x@host/x', 'ssh user that is an option'],
    ['-oProxyCommand=x@host:repo', 'scp user that is an option'],
    ['git@-oProxyCommand=x:repo', 'scp host that is an option'],
    ['git@host:-repo', 'scp path that is an option'],
    ['git@[-oProxyCommand=x]:repo', 'bracketed scp host that is an option'],
    ['ssh://[-oProxyCommand=x]/repo', 'bracketed ssh host that is an option'],
    ['https://example.com/repo.git\n--upload-pack=x', 'newline'],
    ['https://example.com/re po.git', 'space'],
    ['https://example.com/repo.git\t', 'tab'],
    ['https://example.com/\u0000repo', 'NUL'],
    ['https://example.com/\u202erepo', 'bidi override'],
    ['https://example.com/repo%0a.git', 'encoded newline'],
    ['https://example.com/repo%0D.git', 'encoded carriage return, upper case'],
    ['https://example.com/repo%00.git', 'encoded NUL'],
    ['https://example.com/repo%7f.git', 'encoded DEL'],
    ['https://example.com/repo%C2%85.git', 'encoded C1 control (NEL)'],
    ['https://example.com/%E2%80%AErepo.git', 'encoded bidi override'],
    ['https://example.com/repo%E2%80%8B.git', 'encoded zero-width space'],
    ['https://example.com/repo%E2%80%A8.git', 'encoded line separator'],
    ['https://example.com/repo%zz.git', 'malformed percent-encoding'],
    ['https://example.com/repo%E2%80.git', 'truncated UTF-8 percent-encoding'],
    ['https://example.com/re\u00a0po.git', 'no-break space'],
    ['https://example.com/repo.git\u200b', 'zero-width space'],
    ['https://ｅｘａｍｐｌｅ.com/repo.git', 'fullwidth host (normalised by URL, not by git)'],
    ['https://exämple.com/repo.git', 'IDN host not in punycode'],
    ['git@exämple.com:repo.git', 'IDN scp host'],
    ['https://example.com/a"]\n[core]', 'config-breaking quote'],
    ['https://example.com/a"b.git', 'raw double quote'],
    ['https://example.com/a\\b.git', 'backslash'],
    ['https://example.com/`id`.git', 'backtick'],
    ['git@host:a|b', 'pipe'],
    ['https://user:hunter2@example.com/repo.git', 'password in URL'],
    ['https://ghp_0123456789abcdef@github.com/org/repo.git', 'token as the user name'],
    ['https://deploy@git.example.com/org/repo.git', 'user name in an https URL'],
    ['http://@git.example.com/org/repo.git', 'empty userinfo'],
    ['https://user:@example.com/repo.git', 'empty password in URL'],
    ['ssh://git:hunter2@example.com/repo.git', 'password in ssh URL'],
    ['https://user%3Ahunter2@example.com/repo.git', 'password behind an encoded colon'],
    ['https://user%3ahunter2@example.com/repo.git', 'password behind an encoded colon, lower case'],
    ['HTTPS://user:hunter2@example.com/repo.git', 'password, upper-case scheme'],
    ['file:/etc/passwd', 'file scheme without slashes'],
    ['file://localhost/srv/repo.git', 'file scheme with host'],
    ['git://example.com/repo.git', 'git protocol'],
    ['ftp://example.com/repo.git', 'ftp'],
    ['https://example.com', 'no path'],
    ['https://example.com/repo.git#frag', 'fragment'],
    ['https:///repo.git', 'no host'],
    ['github.com:org/repo.git', 'host:path without user'],
    ['C:repo', 'drive-like'],
    ['https://ex' + 'a'.repeat(2100) + '.com/r', 'too long'],
  ])('rejects %j (%s)', (url) => {
    const r = validateSourceURL(url, { allowInsecureHttp: true });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.failure.reason).toBe(Reason.InvalidURL);
      expect(r.failure.terminal).toBe(true);
    }
  });

  it('never echoes a password in its message', () => {
    for (const url of [
      'https://u:hunter2@example.com/r.git',
      'ssh://u:hunter2@example.com/r.git',
      'http://u:hunter2@x/r',
      'https://u%3Ahunter2@example.com/r.git',
    ]) {
      const r = validateSourceURL(url);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.failure.message).not.toContain('hunter2');
    }
  });

  it('redactURL hides userinfo', () => {
    expect(redactURL('https://u:hunter2@example.com/r.git')).toBe('https://***@example.com/r.git');
    expect(redactURL('https://example.com/r.git')).toBe('https://example.com/r.git');
  });
});

describe('validateRef', () => {
  it.each<[RefSpec | undefined, unknown]>([
    [undefined, undefined],
    [{}, undefined],
    [{ branch: 'main' }, { branch: 'main' }],
    [{ branch: 'feature/x-1' }, { branch: 'feature/x-1' }],
    [{ branch: 'release/v1.2' }, { branch: 'release/v1.2' }],
    [{ tag: 'v1.2.0' }, { tag: 'v1.2.0' }],
    [{ tag: 'deploy@prod' }, { tag: 'deploy@prod' }],
    [{ semver: '^1.2.0' }, { semver: '^1.2.0' }],
    [{ semver: '>=1.0.0 <2.0.0' }, { semver: '>=1.0.0 <2.0.0' }],
    [{ commit: 'A'.repeat(40) }, { commit: 'a'.repeat(40) }],
    [{ commit: 'b'.repeat(64) }, { commit: 'b'.repeat(64) }],
    [{ branch: 'main', tag: undefined }, { branch: 'main' }],
  ])('accepts %j', (ref, expected) => {
    expect(validateRef(ref)).toEqual({ ok: true, value: expected });
  });

  it.each<[RefSpec]>([
    [{ branch: '' }],
    [{ branch: '-b' }],
    [{ branch: '--upload-pack=evil' }],
    [{ branch: 'a..b' }],
    [{ branch: 'a@{1}' }],
    [{ branch: '@' }],
    [{ branch: 'HEAD' }],
    [{ branch: 'a b' }],
    [{ branch: 'a\nb' }],
    [{ branch: 'a\u0000' }],
    [{ branch: 'a\u007f' }],
    [{ branch: 'a~1' }],
    [{ branch: 'a^' }],
    [{ branch: 'a:b' }],
    [{ branch: 'a?' }],
    [{ branch: 'a*' }],
    [{ branch: 'a[b' }],
    [{ branch: 'a\\b' }],
    [{ branch: '/main' }],
    [{ branch: 'main/' }],
    [{ branch: 'a//b' }],
    [{ branch: 'main.' }],
    [{ branch: 'main.lock' }],
    [{ branch: 'x.lock/y' }],
    [{ branch: '.hidden' }],
    [{ branch: 'a/.b' }],
    [{ branch: 'x'.repeat(256) }],
    [{ tag: 'v1..2' }],
    [{ tag: '-v1' }],
    [{ semver: 'latest' }],
    [{ semver: '' }],
    [{ semver: '^1.0.0\n' }],
    [{ commit: 'abc123' }],
    [{ commit: 'g'.repeat(40) }],
    [{ commit: 'a'.repeat(41) }],
    [{ commit: 'a'.repeat(39) }],
    [{ commit: 'a'.repeat(63) }],
    [{ commit: 'a'.repeat(65) }],
    [{ commit: `${'a'.repeat(40)}\n` }],
    [{ commit: `-${'a'.repeat(39)}` }],
    [{ branch: 'refs/heads/x/' }],
    [{ branch: 'a.lock' }],
    [{ branch: '@{' }],
    [{ branch: '-x' }],
    [{ branch: 'a\u200b' }],
    [{ tag: 'v1.lock' }],
    [{ tag: 'a\\b' }],
    [{ commit: '-'.repeat(40) }],
    [{ branch: 'main', tag: 'v1' }],
    [{ commit: 'a'.repeat(40), semver: '*' }],
  ])('rejects %j', (ref) => {
    const r = validateRef(ref);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.failure.reason).toBe(Reason.InvalidRef);
  });

  it('rejects unknown ref kinds', () => {
    const r = validateRef({ revision: 'x' } as unknown as RefSpec);
    expect(r.ok).toBe(false);
  });
});

describe('validatePackagePath', () => {
  it.each([
    [undefined, '.'],
    ['', '.'],
    ['.', '.'],
    ['./', '.'],
    ['apps/web', 'apps/web'],
    ['./apps/web/', 'apps/web'],
    ['apps//web/./base', 'apps/web/base'],
    ['apps/.github-like', 'apps/.github-like'],
    ['a..b/c', 'a..b/c'],
  ])('normalises %j to %j', (path, expected) => {
    expect(validatePackagePath(path)).toEqual({ ok: true, value: expected });
  });

  it.each([
    '..',
    '../x',
    'apps/../../etc',
    'apps/..',
    '/etc',
    '/',
    '.git',
    '.git/hooks',
    'apps/.git/config',
    '.GIT',
    '.git/',
    './.git',
    'sub/.git',
    'sub/.git/',
    'a/../..',
    'a/./../b',
    'a\\..\\b',
    'a\nb',
    'a\u0000b',
  ])('rejects %j', (path) => {
    const r = validatePackagePath(path);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.failure.reason).toBe(Reason.InvalidPath);
  });
});
