/**
 * `packagesync render --substitute …` through the real entry point: a package written for Flux's postBuild
 * previews as the controller renders it, and fails as the controller fails (exit 2, no value shown).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const run = promisify(execFile);
const bin = resolve(import.meta.dirname, '../../bin/packagesync.js');

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args]);
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'psync-render-subst-'));
  await writeFile(
    join(dir, 'cm.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${APP}-config\n  namespace: ${NS:=team-a}\n' +
      'data:\n  token: ${TOKEN}\n  literal: $${KEEP}\n',
  );
  await writeFile(
    join(dir, 'vars.yaml'),
    `apiVersion: v1\nkind: Secret\nmetadata: {name: vars}\ndata: {TOKEN: ${Buffer.from('tok-123').toString('base64')}}\n`,
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('packagesync render with substitution variables', { timeout: 60_000 }, () => {
  it('renders what the controller would: names, namespaces and values substituted, $${…} kept literal', async () => {
    const r = await cli('render', dir, '--substitute', 'APP=web', '--substitute-from-file', join(dir, 'vars.yaml'));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [cm] = parseAllDocuments(r.stdout).map(
      (d) => d.toJS() as { metadata: { name: string; namespace: string }; data: unknown },
    );
    expect(cm?.metadata).toMatchObject({ name: 'web-config', namespace: 'team-a' });
    expect(cm?.data).toEqual({ token: 'tok-123', literal: '${KEEP}' });
  });

  it('fails as the controller fails in strict mode, naming object, file and variable, never a value', async () => {
    const r = await cli('render', dir, '--substitute', 'TOKEN=tok-123');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('SubstitutionFailed: ConfigMap ${APP}-config in cm.yaml:1 uses the variable APP');
    expect(r.stderr).not.toContain('tok-123');
  });

  it('without any variable nothing is substituted (and the ${NS} namespace is then invalid, as for the controller)', async () => {
    const r = await cli('render', dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('InvalidManifest');
  });
});
