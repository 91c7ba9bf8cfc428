import { describe, expect, it } from 'vitest';
import { KubeApiError } from './client.ts';
import { interruptionMessage } from './failures.ts';

describe('interruptionMessage', () => {
  it('names the kind of fault, never the raw message', () => {
    const secretish = 'Secret "db" is invalid: data[password]: Invalid value: "hunter2"';
    expect(interruptionMessage(new KubeApiError(500, 'InternalError', secretish))).toBe(
      'the API server answered 500 InternalError',
    );
    const reset = Object.assign(new Error('connect ECONNRESET https://user:tok@10.0.0.1:6443/api?x=hunter2'), {
      code: 'ECONNRESET',
    });
    expect(interruptionMessage(reset)).toBe('no answer from the API server (ECONNRESET)');
    const wrapped = Object.assign(new TypeError('fetch failed hunter2'), { cause: { code: 'ECONNREFUSED' } });
    expect(interruptionMessage(wrapped)).toBe('no answer from the API server (ECONNREFUSED)');
    expect(interruptionMessage(new DOMException('signal timed out hunter2', 'TimeoutError'))).toBe(
      'a request to the API server timed out',
    );
    expect(interruptionMessage(new RangeError('hunter2'))).toBe(
      'an unexpected error (RangeError); see the controller log',
    );
    expect(interruptionMessage('hunter2')).toBe('an unexpected error (Error); see the controller log');
  });
});
