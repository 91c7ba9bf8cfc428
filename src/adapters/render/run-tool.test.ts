import { describe, expect, it } from 'vitest';
import { MAX_STDERR_CHARS, sanitizeStderr } from './run-tool.ts';
import { looksRemote, urlShaped } from './kustomize-check.ts';

describe('sanitizeStderr', () => {
  const hide = [
    { path: '/tmp/packagesync-kustomize-x/repo/apps/web', as: 'apps/web' },
    { path: '/tmp/packagesync-kustomize-x/repo', as: '' },
  ];

  it.each([
    [
      "Error: accumulating resources from '/tmp/packagesync-kustomize-x/repo/base': missing",
      "Error: accumulating resources from 'base': missing",
    ],
    [
      'evalsymlink failure on /tmp/packagesync-kustomize-x/repo/apps/web/x.yaml',
      'evalsymlink failure on apps/web/x.yaml',
    ],
    ['open /etc/passwd: permission denied', 'open …/passwd: permission denied'],
    ['line one\n\n  line two  \n', 'line one; line two'],
    ['\u001b[31mred\u001b[0m and a bell\u0007', 'red and a bell'],
  ])('%j → %j', (input, expected) => expect(sanitizeStderr(input, hide)).toBe(expected));

  it("keeps helm's real cause when INFO lines would fill the excerpt (issue 34)", () => {
    const info = Array.from({ length: 40 }, (_, i) => `time=2026-11-27 level=INFO msg="loading chart" n=${i}`);
    const s = sanitizeStderr([...info, 'Error: execution error at (web/templates/x.yaml:3:4): boom'].join('\n'), []);
    expect(s).toBe('Error: execution error at (web/templates/x.yaml:3:4): boom');
  });

  it('puts Error: lines first and drops a goroutine dump', () => {
    const s = sanitizeStderr('warning: a\npanic: oops\n\ngoroutine 1 [running]:\nmain.main()\n\t/x.go:3', []);
    expect(s).toBe('panic: oops; warning: a');
  });

  it('bounds the length', () => {
    const s = sanitizeStderr('x'.repeat(10_000), []);
    expect(s.length).toBe(MAX_STDERR_CHARS + 1);
    expect(s.endsWith('…')).toBe(true);
  });
});

describe('looksRemote', () => {
  it.each([
    ['https://github.com/org/repo//path?ref=v1', true],
    ['git@github.com:org/repo.git', true],
    ['github.com/org/repo/path?ref=main', true],
    ['gitlab.example.com/org/repo', true],
    ['ssh://git@host/repo', true],
    ['../base', false],
    ['deployment.yaml', false],
    ['config.d/extra', false],
    ['base', false],
  ])('%s → %s', (value, expected) => expect(looksRemote(value)).toBe(expected));
});

describe('urlShaped (refused in every kustomization field, whatever exists on disk)', () => {
  it.each([
    ['http://h/x', true],
    ['https://h/x.yaml', true],
    ['file:///etc/passwd', true],
    ['git::http://h/repo', true],
    ['git@github.com:org/repo', true],
    ['github.com:org/repo', true],
    ['//h/x', true],
    ['ssh://git@h/repo', true],
    ['../base', false],
    ['deploy.yaml', false],
    ['/abs/path.yaml', false],
    ['dir/with@at/x.yaml', false],
  ])('%s → %s', (value, expected) => expect(urlShaped(value)).toBe(expected));
});
