import { describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY, allowedHosts, checkAction, checkHost, cookieValue, isLoopback } from './security.ts';

const allowed = allowedHosts('127.0.0.1', 8080);
const token = 'a'.repeat(43);
const cookie = `other=1; packagesync-ui-csrf=${token}`;

describe('the UI server refuses what another page could send', () => {
  it('answers only to its own Host (a DNS-rebound name is refused)', () => {
    expect(checkHost('127.0.0.1:8080', allowed)).toBeUndefined();
    expect(checkHost('localhost:8080', allowed)).toBeUndefined();
    expect(checkHost('evil.example:8080', allowed)?.status).toBe(421);
    expect(checkHost(undefined, allowed)?.status).toBe(421);
  });

  it('takes an action only with the token in header and cookie and its own Origin', () => {
    expect(checkAction({ origin: 'http://127.0.0.1:8080', cookie, token }, token, allowed)).toBeUndefined();
    expect(checkAction({ cookie, token }, token, allowed)).toBeUndefined();
    expect(checkAction({ origin: 'http://evil.example', cookie, token }, token, allowed)?.status).toBe(403);
    expect(checkAction({ origin: 'null', cookie, token }, token, allowed)?.status).toBe(403);
    expect(checkAction({ origin: 'http://127.0.0.1:8080', cookie }, token, allowed)?.status).toBe(403);
    expect(checkAction({ token }, token, allowed)?.status).toBe(403);
    expect(checkAction({ cookie, token: 'b'.repeat(43) }, token, allowed)?.status).toBe(403);
  });

  it('allows no inline script or style', () => {
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline');
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-eval');
  });

  it('reads cookies and tells loopback addresses', () => {
    expect(cookieValue(cookie, 'packagesync-ui-csrf')).toBe(token);
    expect(cookieValue('x=1', 'packagesync-ui-csrf')).toBeUndefined();
    expect(isLoopback('127.0.0.1')).toBe(true);
    expect(isLoopback('::1')).toBe(true);
    expect(isLoopback('0.0.0.0')).toBe(false);
    expect(isLoopback('192.168.1.2')).toBe(false);
  });
});
