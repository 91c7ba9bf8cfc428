import { describe, expect, it } from 'vitest';
import { Reason } from './reasons.ts';

/** The reasons issue 5 (safety) names, spelled exactly as the issue spells them: users match on them. */
const ISSUE_5 = [
  'InvalidURL',
  'InvalidRef',
  'InvalidPath',
  'PathNotFound',
  'PathEscape',
  'ArtifactTooLarge',
  'SourceTimeout',
  'AuthSecretNotFound',
  'InvalidAuthSecret',
  'RenderFailed',
  'InvalidManifest',
  'EmptyRender',
  'OwnershipConflict',
  'ApplyConflict',
  'ImmutableFieldChange',
  'PruneFailed',
  'Forbidden',
];

describe('Reason', () => {
  it.each(ISSUE_5)('has %s, spelled as issue 5 spells it', (name) => {
    expect((Reason as Record<string, string>)[name]).toBe(name);
  });

  it('every value is its own key, in CamelCase as Kubernetes condition reasons are', () => {
    for (const [key, value] of Object.entries(Reason)) {
      expect(value).toBe(key);
      expect(value).toMatch(/^[A-Z][A-Za-z]*$/);
    }
  });
});
