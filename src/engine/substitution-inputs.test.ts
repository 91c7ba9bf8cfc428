import { describe, expect, it } from 'vitest';
import { readSubstitution } from './substitution-inputs.ts';

/** The objects as plain data: this tests the order and the rules, e2e/postbuild.test.ts the cluster. */
const readers = (
  configMaps: Record<string, Record<string, string>>,
  secrets: Record<string, Record<string, string>>,
) => {
  const asked: string[] = [];
  const reader = (kind: string, store: Record<string, Record<string, string>>) => ({
    read: async (namespace: string, name: string) => {
      asked.push(`${kind} ${namespace}/${name}`);
      return store[name];
    },
  });
  return { asked, configMaps: reader('ConfigMap', configMaps), secrets: reader('Secret', secrets) };
};

describe('readSubstitution', () => {
  it('no postBuild: no substitution, nothing read', async () => {
    const r = readers({}, {});
    expect(await readSubstitution('team-a', undefined, r, true)).toEqual({ ok: true, value: undefined });
    expect(r.asked).toEqual([]);
  });

  it('reads in spec order from the PackageSync namespace; later sources win, inline wins over all', async () => {
    const r = readers({ a: { X: 'a', Y: 'a', Z: 'a' } }, { b: { Y: 'b', Z: 'b' } });
    const result = await readSubstitution(
      'team-a',
      {
        substitute: { Z: 'inline' },
        substituteStrategy: 'Always',
        substituteFrom: [
          { kind: 'ConfigMap', name: 'a', optional: false },
          { kind: 'Secret', name: 'b', optional: false },
          { kind: 'Secret', name: 'gone', optional: true },
        ],
      },
      r,
      false,
    );
    expect(result).toEqual({
      ok: true,
      value: { variables: { X: 'a', Y: 'b', Z: 'inline' }, strict: false, always: true },
    });
    expect(r.asked).toEqual(['ConfigMap team-a/a', 'Secret team-a/b', 'Secret team-a/gone']);
  });

  it('a missing required source is SubstitutionSourceNotFound, retried, naming it and its entry', async () => {
    const result = await readSubstitution(
      'team-a',
      { substituteStrategy: 'WithVariables', substituteFrom: [{ kind: 'Secret', name: 'vars', optional: false }] },
      readers({}, {}),
      true,
    );
    expect(result).toEqual({
      ok: false,
      failure: {
        reason: 'SubstitutionSourceNotFound',
        message:
          'Secret team-a/vars named in spec.postBuild.substituteFrom[0] does not exist; create it, or set optional: true on that entry',
        terminal: false,
      },
    });
  });

  it('a key that cannot be a variable names its source and never the value', async () => {
    const result = await readSubstitution(
      'team-a',
      { substituteStrategy: 'WithVariables', substituteFrom: [{ kind: 'Secret', name: 'tls', optional: false }] },
      readers({}, { tls: { 'tls.key': 'PRIVATE-KEY-MATERIAL' } }),
      true,
    );
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.failure.message).toContain(
        'Secret team-a/tls (spec.postBuild.substituteFrom[0]) has the key "tls.key"',
      );
      expect(result.failure.message).not.toContain('PRIVATE');
    }
  });
});
