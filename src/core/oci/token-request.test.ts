import { describe, expect, it } from 'vitest';
import { tokenRequest } from './token-request.ts';

const challenge = {
  realm: 'https://auth.example.com/token?x=1',
  service: 'registry.example.com',
  scope: 'repository:apps/web:pull,push',
};

describe('tokenRequest', () => {
  it('GETs with Basic credentials, the service and the challenge scope', () => {
    const r = tokenRequest(challenge, 'apps/web', { username: 'u', password: 'p' });
    expect(r.method).toBe('GET');
    const url = new URL(r.url);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      x: '1',
      service: 'registry.example.com',
      scope: 'repository:apps/web:pull,push',
    });
    expect(r.headers).toEqual({ authorization: `Basic ${Buffer.from('u:p').toString('base64')}` });
    expect(r.body).toBeUndefined();
  });

  it('asks anonymously for pull of the repository when there are no credentials and no scope', () => {
    const r = tokenRequest({ realm: 'https://auth.example.com/token' }, 'apps/web', undefined);
    expect(r).toEqual({
      method: 'GET',
      url: 'https://auth.example.com/token?scope=repository%3Aapps%2Fweb%3Apull',
      headers: {},
    });
  });

  // An identitytoken was read from the docker config but never sent: the token server was asked anonymously.
  it('POSTs the OAuth2 refresh_token grant with an identity token, nothing in the URL', () => {
    const r = tokenRequest(challenge, 'apps/web', { identityToken: 'refresh-me', username: '<token>' });
    expect(r.method).toBe('POST');
    expect(r.url).toBe('https://auth.example.com/token?x=1');
    expect(r.headers).toEqual({ 'content-type': 'application/x-www-form-urlencoded' });
    expect(Object.fromEntries(new URLSearchParams(r.body))).toEqual({
      grant_type: 'refresh_token',
      refresh_token: 'refresh-me',
      client_id: 'packagesync',
      service: 'registry.example.com',
      scope: 'repository:apps/web:pull,push',
    });
  });
});
