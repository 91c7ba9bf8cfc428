/**
 * A metric gate's check (docs/adr/0042): one PromQL instant query against a Prometheus-compatible API, judged
 * by core/rollout/metric.ts. The message names the HTTP status, the error class or the numbers only: never the
 * URL (it may carry a token), the bearer token, or the response body.
 */
import { judgeMetric } from '../../core/rollout/metric.ts';
import type { GateResult } from '../../core/rollout/gates.ts';
import type { MetricOperator } from '../../api/packagesyncset.ts';

const TIMEOUT_MS = 10_000;
/** A Prometheus answer is small; a larger one is not read whole (and is not a gate's answer). */
const MAX_ANSWER_BYTES = 1 << 20;

export interface MetricQuery {
  address: string;
  query: string;
  operator: MetricOperator;
  threshold: number;
}

export async function checkMetricGate(
  m: MetricQuery,
  opts: { allowHttp: boolean; token?: string; signal?: AbortSignal },
): Promise<GateResult> {
  let url: URL;
  try {
    url = new URL(m.address.replace(/\/+$/, '') + '/api/v1/query');
  } catch {
    return { passed: false, message: 'the gate’s address is not a URL' };
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && opts.allowHttp))
    return { passed: false, message: `${url.protocol} is not allowed (https, or http with --allow-insecure-http)` };
  url.searchParams.set('query', m.query);
  const signal = opts.signal
    ? AbortSignal.any([opts.signal, AbortSignal.timeout(TIMEOUT_MS)])
    : AbortSignal.timeout(TIMEOUT_MS);
  let status: number;
  let text: string;
  try {
    const res = await fetch(url, {
      method: 'GET',
      redirect: 'manual',
      signal,
      headers: { accept: 'application/json', ...(opts.token ? { authorization: `Bearer ${opts.token.trim()}` } : {}) },
    });
    status = res.status;
    const declared = Number(res.headers.get('content-length') ?? '0');
    if (declared > MAX_ANSWER_BYTES) {
      await res.body?.cancel();
      return { passed: false, message: `the query answered more than ${MAX_ANSWER_BYTES} bytes` };
    }
    text = await res.text();
  } catch (e) {
    const name = e instanceof Error ? e.name : 'Error';
    return { passed: false, message: name === 'TimeoutError' ? 'the query timed out' : `the query failed (${name})` };
  }
  if (text.length > MAX_ANSWER_BYTES)
    return { passed: false, message: `the query answered more than ${MAX_ANSWER_BYTES} bytes` };
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return { passed: false, message: `the query answered HTTP ${status}, not a Prometheus query result` };
  }
  // Prometheus answers a bad query with 400/422 and {status: error, errorType}: judgeMetric names the type
  const verdict = judgeMetric(answer, m.operator, m.threshold);
  return status === 200 || !verdict.passed ? verdict : { passed: false, message: `the query answered HTTP ${status}` };
}
