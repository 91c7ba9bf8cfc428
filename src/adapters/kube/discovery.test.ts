import { describe, expect, it } from 'vitest';
import { resourcePath } from './discovery.ts';

const configMaps = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };

describe('resourcePath', () => {
  it('builds collection and object paths, encoding names', () => {
    expect(resourcePath(configMaps, 'team-a')).toBe('/api/v1/namespaces/team-a/configmaps');
    expect(resourcePath(configMaps, 'team-a', 'a b')).toBe('/api/v1/namespaces/team-a/configmaps/a%20b');
    expect(resourcePath(configMaps, 'team-a', 'system:controller:x')).toBe(
      '/api/v1/namespaces/team-a/configmaps/system%3Acontroller%3Ax',
    );
  });

  // A URL resolves them: DELETE …/configmaps/.. would delete the namespace, …/configmaps/. every ConfigMap.
  it.each([
    ['team-a', '..'],
    ['team-a', '.'],
    ['team-a', '%2e%2E'],
    ['..', 'x'],
    ['.', 'x'],
    // issue 35: the API server decodes %2F, so "other-ns/cm" named a subresource
    ['team-a', 'other-ns/cm'],
    ['team-a', 'a/../..'],
    ['team-a', 'a%2Fb'],
    ['team-a/x', 'x'],
    ['team-a\r\n', 'x'],
  ])(
    'refuses a dot segment, a slash or a namespace no namespace can have (namespace %j, name %j)',
    (namespace, name) => {
      expect(() => resourcePath(configMaps, namespace, name)).toThrow(/is not a (valid object name|namespace name)/);
    },
  );
});
