import { describe, expect, it } from 'vitest';
import { parseSpec } from './spec.ts';

const source = { url: 'https://git.example.com/repo.git' };

describe('spec.postBuild', () => {
  it('is optional: a spec without it has none', () => {
    const r = parseSpec({ source });
    expect(r.ok && r.value.postBuild).toBeUndefined();
  });

  it("takes Flux's fields, defaulting optional to false and substituteStrategy to WithVariables", () => {
    const r = parseSpec({
      source,
      postBuild: {
        substitute: { cluster_env: 'prod' },
        substituteFrom: [
          { kind: 'ConfigMap', name: 'cluster-vars', optional: true },
          { kind: 'Secret', name: 'cluster-secret-vars' },
        ],
      },
    });
    expect(r.ok && r.value.postBuild).toEqual({
      substitute: { cluster_env: 'prod' },
      substituteFrom: [
        { kind: 'ConfigMap', name: 'cluster-vars', optional: true },
        { kind: 'Secret', name: 'cluster-secret-vars', optional: false },
      ],
      substituteStrategy: 'WithVariables',
    });
  });

  it.each([
    [{ substituteFrom: [{ kind: 'Deployment', name: 'x' }] }, 'spec.postBuild.substituteFrom.0.kind'],
    [{ substituteFrom: [{ kind: 'Secret', name: '' }] }, 'spec.postBuild.substituteFrom.0.name'],
    [{ substitute: { a: 1 } }, 'spec.postBuild.substitute.a'],
    [{ substituteStrategy: 'Sometimes' }, 'spec.postBuild.substituteStrategy'],
  ])('refuses %j, naming %s', (postBuild, field) => {
    const r = parseSpec({ source, postBuild });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.failure.message.startsWith(`${field}:`)).toBe(true);
  });
});
