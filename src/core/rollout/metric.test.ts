import { describe, expect, it } from 'vitest';
import { judgeMetric } from './metric.ts';

const vector = (...values: string[]) => ({
  status: 'success',
  data: { resultType: 'vector', result: values.map((v, i) => ({ metric: { i: String(i) }, value: [1, v] })) },
});

describe('judgeMetric: a Prometheus instant-query answer against a threshold', () => {
  it.each([
    ['one sample above', vector('0.99'), '>', 0.95, true, '1 sample(s) > 0.95: 0.99'],
    ['one sample below', vector('0.5'), '>=', 0.95, false, '1 of 1 sample(s) not >= 0.95: 0.5'],
    ['every sample must hold', vector('1', '3', '0'), '<', 2, false, '1 of 3 sample(s) not < 2: 3'],
    [
      'a scalar',
      { status: 'success', data: { resultType: 'scalar', result: [1, '0'] } },
      '==',
      0,
      true,
      '1 sample(s) == 0: 0',
    ],
    ['no samples is no evidence', vector(), '<', 1, false, 'the query returned no samples'],
    ['NaN satisfies nothing', vector('NaN'), '!=', 1, true, '1 sample(s) != 1: NaN'],
    [
      'a range matrix is not an answer',
      { status: 'success', data: { resultType: 'matrix', result: [] } },
      '<',
      1,
      false,
      'the query returned a matrix result, not an instant vector or scalar',
    ],
    [
      'an error names its type, never its text',
      { status: 'error', errorType: 'bad_data', error: 'parse error near token=s3cr3t' },
      '<',
      1,
      false,
      'the query failed (bad_data)',
    ],
    ['not JSON of Prometheus', { hello: 'world' }, '<', 1, false, 'the answer is not a Prometheus query result'],
  ] as const)('%s', (_what, answer, op, threshold, passed, message) => {
    expect(judgeMetric(answer, op, threshold)).toEqual({ passed, message });
  });
});
