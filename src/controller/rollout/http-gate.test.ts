import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkHttpGate } from './http-gate.ts';

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/ok') return res.end('fine');
    if (req.url === '/redirect') {
      res.writeHead(302, { location: '/ok' });
      return res.end();
    }
    res.writeHead(503);
    res.end('secret-looking body');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('checkHttpGate against a real server on loopback', () => {
  it('passes on the expected status and names only the status code otherwise (no body, no URL)', async () => {
    expect(await checkHttpGate(`${base}/ok`, 200, { allowHttp: true })).toEqual({
      passed: true,
      message: 'GET answered 200',
    });
    const failed = await checkHttpGate(`${base}/down?token=abc`, 200, { allowHttp: true });
    expect(failed).toEqual({ passed: false, message: 'GET answered 503, expected 200' });
    expect(failed.message).not.toContain('abc');
  });

  it('does not follow redirects, refuses plain http unless allowed, and reports a refused connection by class', async () => {
    expect((await checkHttpGate(`${base}/redirect`, 200, { allowHttp: true })).passed).toBe(false);
    expect(await checkHttpGate(`${base}/ok`, 200, { allowHttp: false })).toMatchObject({
      passed: false,
      message: expect.stringContaining('http: is not allowed'),
    });
    const closed = await checkHttpGate('http://127.0.0.1:1/ok', 200, { allowHttp: true });
    expect(closed).toMatchObject({ passed: false });
    expect(closed.message).toMatch(/^GET failed \(/);
  });
});
