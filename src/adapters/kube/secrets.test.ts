import { describe, expect, it } from 'vitest';
import { KubeApiError, type KubeClient } from './client.ts';
import { Secrets } from './secrets.ts';

function fakeClient(answer: (path: string) => unknown) {
  const paths: string[] = [];
  const client = {
    request: (method: string, path: string) => {
      paths.push(`${method} ${path}`);
      return Promise.resolve().then(() => answer(path));
    },
  } as unknown as KubeClient;
  return { client, paths };
}

describe('Secrets.read', () => {
  it('reads the named Secret of the namespace and decodes its data', async () => {
    const { client, paths } = fakeClient(() => ({ data: { password: Buffer.from('pw').toString('base64') } }));
    expect(await new Secrets(client).read('team-a', 'git-auth')).toEqual({ password: 'pw' });
    expect(paths).toEqual(['GET /api/v1/namespaces/team-a/secrets/git-auth']);
  });

  it('a missing Secret is undefined', async () => {
    const { client } = fakeClient(() => {
      throw new KubeApiError(404, 'NotFound', 'secrets "x" not found');
    });
    expect(await new Secrets(client).read('team-a', 'x')).toBeUndefined();
  });

  // "." and ".." are dot segments: the URL would resolve to the Secret list or to the namespace object.
  it.each(['.', '..', '', 'a/b', '../kube-system', 'A', '-x', 'x'.repeat(254)])(
    'a name no Secret can have (%j) is not found, and never asked for',
    async (name) => {
      const { client, paths } = fakeClient(() => ({ data: { password: 'cHc=' } }));
      expect(await new Secrets(client).read('team-a', name)).toBeUndefined();
      expect(paths).toEqual([]);
    },
  );
});
