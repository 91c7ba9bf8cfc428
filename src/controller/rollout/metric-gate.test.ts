import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkMetricGate } from './metric-gate.ts';

let server: Server;
let base: string;
const seen: { url?: string; authorization?: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url, authorization: req.headers.authorization });
    const q = new URL(req.url!, 'http://x').searchParams.get('query');
    if (q === 'good')
      return res.end(
        JSON.stringify({
          status: 'success',
          data: { resultType: 'vector', result: [{ metric: {}, value: [1, '0.99'] }] },
        }),
      );
    if (q === 'bad(') {
      res.writeHead(400, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error: Bearer s3cr3t' }));
    }
    res.writeHead(502);
    res.end('<html>proxy error, upstream token=s3cr3t</html>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('checkMetricGate against a real HTTP server on loopback', () => {
  it('sends the query and the bearer token; judges the samples', async () => {
    const r = await checkMetricGate(
      { address: `${base}/`, query: 'good', operator: '>=', threshold: 0.95 },
      { allowHttp: true, token: 's3cr3t\n' },
    );
    expect(r).toEqual({ passed: true, message: '1 sample(s) >= 0.95: 0.99' });
    expect(seen.at(-1)).toEqual({ url: '/api/v1/query?query=good', authorization: 'Bearer s3cr3t' });
  });

  it('never puts the token, the URL or a response body in its message', async () => {
    for (const query of ['bad(', 'other']) {
      const r = await checkMetricGate(
        { address: `${base}/?token=s3cr3t`, query, operator: '<', threshold: 1 },
        { allowHttp: true, token: 's3cr3t' },
      );
      expect(r.passed).toBe(false);
      expect(r.message).not.toMatch(/s3cr3t|127\.0\.0\.1|html|parse error/);
    }
    const bad = await checkMetricGate(
      { address: base, query: 'bad(', operator: '<', threshold: 1 },
      { allowHttp: true },
    );
    expect(bad.message).toBe('the query failed (bad_data)');
    const proxy = await checkMetricGate(
      { address: base, query: 'x', operator: '<', threshold: 1 },
      { allowHttp: true },
    );
    expect(proxy.message).toBe('the query answered HTTP 502, not a Prometheus query result');
  });

  it('refuses plain http unless allowed, and an unreachable endpoint names only the error class', async () => {
    expect(
      await checkMetricGate({ address: base, query: 'good', operator: '>', threshold: 0 }, { allowHttp: false }),
    ).toEqual({ passed: false, message: 'http: is not allowed (https, or http with --allow-insecure-http)' });
    const closed = await checkMetricGate(
      { address: 'http://127.0.0.1:9', query: 'good', operator: '>', threshold: 0 },
      { allowHttp: true },
    );
    expect(closed).toEqual({ passed: false, message: 'the query failed (TypeError)' });
  });
});
