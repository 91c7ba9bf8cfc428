import { describe, expect, it } from 'vitest';
import { parseChallenge } from './challenge.ts';

describe('parseChallenge', () => {
  it.each([
    ['Basic realm="Registry Realm"', { scheme: 'basic' }],
    [
      'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/x:pull"',
      {
        scheme: 'bearer',
        realm: 'https://auth.docker.io/token',
        service: 'registry.docker.io',
        scope: 'repository:library/x:pull',
      },
    ],
    ['bearer realm=https://t/token', { scheme: 'bearer', realm: 'https://t/token' }],
    ['Bearer realm="https://t/t", scope="a:\\"b\\""', { scheme: 'bearer', realm: 'https://t/t', scope: 'a:"b"' }],
    ['Bearer service="x"', undefined],
    ['Negotiate abc', undefined],
    [null, undefined],
  ])('%s', (header, expected) => expect(parseChallenge(header)).toEqual(expected));
});
