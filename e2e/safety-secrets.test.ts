/**
 * Invariant 5 through the real controller: git credentials — a password, a bearer token, an ssh key,
 * right and wrong — are used, fail, and never show up in the controller's logs (at trace level), in any
 * PackageSync status, or in any event of the namespace: neither raw, nor URL-encoded, nor base64.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageSyncCollectionPath } from '../src/adapters/kube/packagesyncs.ts';
import type { PackageSync } from '../src/api/packagesync.ts';
import type { GitHttpServer } from '../test/support/git/index.ts';
import { kube } from './support/cluster.ts';
import { waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { configMap, sleep } from './support/safety.ts';

// characters that URL-encoding and base64 both change
const secret = (prefix: string) => `${prefix}/${randomBytes(9).toString('base64')}+@:%=`;
const PASSWORD = secret('pw');
const WRONG_PASSWORD = secret('wrong-pw');
const NEWLINE_PASSWORD = `${secret('nl-pw')}\nX-Injected: 1`;
const URL_PASSWORD = `urlpw${randomBytes(6).toString('hex')}`;
const TOKEN = secret('tok');
const WRONG_TOKEN = secret('wrong-tok');

let env: GitEnvWithController;
let bearer: GitHttpServer;
let ns: string;

beforeAll(async () => {
  const basic = { username: 'alice', password: PASSWORD };
  env = await startGitEnv({ args: ['--log-level', 'trace'] }, { auth: basic, ssh: true });
  await env.repo('private', { 'cm.yaml': configMap('c', { k: 'v' }) });
  bearer = await env.git.serveHttp({ bearerToken: TOKEN });
  ns = await env.namespace('secrets');
});

afterAll(async () => {
  await env?.dispose();
});

describe('credentials', () => {
  it('never reach logs, status or events, used right or wrong', async () => {
    const client = await kube();
    const secrets: Record<string, Record<string, string>> = {
      'basic-ok': { username: 'alice', password: PASSWORD },
      'basic-bad': { username: 'alice', password: WRONG_PASSWORD },
      'basic-newline': { username: 'alice', password: NEWLINE_PASSWORD },
      'token-ok': { bearerToken: TOKEN },
      'token-bad': { bearerToken: WRONG_TOKEN },
      'ssh-ok': { identity: env.ssh.clientKey, known_hosts: env.ssh.knownHosts },
      'ssh-wrong-key': { identity: env.ssh.wrongKey, known_hosts: env.ssh.knownHosts },
      'ssh-wrong-host': { identity: env.ssh.clientKey, known_hosts: env.ssh.wrongKnownHosts },
    };
    for (const [name, stringData] of Object.entries(secrets)) {
      await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, { body: { metadata: { name }, stringData } });
    }
    const cases: [string, string, string | undefined, string][] = [
      ['basic-ok', env.server.url('private'), 'basic-ok', 'Ready'],
      ['basic-bad', env.server.url('private'), 'basic-bad', 'AuthenticationFailed'],
      ['basic-newline', env.server.url('private'), 'basic-newline', 'InvalidAuthSecret'],
      ['token-ok', bearer.url('private'), 'token-ok', 'Ready'],
      ['token-bad', bearer.url('private'), 'token-bad', 'AuthenticationFailed'],
      ['token-elsewhere', env.server.url('private'), 'token-ok', 'AuthenticationFailed'],
      ['ssh-ok', env.ssh.url('private'), 'ssh-ok', 'Ready'],
      ['ssh-wrong-key', env.ssh.url('private'), 'ssh-wrong-key', 'AuthenticationFailed'],
      ['ssh-wrong-host', env.ssh.url('private'), 'ssh-wrong-host', 'AuthenticationFailed'],
      ['no-secret', env.server.url('private'), undefined, 'AuthenticationFailed'],
      ['url-password', env.server.url('private').replace('://', `://alice:${URL_PASSWORD}@`), undefined, 'InvalidURL'],
    ];
    for (const [name, url, secretName, reason] of cases) {
      const source = { url, ...(secretName ? { secretRef: { name: secretName } } : {}) };
      // the packages are the same: those that apply do so in a namespace of their own
      const targetNamespace = reason === 'Ready' ? await env.namespace(`secrets-${name}`) : undefined;
      await env.sync(ns, name, { source, targetNamespace, retryInterval: '2s' });
    }
    for (const [name, , , reason] of cases) {
      if (reason === 'Ready') await waitReady(ns, name);
      else await waitCondition(ns, name, 'Ready', 'False', reason);
    }
    await sleep(3000); // a few retries of the failing ones, so their logs and events are in too

    const forms = new Set<string>();
    const addForms = (s: string) => {
      forms.add(s);
      forms.add(encodeURIComponent(s));
      forms.add(Buffer.from(s).toString('base64'));
    };
    for (const s of [PASSWORD, WRONG_PASSWORD, NEWLINE_PASSWORD, URL_PASSWORD, TOKEN, WRONG_TOKEN]) addForms(s);
    for (const s of NEWLINE_PASSWORD.split('\n')) addForms(s);
    for (const p of [PASSWORD, WRONG_PASSWORD]) addForms(`alice:${p}`);
    for (const key of [env.ssh.clientKey, env.ssh.wrongKey]) {
      addForms(key);
      for (const line of key.split('\n')) if (line.length >= 16 && !line.startsWith('-----')) forms.add(line);
    }

    const list = await client.request<{ items: PackageSync[] }>('GET', packageSyncCollectionPath(ns));
    const statuses = JSON.stringify(list.items.map((ps) => ps.status));
    const events = JSON.stringify(
      (await client.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${ns}/events`)).items,
    );
    const logs = env.controller.logs.join('\n');
    expect(logs).toContain('"level":"debug"'); // the chattiest lines are there to be searched
    expect(list.items).toHaveLength(cases.length);
    for (const form of forms) {
      expect(statuses.includes(form), `status contains ${form.slice(0, 12)}…`).toBe(false);
      expect(events.includes(form), `events contain ${form.slice(0, 12)}…`).toBe(false);
      expect(logs.includes(form), `logs contain ${form.slice(0, 12)}…`).toBe(false);
    }
  });
});
