import { describe, expect, it } from 'vitest';
import type { Failure } from '../failure.ts';
import { summarizeApplyFailures } from './apply-failures.ts';

const f = (reason: string, message: string, terminal = false): Failure => ({ reason, message, terminal });

describe('summarizeApplyFailures', () => {
  it.each<[string, Failure[], Failure]>([
    ['one failure as it is', [f('ApplyFailed', 'a: bad')], f('ApplyFailed', 'a: bad')],
    [
      'the first own failure heads, counts follow',
      [
        f('DependencyFailed', 'x skipped'),
        f('ApplyFailed', 'a: bad'),
        f('Forbidden', 'b: no'),
        f('DependencyFailed', 'y skipped'),
      ],
      f('ApplyFailed', 'a: bad (and 1 more failed, 2 skipped because a dependency failed)'),
    ],
    [
      'only skips (a dependency outside the package)',
      [f('DependencyFailed', 'x skipped'), f('DependencyFailed', 'y skipped')],
      f('DependencyFailed', 'x skipped (and 1 skipped because a dependency failed)'),
    ],
    [
      'terminal only when every failure is',
      [f('InvalidManifest', 'a', true), f('ApplyFailed', 'b')],
      f('InvalidManifest', 'a (and 1 more failed)', false),
    ],
  ])('%s', (_name, failures, expected) => {
    expect(summarizeApplyFailures(failures)).toEqual(expected);
  });
});
