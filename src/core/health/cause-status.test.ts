import { describe, expect, it } from 'vitest';
import type { CauseLink } from './cause-chain.ts';
import { boundedCause, MAX_CAUSE_LINKS, MAX_CAUSE_MESSAGE, rootCauseText, withFirstCause } from './cause-status.ts';

const deployment: CauseLink = { kind: 'Deployment', namespace: 'a', name: 'web', reason: 'InProgress' };
const rs: CauseLink = { kind: 'ReplicaSet', namespace: 'a', name: 'web-5d9f' };
const pod: CauseLink = {
  kind: 'Pod',
  namespace: 'a',
  name: 'web-5d9f-abcde',
  reason: 'ImagePullBackOff',
  message: 'ImagePullBackOff: Back-off pulling image "registry.local/web:2"',
};

describe('boundedCause', () => {
  it('keeps a short chain as it is', () => {
    expect(boundedCause([deployment, rs, pod])).toEqual([deployment, rs, pod]);
  });

  it('keeps the first link and the last ones of a long chain', () => {
    const links = Array.from({ length: 8 }, (_, i): CauseLink => ({ kind: 'X', name: `x${i}` }));
    const kept = boundedCause(links);
    expect(kept).toHaveLength(MAX_CAUSE_LINKS);
    expect(kept.map((l) => l.name)).toEqual(['x0', 'x4', 'x5', 'x6', 'x7']);
  });

  it('clips each message to one bounded line', () => {
    const [long] = boundedCause([{ ...pod, message: `line one\n  line two ${'x'.repeat(400)}` }]);
    expect(long!.message).toHaveLength(MAX_CAUSE_MESSAGE);
    expect(long!.message).toMatch(/^line one; line two x+…$/);
  });
});

describe('withFirstCause', () => {
  it.each([
    [
      'names the cause when the message does not',
      'timeout waiting for health: 1 object not Current: Deployment/a/web',
      true,
    ],
    [
      'adds nothing when the message quotes the Pod and reason',
      'Deployment/a/web (Pod web-5d9f-abcde: ImagePullBackOff: …)',
      false,
    ],
    ['adds nothing when the message names the Pod', 'Pod web-5d9f-abcde is pending', false],
  ])('%s', (_name, message, added) => {
    const out = withFirstCause(message, [deployment, rs, pod], 1024);
    expect(out).toBe(added ? `${message}; cause: ${rootCauseText([pod])}` : message);
  });

  it('shortens the message, never the cause, to fit', () => {
    const out = withFirstCause('y'.repeat(2000), [deployment, pod], 300);
    expect(out).toHaveLength(300);
    expect(out).toMatch(
      /^y+…; cause: Pod\/a\/web-5d9f-abcde: ImagePullBackOff: Back-off pulling image "registry.local\/web:2"$/,
    );
  });

  it('leaves the message alone without a chain, or with the failed object alone', () => {
    expect(withFirstCause('m', [], 1024)).toBe('m');
    expect(withFirstCause('m', [pod], 1024)).toBe('m');
  });
});
