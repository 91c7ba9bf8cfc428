/**
 * An HTTP gate's check (docs/adr/0042): one GET, passed when it answers the expected status. The message names
 * the status code or the error class only: no response body, no URL (it may carry a token) reaches status.
 */
import type { GateResult } from '../../core/rollout/step.ts';

const TIMEOUT_MS = 10_000;

export async function checkHttpGate(
  url: string,
  expectStatus: number,
  opts: { allowHttp: boolean; signal?: AbortSignal },
): Promise<GateResult> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { passed: false, message: 'the gate’s url is not a URL' };
  }
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && opts.allowHttp))
    return { passed: false, message: `${parsed.protocol} is not allowed (https, or http with --allow-insecure-http)` };
  const signal = opts.signal
    ? AbortSignal.any([opts.signal, AbortSignal.timeout(TIMEOUT_MS)])
    : AbortSignal.timeout(TIMEOUT_MS);
  try {
    const res = await fetch(parsed, { method: 'GET', redirect: 'manual', signal });
    await res.body?.cancel();
    return res.status === expectStatus
      ? { passed: true, message: `GET answered ${res.status}` }
      : { passed: false, message: `GET answered ${res.status}, expected ${expectStatus}` };
  } catch (e) {
    const name = e instanceof Error ? e.name : 'Error';
    return { passed: false, message: name === 'TimeoutError' ? 'GET timed out' : `GET failed (${name})` };
  }
}
