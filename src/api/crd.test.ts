import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRD_FILE, crdYaml, NOTIFIER_CRD_FILE, notifierCrdYaml, SET_CRD_FILE, setCrdYaml } from './crd-yaml.ts';

describe('the PackageSync CRD', () => {
  it('in crds/ is exactly what the zod schema generates (run `make crds` after changing src/api)', () => {
    const committed = readFileSync(resolve(import.meta.dirname, '../..', CRD_FILE), 'utf8');
    expect(committed).toBe(crdYaml());
  });

  it('the Notifier CRD in crds/ is exactly what its zod schema generates', () => {
    const committed = readFileSync(resolve(import.meta.dirname, '../..', NOTIFIER_CRD_FILE), 'utf8');
    expect(committed).toBe(notifierCrdYaml());
    expect(committed).not.toContain('additionalProperties: false');
  });

  it('the PackageSyncSet CRD in crds/ is exactly what its zod schema generates, IntOrString in its one accepted form', () => {
    const committed = readFileSync(resolve(import.meta.dirname, '../..', SET_CRD_FILE), 'utf8');
    expect(committed).toBe(setCrdYaml());
    expect(committed).not.toContain('additionalProperties: false');
    expect(committed).toContain('x-kubernetes-int-or-string: true');
    expect(committed).not.toMatch(/kubeConfig:/);
  });

  it('has no additionalProperties next to properties (the API server requires structural schemas)', () => {
    const text = crdYaml();
    expect(text).not.toContain('additionalProperties: false');
    expect(text).not.toContain('$schema');
  });
});
