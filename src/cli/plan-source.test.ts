import { describe, expect, it } from 'vitest';
import { parseRefFlag } from './plan-source.ts';

describe('parseRefFlag', () => {
  it.each([
    ['main', { branch: 'main' }],
    ['feature/x', { branch: 'feature/x' }],
    ['branch:release', { branch: 'release' }],
    ['tag:v1.2.3', { tag: 'v1.2.3' }],
    ['semver:>=1.0.0', { semver: '>=1.0.0' }],
    ['commit:abc123', { commit: 'abc123' }],
    ['0123456789abcdef0123456789abcdef01234567', { commit: '0123456789abcdef0123456789abcdef01234567' }],
  ])('%s', (flag, want) => {
    expect(parseRefFlag(flag)).toEqual(want);
  });
});
