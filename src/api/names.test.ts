import { describe, expect, it } from 'vitest';
import {
  CONFIG_KEY_PATTERN,
  DNS1123_LABEL_PATTERN,
  DNS1123_SUBDOMAIN_PATTERN,
  assertValidName,
  isValidName,
  nameProblem,
  type NameKind,
} from './names.ts';

// Cases from k8s.io/apimachinery/pkg/util/validation (validation_test.go: TestIsDNS1123Label,
// TestIsDNS1123Subdomain, TestIsConfigMapKey), plus what a hostile tenant sends (issue 35).
const cases: [NameKind, string, boolean][] = [
  ['namespace', 'a', true],
  ['namespace', 'ab', true],
  ['namespace', 'a-b', true],
  ['namespace', 'a--b', true],
  ['namespace', '0', true],
  ['namespace', '1-2', true],
  ['namespace', 'a'.repeat(63), true],
  ['namespace', 'a'.repeat(64), false],
  ['namespace', '', false],
  ['namespace', 'A', false],
  ['namespace', '-a', false],
  ['namespace', 'a-', false],
  ['namespace', 'a.b', false],
  ['namespace', 'a_b', false],
  ['namespace', 'a/b', false],
  ['namespace', '..', false],
  ['namespace', 'a\n', false],
  ['name', 'a', true],
  ['name', 'a.b.c', true],
  ['name', 'a-1.b-2', true],
  ['name', '11.22.33', true],
  ['name', 'a'.repeat(253), true],
  ['name', 'a'.repeat(254), false],
  ['name', '', false],
  ['name', '.', false],
  ['name', '..', false],
  ['name', '.a', false],
  ['name', 'a.', false],
  ['name', 'a..b', false],
  ['name', 'a.-b', false],
  ['name', 'A.b', false],
  ['name', 'other-ns/secret', false],
  ['name', 'a%2fb', false],
  ['name', 'a:b', false],
  ['name', 'déployeur', false],
  ['name', 'deployer\r\nImpersonate-Group: system:masters', false],
  ['name', 'deployer\0', false],
  ['name', 'deployer\n', false],
  ['key', 'a', true],
  ['key', 'values.yaml', true],
  ['key', '.dockerconfigjson', true],
  ['key', '.a.b', true],
  ['key', 'A_b-C.d', true],
  ['key', 'a..b', true],
  ['key', 'a'.repeat(253), true],
  ['key', 'a'.repeat(254), false],
  ['key', '', false],
  ['key', '.', false],
  ['key', '..', false],
  ['key', '..a', false],
  ['key', 'a/b', false],
  ['key', '../values.yaml', false],
  ['key', 'a b', false],
  ['key', 'a\r\nb', false],
  ['key', 'clé', false],
];

describe('isValidName follows Kubernetes', () => {
  it.each(cases)('%s %j → %s', (kind, value, valid) => {
    expect(isValidName(kind, value)).toBe(valid);
  });

  it.each([
    ['namespace', DNS1123_LABEL_PATTERN],
    ['name', DNS1123_SUBDOMAIN_PATTERN],
    ['key', CONFIG_KEY_PATTERN],
  ] as const)('the CRD pattern of %s agrees with the check (length aside) on every case', (kind, pattern) => {
    const re = new RegExp(pattern);
    for (const [k, value, valid] of cases) {
      if (k !== kind || value.length > 63) continue;
      expect(re.test(value), JSON.stringify(value)).toBe(valid);
    }
  });

  it('refuses what is not a string', () => {
    expect(isValidName('name', undefined)).toBe(false);
    expect(isValidName('name', 42)).toBe(false);
  });
});

describe('nameProblem', () => {
  it('names the field and shows control characters escaped, never raw', () => {
    const p = nameProblem('name', 'deployer\r\nImpersonate-Group: x', 'spec.serviceAccountName');
    expect(p).toContain('spec.serviceAccountName: "deployer\\r\\nImpersonate-Group: x" is not an object name');
    expect(p).not.toMatch(/[\r\n]/);
  });

  it('shortens a very long value', () => {
    const p = nameProblem('key', 'x'.repeat(5000), 'spec.kubeConfig.secretRef.key')!;
    expect(p).toContain('(5000 characters)');
    expect(p.length).toBeLessThan(400);
  });

  it('is undefined for a valid value, and assertValidName throws for an invalid one', () => {
    expect(nameProblem('namespace', 'team-a', 'x')).toBeUndefined();
    expect(() => assertValidName('namespace', 'team-a', 'x')).not.toThrow();
    expect(() => assertValidName('namespace', 'team/a', 'namespace')).toThrow(/namespace: "team\/a" is not/);
  });
});
