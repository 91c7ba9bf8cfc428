import { describe, expect, it } from 'vitest';
import { credentialOf, sessionCookie, tokenProblem } from './identity.ts';

const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';

describe('in-cluster UI: the credential a request carries', () => {
  it('takes a bearer token from the Authorization header before the session cookie', () => {
    expect(credentialOf({ authorization: `Bearer ${jwt}`, cookie: 'packagesync-ui-session=other' }, {})).toEqual({
      ok: true,
      credential: { token: jwt, from: 'header' },
    });
    expect(credentialOf({ cookie: `a=b; packagesync-ui-session=${jwt}` }, {})).toEqual({
      ok: true,
      credential: { token: jwt, from: 'cookie' },
    });
  });

  it('refuses a request with no token, another scheme, or a token no API server would issue', () => {
    expect(credentialOf({}, {})).toMatchObject({ ok: false, status: 401, message: /sign in/ });
    expect(credentialOf({ authorization: 'Basic dXNlcjpwYXNz' }, {})).toMatchObject({ ok: false, status: 401 });
    expect(credentialOf({ authorization: 'Bearer a"b' }, {})).toMatchObject({ ok: false, message: /characters/ });
    expect(tokenProblem('x'.repeat(20_000))).toMatch(/longer/);
    expect(tokenProblem(jwt)).toBeUndefined();
  });

  it("reads an auth proxy's user and groups, only beside a bearer header (never a cookie)", () => {
    const headers = { authorization: `Bearer ${jwt}` };
    expect(credentialOf(headers, { 'x-remote-user': ['alice'], 'x-remote-group': ['dev, ops', 'sre'] })).toEqual({
      ok: true,
      credential: { token: jwt, from: 'header', impersonate: { user: 'alice', groups: ['dev', 'ops', 'sre'] } },
    });
    expect(credentialOf({ cookie: `packagesync-ui-session=${jwt}` }, { 'x-remote-user': ['alice'] })).toMatchObject({
      ok: false,
      message: /auth proxy's own bearer token/,
    });
    expect(credentialOf(headers, { 'x-remote-user': ['alice', 'bob'] })).toMatchObject({ ok: false });
    expect(credentialOf(headers, { 'x-remote-group': ['admins'] })).toMatchObject({
      ok: false,
      message: /names a user/,
    });
  });

  it('keeps the session cookie from scripts, other sites and plain http', () => {
    expect(sessionCookie(jwt, 60)).toBe(
      `packagesync-ui-session=${jwt}; Path=/; HttpOnly; Secure; SameSite=Strict; Max-Age=60`,
    );
  });
});
