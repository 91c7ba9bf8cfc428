import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRD_FILE, crdYaml } from './crd-yaml.ts';
import { parseSpec } from './packagesync.ts';

describe('the PackageSync CRD', () => {
  it('in crds/ is exactly what the zod schema generates (run `make crds` after changing src/api)', () => {
    const committed = readFileSync(resolve(import.meta.dirname, '../..', CRD_FILE), 'utf8');
    expect(committed).toBe(crdYaml());
  });

  it('has no additionalProperties next to properties (the API server requires structural schemas)', () => {
    const text = crdYaml();
    expect(text).not.toContain('additionalProperties: false');
    expect(text).not.toContain('$schema');
  });
});

describe('parseSpec', () => {
  it('fills the documented defaults', () => {
    const r = parseSpec({ source: { url: 'https://example.com/repo.git' } });
    expect(r.ok && r.spec).toMatchObject({
      interval: '5m',
      retryInterval: '30s',
      timeout: '3m',
      prune: true,
      wait: true,
      suspend: false,
      allowEmpty: false,
      force: false,
      source: { path: '.' },
    });
  });

  it.each([
    [{ source: { url: 'https://x/y.git', ref: { branch: 'main', tag: 'v1' } } }, 'spec.source.ref: set exactly one'],
    [{ source: { url: 'https://x/y.git', path: '../etc' } }, 'spec.source.path: path must be relative'],
    [{ source: { url: 'https://x/y.git', path: '/etc' } }, 'spec.source.path: path must be relative'],
    [{ source: { url: 'https://x/y.git' }, interval: '5 minutes' }, 'spec.interval: '],
    [{ source: { url: 'https://x/y.git', ref: { commit: 'abc' } } }, 'spec.source.ref.commit: commit must be a full'],
  ])('rejects %j naming the field', (raw, message) => {
    const r = parseSpec(raw);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toContain(message);
  });
});
