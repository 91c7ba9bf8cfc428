import { describe, expect, it } from 'vitest';
import { registryAuthFromSecret } from './credentials.ts';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const docker = (auths: object) => ({ '.dockerconfigjson': JSON.stringify({ auths }) });
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('registryAuthFromSecret', () => {
  it.each([
    ['auth (base64 user:password)', docker({ 'reg.io': { auth: b64('u:p:w') } }), { username: 'u', password: 'p:w' }],
    [
      'username/password in the entry',
      docker({ 'https://reg.io/v1/': { username: 'u', password: 'p' } }),
      { username: 'u', password: 'p' },
    ],
    ['an identity token', docker({ 'reg.io': { identitytoken: 't' } }), { identityToken: 't' }],
    ['username and password keys', { username: 'u', password: 'p' }, { username: 'u', password: 'p' }],
    [
      'ca.crt with username/password',
      { username: 'u', password: 'p', 'ca.crt': CA },
      { username: 'u', password: 'p', caCert: CA },
    ],
    ['ca.crt alone', { 'ca.crt': CA }, { caCert: CA }],
  ])('reads %s', (_what, data, expected) => {
    expect(registryAuthFromSecret(data, 'reg.io', 'ns/s')).toEqual({ ok: true, value: expected });
  });

  it('without a secret: anonymous, or only the CA', () => {
    expect(registryAuthFromSecret(undefined, 'reg.io', '')).toEqual({ ok: true, value: undefined });
    expect(registryAuthFromSecret(undefined, 'reg.io', '', CA)).toEqual({ ok: true, value: { caCert: CA } });
  });

  it.each([
    [
      'no entry for the host',
      docker({ 'other.io': { auth: b64('u:p') } }),
      'no .dockerconfigjson auths entry for reg.io',
    ],
    ['bad JSON', { '.dockerconfigjson': '{' }, 'not JSON'],
    ['no auths', { '.dockerconfigjson': '{}' }, 'without "auths"'],
    ['auth without a colon', docker({ 'reg.io': { auth: b64('secretvalue') } }), 'not base64 of user:password'],
    ['username without password', { username: 'u' }, 'username but no password'],
    ['none of the keys', { token: 'x' }, 'none of the keys'],
    ['a ca.crt that is not PEM', { 'ca.crt': 'nope' }, 'not a PEM certificate'],
  ])('refuses %s (InvalidAuthSecret), never quoting a value', (_what, data, why) => {
    const r = registryAuthFromSecret(data as Record<string, string>, 'reg.io', 'ns/s');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.failure.reason).toBe('InvalidAuthSecret');
      expect(r.failure.message).toContain(why);
      expect(r.failure.message).not.toMatch(/secretvalue|u:p/);
    }
  });
});
