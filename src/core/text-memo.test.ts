import { describe, expect, it } from 'vitest';
import { TextMemo } from './text-memo.ts';

describe('TextMemo', () => {
  it('computes a text once while it is among the last read, and forgets the one read least recently', () => {
    const seen: string[] = [];
    const memo = new TextMemo((t) => (seen.push(t), { length: t.length }), { maxEntries: 2 });
    memo.get('a');
    memo.get('bb');
    memo.get('a'); // a is now the most recent
    memo.get('ccc'); // bb goes
    memo.get('a');
    memo.get('bb');
    expect(seen).toEqual(['a', 'bb', 'ccc', 'bb']);
    expect(memo.size).toBe(2);
  });

  it('hands out frozen answers: one caller cannot change what the next one reads', () => {
    const memo = new TextMemo((t) => ({ refs: [t] }));
    const first = memo.get('x');
    expect(() => (first.refs as string[]).push('y')).toThrow(TypeError);
    expect(memo.get('x')).toEqual({ refs: ['x'] });
  });

  it('remembers undefined answers too, and never a text over the size bound', () => {
    let calls = 0;
    const memo = new TextMemo(() => (calls++, undefined), { maxTextLength: 4 });
    memo.get('abc');
    memo.get('abc');
    memo.get('abcdef');
    memo.get('abcdef');
    expect(calls).toBe(3);
    expect(memo.size).toBe(1);
  });
});
