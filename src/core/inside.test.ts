import { describe, expect, it } from 'vitest';
import { isInside } from './inside.ts';

describe('isInside (segment-wise containment)', () => {
  it.each([
    ['/repo', '/repo', true],
    ['/repo', '/repo/app', true],
    ['/repo/', '/repo/app/x.yaml', true],
    ['/repo', '/repo//app', true],
    ['/', '/anything', true],
    // a string prefix is not containment (issue 34: app/extra → ../app-files counted as inside app)
    ['/repo/app', '/repo/app-files', false],
    ['/repo/app', '/repo/app-files/leak.txt', false],
    ['/repo/app', '/repo', false],
    ['/repo', '/other', false],
    // not real paths: refused rather than guessed
    ['/repo', '/repo/../etc/passwd', false],
    ['/repo', 'repo/app', false],
    ['repo', '/repo/app', false],
  ])('isInside(%j, %j) is %s', (root, path, inside) => {
    expect(isInside(root, path)).toBe(inside);
  });
});
