import { describe, expect, it } from 'vitest';
import { dependsOnCycle } from './depends-on-cycle.ts';

const graph = (edges: Record<string, string[]>) => new Map(Object.entries(edges));

describe('dependsOnCycle', () => {
  it('finds the cycle through the start, in order', () => {
    expect(dependsOnCycle('a/x', graph({ 'a/x': ['a/y'], 'a/y': ['b/z'], 'b/z': ['a/x'] }))).toEqual([
      'a/x',
      'a/y',
      'b/z',
      'a/x',
    ]);
    expect(dependsOnCycle('a/x', graph({ 'a/x': ['a/x'] }))).toEqual(['a/x', 'a/x']);
  });

  it('is undefined for a chain, a diamond, or a cycle the start only leads into', () => {
    expect(dependsOnCycle('a', graph({ a: ['b'], b: ['c'] }))).toBeUndefined();
    expect(dependsOnCycle('a', graph({ a: ['b', 'c'], b: ['d'], c: ['d'] }))).toBeUndefined();
    // a waits on b and c, which wait on each other: a is blocked, but not a member (they report it)
    expect(dependsOnCycle('a', graph({ a: ['b'], b: ['c'], c: ['b'] }))).toBeUndefined();
  });
});
