/**
 * A metric gate's verdict on a Prometheus instant-query answer (docs/adr/0042): passed when the answer holds at
 * least one sample and every sample satisfies `<value> <operator> <threshold>`. Flagger and Argo Rollouts read a
 * query the same way (an empty answer is no evidence, so it does not pass). The message names numbers and the
 * answer's shape only: never the body (an error text may echo what the endpoint holds).
 */
import type { MetricOperator } from '../../api/packagesyncset.ts';

export interface MetricVerdict {
  passed: boolean;
  message: string;
}

const SHOWN = 3;

export function compare(value: number, operator: MetricOperator, threshold: number): boolean {
  switch (operator) {
    case '<':
      return value < threshold;
    case '<=':
      return value <= threshold;
    case '>':
      return value > threshold;
    case '>=':
      return value >= threshold;
    case '==':
      return value === threshold;
    case '!=':
      return value !== threshold;
  }
}

/** The sample values of a `/api/v1/query` JSON answer; a string naming the problem when it is not one. */
export function sampleValues(answer: unknown): number[] | string {
  const a = answer as { status?: unknown; errorType?: unknown; data?: { resultType?: unknown; result?: unknown } };
  if (typeof a !== 'object' || a === null) return 'the answer is not a Prometheus query result';
  if (a.status === 'error')
    return `the query failed (${typeof a.errorType === 'string' ? a.errorType.slice(0, 40) : 'error'})`;
  if (a.status !== 'success' || typeof a.data !== 'object' || a.data === null)
    return 'the answer is not a Prometheus query result';
  const { resultType, result } = a.data;
  const num = (pair: unknown) => (Array.isArray(pair) && typeof pair[1] === 'string' ? Number(pair[1]) : Number.NaN);
  if (resultType === 'scalar') return [num(result)];
  if (resultType === 'vector' && Array.isArray(result)) return result.map((s) => num((s as { value?: unknown }).value));
  return `the query returned a ${typeof resultType === 'string' ? resultType.slice(0, 20) : 'non-'} result, not an instant vector or scalar`;
}

export function judgeMetric(answer: unknown, operator: MetricOperator, threshold: number): MetricVerdict {
  const values = sampleValues(answer);
  if (typeof values === 'string') return { passed: false, message: values };
  if (values.length === 0) return { passed: false, message: 'the query returned no samples' };
  const missing = values.filter((v) => !compare(v, operator, threshold));
  const shown = (vs: number[]) => vs.slice(0, SHOWN).join(', ') + (vs.length > SHOWN ? ', …' : '');
  return missing.length === 0
    ? { passed: true, message: `${values.length} sample(s) ${operator} ${threshold}: ${shown(values)}` }
    : {
        passed: false,
        message: `${missing.length} of ${values.length} sample(s) not ${operator} ${threshold}: ${shown(missing)}`,
      };
}
