import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { Reason } from '../../api/reasons.ts';
import { kubeconfigFromSecret, kubeconfigKey } from './remote-kubeconfig.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const CA = b64('-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n');
const TOKEN = 's3cret-token-value';
const WHERE = 'Secret team-a/prod-kc';

function config(user: Record<string, unknown>, cluster: Record<string, unknown> = {}, extraUsers: unknown[] = []) {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'prod', cluster: { server: 'https://prod.example:6443', 'certificate-authority-data': CA, ...cluster } },
    ],
    users: [{ name: 'deployer', user }, ...extraUsers],
    contexts: [{ name: 'prod', context: { cluster: 'prod', user: 'deployer' } }],
    'current-context': 'prod',
  });
}

describe('kubeconfigKey (Flux: the key named, else value, else value.yaml)', () => {
  it.each([
    [{ value: 'a', 'value.yaml': 'b' }, undefined, { key: 'value' }],
    [{ 'value.yaml': 'b' }, undefined, { key: 'value.yaml' }],
    [{ kubeconfig: 'c', value: 'a' }, 'kubeconfig', { key: 'kubeconfig' }],
    [{ value: 'a' }, 'kubeconfig', { missing: 'has no key "kubeconfig"' }],
    [{ other: 'a' }, undefined, { missing: 'has neither key "value" nor "value.yaml" (or set secretRef.key)' }],
  ])('%j with key %s → %j', (data, key, want) => {
    expect(kubeconfigKey(data, key)).toEqual(want);
  });
});

describe('kubeconfigFromSecret', () => {
  it('takes insecure-skip-tls-verify: false', async () => {
    const r = await kubeconfigFromSecret(
      WHERE,
      { value: config({ token: TOKEN }, { 'insecure-skip-tls-verify': false }) },
      undefined,
    );
    expect(r.ok).toBe(true);
  });

  it('reads an inline kubeconfig: server, CA and token', async () => {
    const r = await kubeconfigFromSecret(WHERE, { value: config({ token: TOKEN }) }, undefined);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.info.server).toBe('https://prod.example:6443');
    expect(r.value.info.auth).toEqual(['token']);
    expect(await r.value.headers()).toEqual({ Authorization: `Bearer ${TOKEN}` });
  });

  it.each([
    [
      'an exec plugin',
      config({ exec: { command: 'aws', args: ['eks', 'get-token'] } }),
      'users[deployer].exec',
      'program',
    ],
    [
      'an auth-provider',
      config({ 'auth-provider': { name: 'gcp', config: { 'access-token': TOKEN } } }),
      'users[deployer].auth-provider',
      'plugin',
    ],
    [
      'a token file',
      config({ tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' }),
      'users[deployer].tokenFile',
      'file',
    ],
    [
      'a client certificate file',
      config({ 'client-certificate': '/etc/cert.pem', 'client-key-data': b64('k') }),
      'users[deployer].client-certificate',
      'file',
    ],
    [
      'a client key file',
      config({ 'client-certificate-data': b64('c'), 'client-key': '/etc/key.pem' }),
      'users[deployer].client-key',
      'file',
    ],
    [
      'a CA file',
      config({ token: TOKEN }, { 'certificate-authority': '/etc/ca.pem' }),
      'clusters[prod].certificate-authority',
      'file',
    ],
    [
      'skipped TLS verification',
      config({ token: TOKEN }, { 'insecure-skip-tls-verify': true }),
      'clusters[prod].insecure-skip-tls-verify',
      'TLS',
    ],
    // refused wherever it is, not only in the current context
    [
      'an exec plugin in an unused user',
      config({ token: TOKEN }, {}, [{ name: 'other', user: { exec: { command: 'sh' } } }]),
      'users[other].exec',
      'program',
    ],
  ])('refuses %s, naming the field and never a value', async (_, text, field, what) => {
    const r = await kubeconfigFromSecret(WHERE, { value: text }, undefined);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.failure.reason).toBe(Reason.KubeConfigInvalid);
    expect(r.failure.terminal).toBe(true);
    expect(r.failure.message).toContain(`kubeconfig in ${WHERE} key value: ${field}`);
    expect(r.failure.message).toContain(what);
    expect(r.failure.message).not.toContain(TOKEN);
    expect(r.failure.message).not.toContain('/etc/');
    expect(r.failure.message).not.toContain('/var/run');
  });

  it.each([
    ['no key', { other: 'x' }, undefined, `${WHERE} named in spec.kubeConfig.secretRef has neither key`],
    ['YAML that does not parse', { value: `token: ${TOKEN}\n  bad: [` }, undefined, 'not valid YAML at line'],
    ['no current-context', { value: stringify({ clusters: [], users: [] }) }, undefined, 'no current-context is set'],
    [
      'a context naming no cluster',
      { value: stringify({ contexts: [{ name: 'x', context: { cluster: 'gone' } }], 'current-context': 'x' }) },
      undefined,
      'names cluster gone, which is not defined',
    ],
  ])('%s is KubeConfigInvalid with a message that names where', async (_, data, key, text) => {
    const r = await kubeconfigFromSecret(WHERE, data, key);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.failure.reason).toBe(Reason.KubeConfigInvalid);
    expect(r.failure.message).toContain(text);
    expect(r.failure.message).not.toContain(TOKEN);
  });
});
