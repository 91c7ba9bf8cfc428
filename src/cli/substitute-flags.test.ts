import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from './exit-codes.ts';
import { substitutionFromFlags } from './substitute-flags.ts';

let dir: string;
const file = async (name: string, text: string) => {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'psync-subst-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('substitutionFromFlags', () => {
  it('no flag: no substitution, as a PackageSync without postBuild', async () => {
    expect(await substitutionFromFlags({ strictSubstitutions: true })).toBeUndefined();
  });

  it('files in order, then --substitute on top; ConfigMap, Secret (base64 and stringData) and plain mappings', async () => {
    const plain = await file('plain.yaml', 'A: plain\nB: plain\nC: plain\nD: plain\n');
    const cm = await file('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: v}\ndata: {B: cm, C: cm}\n');
    const secret = await file(
      'secret.yaml',
      `apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {C: ${Buffer.from('secret').toString('base64')}}\n`,
    );
    const s = await substitutionFromFlags({
      substituteFromFile: [plain, cm, secret],
      substitute: ['D=inline=with=equals'],
      strictSubstitutions: false,
    });
    expect(s).toEqual({
      variables: { A: 'plain', B: 'cm', C: 'secret', D: 'inline=with=equals' },
      strict: false,
      always: false,
    });
  });

  it.each([
    [{ substitute: ['novalue'] }, /--substitute novalue: write name=value/],
    [{ substitute: ['bad.name=x'] }, /--substitute has the key "bad.name"/],
    [{ substituteFromFile: ['/nonexistent/vars.yaml'] }, /does not exist/],
  ])('refuses %j', async (flags, message) => {
    const promise = substitutionFromFlags({ strictSubstitutions: true, ...flags });
    await expect(promise).rejects.toBeInstanceOf(CliError);
    await expect(promise).rejects.toThrow(message);
  });

  it('refuses a non-string value in a file, naming the key', async () => {
    const f = await file('num.yaml', 'N: 3\n');
    await expect(substitutionFromFlags({ substituteFromFile: [f], strictSubstitutions: true })).rejects.toThrow(
      /the value of N is not a string; quote it/,
    );
  });
});
