import { describe, expect, it } from 'vitest';
import { checkIndex, MAX_ALIASES } from './index-fetch.ts';

describe('checkIndex', () => {
  it('refuses a YAML bomb before helm reads it, naming the index', () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 8; i++)
      levels.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(', ')}]`,
      );
    const refused = checkIndex(levels.join('\n'), 'index.yaml of https://charts.example.com');
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.failure.reason).toBe('ArtifactUnsafeEntry');
    expect(!refused.ok && refused.failure.message).toContain('index.yaml of https://charts.example.com');
    expect(!refused.ok && refused.failure.message).toContain(String(MAX_ALIASES));
  });

  it('passes what helm repo index writes, and leaves other parse errors to helm', () => {
    expect(checkIndex('apiVersion: v1\nentries:\n  app:\n  - {name: app, version: 1.0.0}\n', 'x').ok).toBe(true);
    expect(checkIndex('a: [unclosed', 'x').ok).toBe(true);
  });
});
