import { describe, expect, it } from 'vitest';
import { resourcePath } from './discovery.ts';

const configMaps = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };

describe('resourcePath', () => {
  it('builds collection and object paths, encoding names', () => {
    expect(resourcePath(configMaps, 'team-a')).toBe('/api/v1/namespaces/team-a/configmaps');
    expect(resourcePath(configMaps, 'team-a', 'a b')).toBe('/api/v1/namespaces/team-a/configmaps/a%20b');
    expect(resourcePath(configMaps, 'team-a', 'a/../..')).toBe('/api/v1/namespaces/team-a/configmaps/a%2F..%2F..');
  });

  // A URL resolves them: DELETE …/configmaps/.. would delete the namespace, …/configmaps/. every ConfigMap.
  it.each([
    ['team-a', '..'],
    ['team-a', '.'],
    ['team-a', '%2e%2E'],
    ['..', 'x'],
    ['.', 'x'],
  ])('refuses a dot segment (namespace %j, name %j)', (namespace, name) => {
    expect(() => resourcePath(configMaps, namespace, name)).toThrow('is not a valid object or namespace name');
  });
});
