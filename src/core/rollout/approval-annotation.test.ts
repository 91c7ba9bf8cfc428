import { describe, expect, it } from 'vitest';
import { approvalAnnotation } from './approval-annotation.ts';
import { parseApproval, parseResume } from './step.ts';

const SHA = '3f2a9c01b7de5a4c2d1e0f9a8b7c6d5e4f3a2b1c';
const DIGEST = 'a'.repeat(64);

describe('approvalAnnotation', () => {
  it.each([
    ['a git revision', `main@sha1:${SHA}`, SHA],
    ['a bare commit', SHA, SHA],
    ['an OCI tag and digest', `v1.2.0@sha256:${DIGEST}`, DIGEST],
  ])('writes the commit of %s, and parseApproval reads back wave, revision and who', (_what, revision, commit) => {
    const value = approvalAnnotation('canary', revision, 'system:serviceaccount:team-a:alice');
    expect(value).toBe(`canary@${commit}:system:serviceaccount:team-a:alice`);
    expect(parseApproval(value)).toEqual({
      wave: 'canary',
      revision: commit,
      by: 'system:serviceaccount:team-a:alice',
    });
    expect(parseResume(value)).toMatchObject({ wave: 'canary', revision: commit, value });
  });

  it('leaves who out when it is unknown or blank, and keeps a name with spaces on one line', () => {
    expect(approvalAnnotation('w1', SHA)).toBe(`w1@${SHA}`);
    expect(approvalAnnotation('w1', SHA, '  ')).toBe(`w1@${SHA}`);
    expect(parseApproval(approvalAnnotation('w1', SHA, ' Ada\nLovelace '))).toEqual({
      wave: 'w1',
      revision: SHA,
      by: 'Ada Lovelace',
    });
  });
});
