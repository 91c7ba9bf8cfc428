import { describe, expect, it } from 'vitest';
import { MAX_STDERR_CHARS, sanitizeStderr } from './run-tool.ts';
import { looksRemote } from './kustomize-check.ts';

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
